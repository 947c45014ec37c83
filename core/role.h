#pragma once

#include <optional>
#include <string_view>

namespace webhookd {

// What an API key may do; a higher role may do everything a lower one may.
enum class Role { kPublisher, kAdmin };

std::string_view RoleName(Role role);
std::optional<Role> ParseRole(std::string_view name);

}  // namespace webhookd
