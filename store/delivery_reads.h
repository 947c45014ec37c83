#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/delivery.h"
#include "core/page.h"
#include "core/scope.h"

namespace webhookd {

// Deliveries and their attempts, read-only; nothing outside the call's Scope is found.
// Thread-safe; nothing here throws.
class DeliveryReads {
 public:
  virtual ~DeliveryReads() = default;
  virtual Result<Delivery> GetDelivery(int64_t id, const Scope& scope) = 0;
  virtual Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter, const Page& page,
                                                   const Scope& scope) = 0;
  // Oldest first, one page; next_before_id of the listing is the attempt number to go on
  // after. kNotFound when the delivery is unknown or outside `scope`.
  virtual Result<Listing<Attempt>> ListAttempts(int64_t delivery_id, const AttemptPage& page,
                                                const Scope& scope) = 0;
};
}  // namespace webhookd
