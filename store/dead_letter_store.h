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
  // Sets it aside without a replay (it no longer holds a fifo key); kNotFound, or
  // kConflict when already replayed or dismissed. Returns it as it is now.
  virtual Result<DeadLetter> DismissDeadLetter(int64_t id, const Scope& scope) = 0;
  // Replays the matching dead letters not yet replayed, in chunks of their own
  // transactions, at most `max` of them (nullopt: all). `more` when it stopped at `max`
  // with some perhaps left: calling again goes on where it stopped.
  struct BulkReplay {
    int64_t replayed = 0;
    bool more = false;
  };
  virtual Result<BulkReplay> ReplayDeadLetters(const DeadLetterFilter& filter, const Scope& scope,
                                               std::optional<int64_t> max) = 0;
};
}  // namespace webhookd
