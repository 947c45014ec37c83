#pragma once

#include <chrono>
#include <deque>
#include <mutex>

#include "base/clock.h"

namespace webhookd::client {

struct RetryBudgetOptions {
  double ratio = 0.2;                          // retries per request in the window
  Duration window = std::chrono::seconds(10);  // how far back requests are counted
  int min_requests = 10;                       // below this the budget does not apply
};

// Caps retries at a share of the recent requests, so that a batch against a struggling
// API sends at most about (1 + ratio) times its own load instead of up to max_attempts
// times it. "Requests" are the first attempts of events; retries are counted apart.
//
// While fewer than min_requests requests fall in the window every retry is allowed (a
// single `webhookd send` keeps all its attempts); after that a retry is allowed when,
// with it, the retries in the window stay within ratio × requests. Thread-safe.
class RetryBudget {
 public:
  // Borrows `clock`, which must outlive the budget.
  explicit RetryBudget(Clock& clock, RetryBudgetOptions options = {})
      : clock_(clock), options_(options) {}

  // Counts the first attempt of an event.
  void RecordRequest();

  // Whether a retry may be sent now; when it may, it is counted.
  bool TryRetry();

 private:
  void Expire(Timestamp now);

  Clock& clock_;
  const RetryBudgetOptions options_;
  std::mutex mu_;
  std::deque<Timestamp> requests_;  // oldest first
  std::deque<Timestamp> retries_;
};

}  // namespace webhookd::client
