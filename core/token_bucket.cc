#include "core/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace webhookd {

TokenBucket::TokenBucket(double rate) : rate_(std::max(0.0, rate)), tokens_(rate_) {}

TokenBucket::TokenBucket(double rate, double tokens, std::optional<Timestamp> refilled_at)
    : rate_(std::max(0.0, rate)),
      tokens_(std::clamp(tokens, 0.0, rate_)),
      refilled_at_(refilled_at) {}

double TokenBucket::Available(Timestamp now) const {
  if (!refilled_at_) return rate_;
  const double elapsed = std::max(0.0, Seconds(now - *refilled_at_));
  return std::min(rate_, tokens_ + rate_ * elapsed);
}

int TokenBucket::Take(Timestamp now, int want) {
  tokens_ = Available(now);
  refilled_at_ = std::max(now, refilled_at_.value_or(now));
  const int taken = std::clamp(static_cast<int>(std::floor(tokens_)), 0, std::max(0, want));
  tokens_ -= taken;
  return taken;
}

}  // namespace webhookd
