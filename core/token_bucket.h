#pragma once

#include <optional>

#include "base/clock.h"

namespace webhookd {

// A destination's `rate_limit`: at most `rate` attempts start per second, all workers
// together. The bucket holds at most `rate` tokens and refills at `rate` per second, so
// any window of T seconds sees at most rate x (T + 1) starts: the full bucket at its
// start plus T seconds of refill.
class TokenBucket {
 public:
  // Full, as a destination that has sent nothing yet.
  explicit TokenBucket(double rate);
  TokenBucket(double rate, double tokens, std::optional<Timestamp> refilled_at);

  // Takes up to `want` whole tokens at `now` and returns how many it took. `now` never
  // going backwards is assumed; an earlier `now` refills nothing.
  int Take(Timestamp now, int want);

  // The tokens held after refilling to `now` (without taking any).
  double Available(Timestamp now) const;

  double tokens() const { return tokens_; }
  std::optional<Timestamp> refilled_at() const { return refilled_at_; }

 private:
  double rate_;
  double tokens_;
  std::optional<Timestamp> refilled_at_;  // nullopt: never used, full
};

}  // namespace webhookd
