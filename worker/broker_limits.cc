#include "worker/broker_limits.h"

namespace webhookd {

std::optional<BrokerLimits::Full> BrokerLimits::Take(const std::string& tenant) {
  std::lock_guard lock(mu_);
  int& taken = taken_[tenant];
  if (taken >= per_tenant_) {
    if (taken == 0) taken_.erase(tenant);
    return Full{true, "broker connections: the tenant's " + std::to_string(per_tenant_) +
                          " connections are all in use"};
  }
  if (open_ >= total_) {
    if (taken == 0) taken_.erase(tenant);
    return Full{false, "broker connections: the worker's " + std::to_string(total_) +
                           " connections (WEBHOOKD_MAX_BROKER_CONNECTIONS) are all in use"};
  }
  ++taken;
  ++open_;
  return std::nullopt;
}

void BrokerLimits::Release(const std::string& tenant) {
  std::lock_guard lock(mu_);
  auto it = taken_.find(tenant);
  if (it == taken_.end()) return;
  --open_;
  if (--it->second <= 0) taken_.erase(it);
}

int BrokerLimits::open() const {
  std::lock_guard lock(mu_);
  return open_;
}

int BrokerLimits::open(const std::string& tenant) const {
  std::lock_guard lock(mu_);
  auto it = taken_.find(tenant);
  return it == taken_.end() ? 0 : it->second;
}

}  // namespace webhookd
