#include "server/auth_limiter.h"

#include <algorithm>

namespace webhookd {

FailedAuthLimiter::FailedAuthLimiter(Clock& clock, int per_minute, size_t max_addresses)
    : clock_(clock), per_minute_(per_minute), max_addresses_(max_addresses) {}

FailedAuthLimiter::Bucket& FailedAuthLimiter::Refilled(const std::string& address, Timestamp now) {
  const int64_t capacity = per_minute_ * kToken;
  const auto refill = [&](const Bucket& b) {
    return std::min(capacity, b.units + per_minute_ * (now - b.at).count());
  };
  auto it = buckets_.find(address);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_addresses_) {
      // Full buckets tell nothing: drop them; if every address is still failing, start
      // over rather than grow without bound.
      std::erase_if(buckets_, [&](const auto& entry) { return refill(entry.second) >= capacity; });
      if (buckets_.size() >= max_addresses_) buckets_.clear();
    }
    it = buckets_.emplace(address, Bucket{capacity, now}).first;
  }
  Bucket& b = it->second;
  b.units = refill(b);
  b.at = now;
  return b;
}

int FailedAuthLimiter::RetryAfter(const std::string& address) {
  if (per_minute_ <= 0) return 0;
  std::lock_guard lock(mu_);
  if (!buckets_.contains(address)) return 0;
  const Bucket& b = Refilled(address, clock_.Now());
  if (b.units >= kToken) return 0;
  const int64_t wait_us = (kToken - b.units + per_minute_ - 1) / per_minute_;
  return static_cast<int>((wait_us + 999'999) / 1'000'000);
}

void FailedAuthLimiter::Failed(const std::string& address) {
  if (per_minute_ <= 0) return;
  std::lock_guard lock(mu_);
  Bucket& b = Refilled(address, clock_.Now());
  b.units = std::max<int64_t>(0, b.units - kToken);
}

}  // namespace webhookd
