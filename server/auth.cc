#include "server/auth.h"

#include <algorithm>
#include <cctype>

namespace webhookd {
namespace {

constexpr auto kRemember = std::chrono::seconds(60);
constexpr size_t kMaxRemembered = 10'000;  // a bound on memory, not a tuning knob

Error Unauthorized() {
  return Error{
      ErrorKind::kUnauthorized, "a valid API key is required: Authorization: Bearer <key>", {}};
}

bool Allows(Role have, Role needed) { return needed != Role::kAdmin || have == Role::kAdmin; }

}  // namespace

Result<std::string> Authenticator::HashOf(std::string_view header) {
  constexpr std::string_view kBearer = "Bearer ";
  // The scheme is case-insensitive (RFC 9110 §11.1): "bearer <key>" is the same request.
  const auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  if (header.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), header.begin(), same)) {
    return std::unexpected(Unauthorized());
  }
  return HashApiKey(header.substr(kBearer.size()));
}

Result<void> Authenticator::Lookup(const std::string& hash, Role needed) {
  auto found = keys_.FindApiKey(hash);
  if (!found) return std::unexpected(found.error());
  if (!*found) return std::unexpected(Unauthorized());
  {
    std::lock_guard lock(mu_);
    if (seen_.size() >= kMaxRemembered) seen_.clear();
    seen_[hash] = Seen{(*found)->role, std::chrono::steady_clock::now() + kRemember};
  }
  if (!Allows((*found)->role, needed)) {
    return Fail(ErrorKind::kForbidden, "this route needs an admin key");
  }
  return {};
}

Result<void> Authenticator::Check(std::string_view header, Role needed) {
  auto hash = HashOf(header);
  if (!hash) return std::unexpected(hash.error());
  return Lookup(*hash, needed);
}

Result<std::optional<std::string>> Authenticator::CheckOrDefer(std::string_view header,
                                                               Role needed) {
  auto hash = HashOf(header);
  if (!hash) return std::unexpected(hash.error());
  {
    std::lock_guard lock(mu_);
    auto it = seen_.find(*hash);
    if (it != seen_.end() && it->second.until > std::chrono::steady_clock::now() &&
        Allows(it->second.role, needed)) {
      return std::optional<std::string>(std::move(*hash));
    }
  }
  if (auto ok = Lookup(*hash, needed); !ok) return std::unexpected(ok.error());
  return std::optional<std::string>();
}

void Authenticator::Forget(const std::string& key_hash) {
  std::lock_guard lock(mu_);
  seen_.erase(key_hash);
}

}  // namespace webhookd
