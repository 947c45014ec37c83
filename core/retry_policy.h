#pragma once

#include <optional>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "core/outcome.h"

namespace webhookd {

// What happened on one attempt, as far as the schedule cares.
struct AttemptResult {
  Outcome outcome = Outcome::kRetryable;
  std::optional<int> status_code;       // nullopt for a transport error
  std::optional<Duration> retry_after;  // parsed Retry-After, if the response had one
};

// The delivery's next state after an attempt.
struct Decision {
  enum class Kind { kSucceed, kRetry, kDeadLetter } kind = Kind::kRetry;
  Duration wait{0};                                        // kRetry: from now to the next attempt
  DeadLetterReason reason = DeadLetterReason::kExhausted;  // kDeadLetter
  bool disable_destination = false;                        // a 410 Gone
};

// The fixed jittered schedule of docs/api.md. Pure: time and chance come in as arguments.
class RetryPolicy {
 public:
  static constexpr Duration kMaxRetryAfter = std::chrono::hours(24);

  RetryPolicy(std::vector<Duration> schedule, double jitter);

  // Attempts a delivery gets in one cycle: the schedule's entries + 1.
  int max_attempts() const { return static_cast<int>(schedule_.size()) + 1; }

  // Wait k (0-based) of the schedule, scaled by a uniform factor in [1 - jitter, 1 + jitter].
  Duration Wait(int k, Random& random) const;

  // After attempt number `attempt` (1-based, within the current cycle) ended in `result`.
  // Retry-After on a 429 or 503 is never shortened: it is scaled by [1.0, 1.2] and capped
  // at 24 h; a 429 without it waits twice the scheduled wait.
  Decision Next(int attempt, const AttemptResult& result, Random& random) const;

 private:
  std::vector<Duration> schedule_;
  double jitter_;
};

}  // namespace webhookd
