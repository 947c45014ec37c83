#include "server/auth_limiter.h"

#include <algorithm>
#include <iterator>

#include "server/client_address.h"

namespace webhookd {

FailedAuthLimiter::FailedAuthLimiter(Clock& clock, int per_minute, size_t max_clients)
    : clock_(clock), per_minute_(per_minute), max_clients_(std::max<size_t>(1, max_clients)) {}

FailedAuthLimiter::Bucket& FailedAuthLimiter::Refilled(const std::string& client, Timestamp now) {
  const int64_t capacity = per_minute_ * kToken;
  auto found = index_.find(client);
  if (found == index_.end()) {
    if (index_.size() >= max_clients_) {
      index_.erase(recency_.front().client);
      recency_.pop_front();
    }
    recency_.push_back(Bucket{client, capacity, now});
    found = index_.emplace(client, std::prev(recency_.end())).first;
  } else {
    recency_.splice(recency_.end(), recency_, found->second);
  }
  Bucket& b = *found->second;
  b.units = std::min(capacity, b.units + per_minute_ * (now - b.at).count());
  b.at = now;
  return b;
}

int FailedAuthLimiter::RetryAfter(const std::string& address) {
  if (per_minute_ <= 0) return 0;
  const std::string client = ClientOf(address);
  std::lock_guard lock(mu_);
  if (!index_.contains(client)) return 0;
  const Bucket& b = Refilled(client, clock_.Now());
  if (b.units >= kToken) return 0;
  const int64_t wait_us = (kToken - b.units + per_minute_ - 1) / per_minute_;
  return static_cast<int>((wait_us + 999'999) / 1'000'000);
}

void FailedAuthLimiter::Failed(const std::string& address) {
  if (per_minute_ <= 0) return;
  const std::string client = ClientOf(address);
  std::lock_guard lock(mu_);
  Bucket& b = Refilled(client, clock_.Now());
  b.units = std::max<int64_t>(0, b.units - kToken);
}

}  // namespace webhookd
