#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "base/metrics.h"
#include "store/recovery_store.h"

namespace webhookd {

// Carries out destinations' recoveries (docs/operations.md "An endpoint was down"): a page
// of each running recovery in turn, as long as some can take one at once; then, every
// `every` (or when Wake() says one was asked for), again. A recovery whose destination has
// RecoveryPace::max_pending unfinished deliveries waits for the next round, so it goes
// at the pace the destination's deliveries go. One thread, made by Start(); Stop() (or the
// destructor) ends it. Every server process runs one; the store lets one of them carry out
// a recovery's page at a time.
class Recoverer {
 public:
  struct Options {
    Duration every = std::chrono::seconds(1);
    RecoveryPace pace;
  };

  // Borrows `store` and `metrics` (which may be null); each must outlive the Recoverer.
  Recoverer(RecoveryStore& store, Options options, Metrics* metrics);
  ~Recoverer();

  void Start();
  void Stop();
  // Starts a round now (a recovery was asked for); from any thread.
  void Wake();

  // At most kPages pages of the running recoveries. Returns what it did; `more` when some
  // could take a page at once.
  RecoveryRound RecoverOnce();
  static constexpr int kPages = 20;

 private:
  void Loop();

  RecoveryStore& store_;
  Options options_;
  Metrics* metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  bool woken_ = false;     // guarded by mu_
  std::thread thread_;
};

}  // namespace webhookd
