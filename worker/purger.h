#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "base/metrics.h"
#include "store/retention_store.h"

namespace webhookd {

// Retention: every `every`, deletes what is older than `retention` and finished, in
// batches of `batch` events, each its own short transaction, so ingest and delivery never
// wait on it for long. One thread, made by Start(); Stop() (or the destructor) ends it.
// Every server process runs one; the store lets one of them purge at a time.
class Purger {
 public:
  struct Options {
    Duration retention;
    Duration every = std::chrono::seconds(5);
    int batch = 1000;
  };

  // Borrows `store` and `metrics` (which may be null); both must outlive the Purger.
  Purger(RetentionStore& store, Options options, Metrics* metrics);
  ~Purger();

  void Start();
  void Stop();

  // One round: batches until one comes back short. Returns the events purged.
  int64_t PurgeOnce();

 private:
  void Loop();

  RetentionStore& store_;
  Options options_;
  Metrics* metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace webhookd
