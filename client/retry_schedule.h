#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "base/clock.h"
#include "base/random.h"

namespace webhookd::client {

// What a response status means to a publisher.
enum class StatusClass {
  kAccepted,    // 2xx: the event is stored
  kRetry,       // 408, 409 (the key's first request is still being written), 429, 5xx
  kRefused,     // any other 4xx: the same request would be refused again
  kUnexpected,  // 1xx, 3xx: not an answer the API gives; not retried
};

StatusClass ClassifyStatus(int status);

struct RetryOptions {
  int max_attempts = 6;  // requests per event, the first included
  Duration base = std::chrono::milliseconds(200);
  Duration max_wait = std::chrono::seconds(10);
};

// The retry policy of a publisher, pure: chance comes in as an argument.
//
// Attempts are numbered from 1. After attempt k fails in a retryable way the publisher
// waits uniform[0, min(max_wait, base × 2^k)) ("full jitter", so that clients that failed
// together do not come back together), but never less than the server's Retry-After.
// A Retry-After longer than max_wait is not waited for: the event gives up at once, as
// max_wait is the longest a user agreed to wait between two attempts.
class RetrySchedule {
 public:
  explicit RetrySchedule(RetryOptions options = {}) : options_(options) {}

  const RetryOptions& options() const { return options_; }

  // The upper bound of the jittered wait after attempt `attempt`.
  Duration Ceiling(int attempt) const;

  // The jittered wait after attempt `attempt`, Retry-After aside.
  Duration Jittered(int attempt, Random& random) const;

  // The wait before the next attempt after attempt `attempt` failed in a retryable way,
  // given the response's Retry-After header if it had one (delta-seconds or an HTTP-date,
  // read relative to `now`; a value that is neither is ignored). nullopt when there is to
  // be no next attempt: `attempt` was the last one, or Retry-After exceeds max_wait.
  std::optional<Duration> WaitAfter(int attempt, std::optional<std::string_view> retry_after,
                                    Timestamp now, Random& random) const;

 private:
  RetryOptions options_;
};

}  // namespace webhookd::client
