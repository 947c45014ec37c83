#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/resolver.h"

namespace webhookd {

// The name lookups one tenant may have in progress at once. The resolver's slots (64)
// are webhookd's, shared by everyone: without a share per tenant, one tenant's
// destinations on names that never answer would hold them all and every other tenant's
// URL check would fail. A tenant over its share is told to retry (503), as is anyone
// when the slots are all taken: it is webhookd's capacity, not the request, at fault.
class LookupShares {
 public:
  explicit LookupShares(int per_tenant) : per_tenant_(per_tenant) {}

  // A slot held until destroyed.
  class Slot {
   public:
    Slot(LookupShares& shares, std::string tenant) : shares_(&shares), tenant_(std::move(tenant)) {}
    Slot(Slot&& other) noexcept
        : shares_(std::exchange(other.shares_, nullptr)), tenant_(std::move(other.tenant_)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        if (shares_ != nullptr) shares_->Release(tenant_);
        shares_ = std::exchange(other.shares_, nullptr);
        tenant_ = std::move(other.tenant_);
      }
      return *this;
    }
    ~Slot() {
      if (shares_ != nullptr) shares_->Release(tenant_);
    }

   private:
    LookupShares* shares_;
    std::string tenant_;
  };

  // A slot for `tenant` ("" for keys of no tenant), or nullopt when it holds its share.
  std::optional<Slot> Take(const std::string& tenant);

 private:
  void Release(const std::string& tenant);

  const int per_tenant_;
  std::mutex mu_;
  std::unordered_map<std::string, int> taken_;  // guarded by mu_; no entry: none taken
};

// A resolver whose every lookup takes `tenant`'s slot of `shares`, held until the lookup
// itself ends, after its deadline if it does not answer (Resolver::ResolveHolding): what
// the broker transports resolve with, so one tenant's names on a name server that never
// answers hold its own share and leave the rest of the lookups to everyone else. A tenant
// over its share gets kUnavailable at once, as the resolver says when it is full.
class TenantResolver final : public Resolver {
 public:
  TenantResolver(Resolver& inner, std::shared_ptr<LookupShares> shares, std::string tenant)
      : inner_(inner), shares_(std::move(shares)), tenant_(std::move(tenant)) {}

  Result<std::vector<IpAddress>> Resolve(const std::string& host) override;

 private:
  Resolver& inner_;
  std::shared_ptr<LookupShares> shares_;
  std::string tenant_;
};

}  // namespace webhookd
