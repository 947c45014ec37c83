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

// Dead letters and their replay. Thread-safe; nothing here throws.
class DeadLetterStore {
 public:
  virtual ~DeadLetterStore() = default;
  virtual Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter,
                                                      const Page& page) = 0;
  // kNotFound, or kConflict when already replayed or the destination is deleted.
  virtual Result<int64_t> ReplayDeadLetter(int64_t id) = 0;  // returns the delivery id
  virtual Result<int64_t> ReplayDeadLetters(const DeadLetterFilter& filter) = 0;
};
}  // namespace webhookd
