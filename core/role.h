#pragma once

#include <optional>
#include <string_view>

namespace webhookd {

// What an API key may do. An admin key may use every route; a publisher key every route
// outside /v1/admin/; a tenant key, bound to one tenant, only the routes that say so, and
// there it sees its tenant's rows alone.
enum class Role { kPublisher, kAdmin, kTenant };

std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

}  // namespace webhookd
