#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "base/metrics.h"
#include "store/erasure_store.h"
#include "store/retention_store.h"

namespace webhookd {

// Retention (docs/retention.md): every `every`, a round
//   - carries out the subjects' erasures still running (docs/privacy.md), which Wake()
//     starts at once;
//   - creates the history's partitions `days_ahead` days ahead;
//   - drops the days of the history older than `retention` (up to `max_days` a round),
//     what of them is unfinished carried to the kept partitions;
//   - deletes the kept events older than `retention` and finished, in batches of `batch`
//     events, each its own short transaction.
// So ingest and delivery never wait on it for long. One thread, made by Start(); Stop()
// (or the destructor) ends it. Every server process runs one; the store lets one of them
// drop and purge at a time.
class Purger {
 public:
  struct Options {
    Duration retention;
    Duration every = std::chrono::seconds(5);
    int batch = 1000;
    int days_ahead = 7;
    int max_days = 7;
    // When days end, against the retention; null: the system's.
    Clock* clock = nullptr;
  };

  // Borrows `store`, `metrics` and `erasures` (each but `store` may be null); each must
  // outlive the Purger.
  Purger(RetentionStore& store, Options options, Metrics* metrics,
         ErasureStore* erasures = nullptr);
  ~Purger();

  void Start();
  void Stop();
  // Starts a round now (an erasure was asked for); from any thread.
  void Wake();

  // Creates the days ahead and drops the aged ones. Returns the days dropped.
  int DropDaysOnce();
  // The kept events' batches until one comes back short. Returns the events purged.
  int64_t PurgeOnce();
  // Carries out the erasures still running, `batch` events at a time, at most
  // kErasureBatches batches. Returns what it did; with some still running, the next round
  // starts without waiting.
  ErasureRound EraseOnce();
  static constexpr int kErasureBatches = 100;

 private:
  void Loop();

  RetentionStore& store_;
  Options options_;
  Metrics* metrics_;
  ErasureStore* erasures_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  bool woken_ = false;     // guarded by mu_
  SystemClock system_clock_;
  std::thread thread_;
};

}  // namespace webhookd
