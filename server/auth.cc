#include "server/auth.h"

namespace webhookd {

Result<void> Authenticator::Check(std::string_view header, Role needed) {
  constexpr std::string_view kBearer = "Bearer ";
  const auto unauthorized = [] {
    return Fail(ErrorKind::kUnauthorized,
                "a valid API key is required: Authorization: Bearer <key>");
  };
  if (header.size() <= kBearer.size() || !header.starts_with(kBearer)) return unauthorized();
  const std::string_view key = header.substr(kBearer.size());
  const std::string hash = HashApiKey(key);
  auto found = store_.FindApiKey(hash);
  if (!found) return std::unexpected(found.error());
  if (!*found) return unauthorized();
  if (needed == Role::kAdmin && (*found)->role != Role::kAdmin) {
    return Fail(ErrorKind::kForbidden, "this route needs an admin key");
  }
  return {};
}

}  // namespace webhookd
