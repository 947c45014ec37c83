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

// Destinations; deleted ones are kNotFound everywhere. Thread-safe; nothing here throws.
class DestinationStore {
 public:
  virtual ~DestinationStore() = default;
  virtual Result<Destination> CreateDestination(const Destination& d) = 0;
  virtual Result<Destination> GetDestination(int64_t id) = 0;
  virtual Result<Listing<Destination>> ListDestinations(const Page& page) = 0;
  // Applies the given fields; the caller has validated them.
  virtual Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields) = 0;
  // Soft-deletes and cancels its unfinished deliveries, in one transaction.
  virtual Result<void> DeleteDestination(int64_t id) = 0;
};
}  // namespace webhookd
