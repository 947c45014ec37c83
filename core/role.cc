#include "core/role.h"

namespace webhookd {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kPublisher:
      return "publisher";
    case Role::kAdmin:
      return "admin";
    case Role::kTenant:
      return "tenant";
  }
  return "publisher";
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "publisher") return Role::kPublisher;
  if (name == "admin") return Role::kAdmin;
  if (name == "tenant") return Role::kTenant;
  return std::nullopt;
}

}  // namespace webhookd
