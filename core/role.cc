#include "core/role.h"

namespace webhookd {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kPublisher:
      return "publisher";
    case Role::kAdmin:
      return "admin";
  }
  return "publisher";
}

std::optional<Role> ParseRole(std::string_view name) {
  if (name == "publisher") return Role::kPublisher;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

}  // namespace webhookd
