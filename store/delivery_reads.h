#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/model.h"

namespace webhookd {

// Deliveries and their attempts, read-only. Thread-safe; nothing here throws.
class DeliveryReads {
 public:
  virtual ~DeliveryReads() = default;
  virtual Result<Delivery> GetDelivery(int64_t id) = 0;
  virtual Result<Listing<Delivery>> ListDeliveries(const DeliveryFilter& filter,
                                                   const Page& page) = 0;
  virtual Result<std::vector<Attempt>> ListAttempts(int64_t delivery_id) = 0;  // oldest first
};
}  // namespace webhookd
