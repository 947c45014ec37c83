#pragma once

// Which tenants' rows a caller may see.

#include <optional>
#include <string>
#include <utility>

namespace webhookd {

// What a caller may see: everything (no tenant_id), or one tenant's rows alone. A scoped
// read or write finds nothing of another tenant or of none: to it they do not exist, so
// it answers exactly as for an unknown id.
//
// There is no default: every holder names its scope (All() or Tenant()), so a scope
// forgotten on a new path does not compile instead of silently meaning every tenant.
class Scope {
 public:
  Scope() = delete;
  static Scope All() { return Scope(std::nullopt); }
  static Scope Tenant(std::string tenant_id) { return Scope(std::move(tenant_id)); }

  std::optional<std::string> tenant_id;  // nullopt: every tenant's and none's

 private:
  explicit Scope(std::optional<std::string> tenant_id) : tenant_id(std::move(tenant_id)) {}
};

}  // namespace webhookd
