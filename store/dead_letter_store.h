#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/dead_letter.h"
#include "core/page.h"
#include "core/scope.h"

namespace webhookd {

// Dead letters and their replay; nothing outside the call's Scope is found or replayed.
// Thread-safe; nothing here throws.
class DeadLetterStore {
 public:
  virtual ~DeadLetterStore() = default;
  virtual Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter,
                                                      const Page& page, const Scope& scope) = 0;
  // kNotFound, or kConflict when already replayed or the destination is deleted. Returns
  // the delivery id.
  virtual Result<int64_t> ReplayDeadLetter(int64_t id, const Scope& scope) = 0;
  virtual Result<int64_t> ReplayDeadLetters(const DeadLetterFilter& filter, const Scope& scope) = 0;
};
}  // namespace webhookd
