#pragma once

#include <cstdint>
#include <optional>

#include "base/clock.h"
#include "base/result.h"
#include "core/recovery.h"
#include "core/scope.h"

namespace webhookd {

// How fast recoveries go: a page of at most `page` dead letters at a time, and none while
// the destination has `max_pending` unfinished deliveries (so a recovery of a million
// fills the queue no faster than the destination empties it).
struct RecoveryPace {
  int page = 500;
  int max_pending = 1000;
};

// What a round of recovering did.
struct RecoveryRound {
  int64_t replayed = 0;
  int finished = 0;  // recoveries done in it
  int running = 0;   // recoveries still running after it
  // Some of those may take a page at once; the others wait for their destinations'
  // queues to drain, or are being carried out by another process.
  bool more = false;
};

// Recoveries of destinations' dead letters (docs/operations.md). Thread-safe; nothing here
// throws.
class RecoveryStore {
 public:
  // How many recoveries of one destination may run at once.
  static constexpr int kMaxRunning = 10;

  virtual ~RecoveryStore() = default;
  // Records a running recovery of `destination_id`'s dead letters dead-lettered in
  // [since, until), `until` being at most now (nullopt: now). kNotFound for a destination
  // outside the scope, as for an unknown one; kInvalid when `since` is not before that
  // `until`; kTooMany when kMaxRunning of the destination's recoveries are running.
  virtual Result<Recovery> RequestRecovery(int64_t destination_id, Timestamp since,
                                           std::optional<Timestamp> until, const Scope& scope) = 0;
  // kNotFound outside the scope, as for an unknown id.
  virtual Result<Recovery> GetRecovery(int64_t id, const Scope& scope) = 0;
  // Carries out running recoveries a page each in turn (oldest first), each page one
  // transaction that replays its dead letters and moves the recovery's cursor past them,
  // at most `max_pages` pages in all. A recovery another process is carrying out is
  // skipped.
  virtual Result<RecoveryRound> RunRecoveries(const RecoveryPace& pace, int max_pages) = 0;
};

}  // namespace webhookd
