#include "client/retry_budget.h"

namespace webhookd::client {

void RetryBudget::RecordRequest() {
  const Timestamp now = clock_.Now();
  std::lock_guard lock(mu_);
  Expire(now);
  requests_.push_back(now);
}

bool RetryBudget::TryRetry() {
  const Timestamp now = clock_.Now();
  std::lock_guard lock(mu_);
  Expire(now);
  const auto requests = static_cast<double>(requests_.size());
  const bool warming_up = requests_.size() < static_cast<size_t>(options_.min_requests);
  if (!warming_up && static_cast<double>(retries_.size() + 1) > options_.ratio * requests)
    return false;
  retries_.push_back(now);
  return true;
}

void RetryBudget::Expire(Timestamp now) {
  // Threads read the clock before taking the lock, so the deques are only nearly in
  // order; an entry a few microseconds out of place expires a little late, which is fine.
  const Timestamp oldest = now - options_.window;
  while (!requests_.empty() && requests_.front() <= oldest) requests_.pop_front();
  while (!retries_.empty() && retries_.front() <= oldest) retries_.pop_front();
}

}  // namespace webhookd::client
