#include "net/lookup_shares.h"

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

Result<std::vector<IpAddress>> TenantResolver::Resolve(const std::string& host) {
  std::optional<LookupShares::Slot> slot = shares_->Take(tenant_);
  if (!slot) {
    return Fail(ErrorKind::kUnavailable,
                "too many name lookups in progress for this tenant; retry shortly");
  }
  // The slot points into the shares, which the lookup's thread may outlive the
  // transport's copy of: the shares go with it, destroyed after the slot.
  struct Held {
    std::shared_ptr<LookupShares> shares;
    LookupShares::Slot slot;
  };
  return inner_.ResolveHolding(host, std::make_shared<Held>(Held{shares_, std::move(*slot)}));
}

}  // namespace webhookd
