#include "server/auth.h"

#include <algorithm>
#include <cctype>

namespace webhookd {

Result<void> Authenticator::Check(std::string_view header, Role needed) {
  constexpr std::string_view kBearer = "Bearer ";
  const auto unauthorized = [] {
    return Fail(ErrorKind::kUnauthorized,
                "a valid API key is required: Authorization: Bearer <key>");
  };
  // The scheme is case-insensitive (RFC 9110 §11.1): "bearer <key>" is the same request.
  const auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  if (header.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), header.begin(), same)) {
    return unauthorized();
  }
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
