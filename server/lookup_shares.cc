#include "server/lookup_shares.h"

namespace webhookd {

std::optional<LookupShares::Slot> LookupShares::Take(const std::string& tenant) {
  std::lock_guard lock(mu_);
  int& taken = taken_[tenant];
  if (taken >= per_tenant_) return std::nullopt;
  ++taken;
  return std::optional<Slot>(std::in_place, *this, tenant);
}

void LookupShares::Release(const std::string& tenant) {
  std::lock_guard lock(mu_);
  if (auto it = taken_.find(tenant); it != taken_.end() && --it->second <= 0) taken_.erase(it);
}

}  // namespace webhookd
