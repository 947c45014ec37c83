#include "client/retry_schedule.h"

#include <algorithm>

#include "core/retry_after.h"

namespace webhookd::client {

StatusClass ClassifyStatus(int status) {
  if (status >= 200 && status < 300) return StatusClass::kAccepted;
  if (status == 408 || status == 409 || status == 429 || (status >= 500 && status < 600))
    return StatusClass::kRetry;
  if (status >= 400 && status < 500) return StatusClass::kRefused;
  return StatusClass::kUnexpected;
}

Duration RetrySchedule::Ceiling(int attempt) const {
  // Doubling step by step and stopping at max_wait cannot overflow, whatever `attempt` is.
  Duration ceiling = options_.base;
  for (int i = 0; i < attempt && ceiling < options_.max_wait; ++i) ceiling *= 2;
  return std::min(ceiling, options_.max_wait);
}

Duration RetrySchedule::Jittered(int attempt, Random& random) const {
  const double unit = random.Unit();
  return Duration(static_cast<Duration::rep>(static_cast<double>(Ceiling(attempt).count()) * unit));
}

std::optional<Duration> RetrySchedule::WaitAfter(int attempt,
                                                 std::optional<std::string_view> retry_after,
                                                 Timestamp now, Random& random) const {
  if (attempt >= options_.max_attempts) return std::nullopt;
  const Duration jittered = Jittered(attempt, random);
  if (!retry_after) return jittered;
  const std::optional<Duration> asked = ParseRetryAfter(*retry_after, now);
  if (!asked) return jittered;
  if (*asked > options_.max_wait) return std::nullopt;
  return std::max(jittered, *asked);
}

}  // namespace webhookd::client
