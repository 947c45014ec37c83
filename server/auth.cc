#include "server/auth.h"

#include "base/strings.h"

namespace webhookd {
namespace {

constexpr auto kRemember = std::chrono::seconds(60);
constexpr size_t kMaxRemembered = 10'000;  // a bound on memory, not a tuning knob

Error Unauthorized() {
  return Error{
      ErrorKind::kUnauthorized, "a valid API key is required: Authorization: Bearer <key>", {}};
}

bool Allows(Role have, Access access) {
  switch (have) {
    case Role::kAdmin:
      return true;
    case Role::kPublisher:
      return access.role != Role::kAdmin;
    case Role::kTenant:
      return access.tenant_ok;
  }
  return false;
}

Error Forbidden(Role have) {
  return Error{ErrorKind::kForbidden,
               have == Role::kTenant ? "a tenant key may not use this route"
                                     : "this route needs an admin key",
               {}};
}

}  // namespace

Result<std::string> Authenticator::KeyHashOf(std::string_view header) {
  constexpr std::string_view kBearer = "Bearer ";
  // The scheme is case-insensitive (RFC 9110 §11.1): "bearer <key>" is the same request.
  if (header.size() <= kBearer.size() || !StartsWithIgnoreCase(header, kBearer)) {
    return std::unexpected(Unauthorized());
  }
  return HashApiKey(header.substr(kBearer.size()));
}

Result<Scope> Authenticator::Lookup(const std::string& hash, Access access) {
  auto found = keys_.FindApiKey(hash);
  if (!found) return Propagate(found);
  if (!*found) return std::unexpected(Unauthorized());
  const ApiKeyInfo& key = **found;
  // A tenant key without its tenant would see everything: refuse it as unknown instead
  // (the table's CHECK makes it impossible; this keeps it so whatever the store says).
  if (key.role == Role::kTenant && !key.tenant_id) return std::unexpected(Unauthorized());
  const Scope scope = key.role == Role::kTenant ? Scope::Tenant(*key.tenant_id) : Scope::All();
  {
    std::lock_guard lock(mu_);
    if (seen_.size() >= kMaxRemembered) seen_.clear();
    seen_.insert_or_assign(hash,
                           Seen{key.role, scope, std::chrono::steady_clock::now() + kRemember});
  }
  if (!Allows(key.role, access)) return std::unexpected(Forbidden(key.role));
  return scope;
}

Result<Scope> Authenticator::Check(std::string_view header, Access access) {
  auto hash = HashOf(header);
  if (!hash) return Propagate(hash);
  return Lookup(*hash, access);
}

std::optional<Authenticator::Deferred> Authenticator::DeferIfSeen(std::string_view header,
                                                                  Access access) {
  auto hash = HashOf(header);
  if (!hash) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = seen_.find(*hash);
  if (it != seen_.end() && it->second.until > std::chrono::steady_clock::now() &&
      Allows(it->second.role, access)) {
    return Deferred{it->second.scope, std::move(*hash)};
  }
  return std::nullopt;
}

Result<Authenticator::Deferred> Authenticator::CheckOrDefer(std::string_view header,
                                                            Access access) {
  if (auto deferred = DeferIfSeen(header, access)) return std::move(*deferred);
  auto hash = HashOf(header);
  if (!hash) return Propagate(hash);
  auto scope = Lookup(*hash, access);
  if (!scope) return Propagate(scope);
  return Deferred{std::move(*scope), std::nullopt};
}

bool Authenticator::RecentlyLive(std::string_view header) {
  auto hash = HashOf(header);
  if (!hash) return false;
  std::lock_guard lock(mu_);
  auto it = seen_.find(*hash);
  return it != seen_.end() && it->second.until > std::chrono::steady_clock::now();
}

void Authenticator::Forget(const std::string& key_hash) {
  std::lock_guard lock(mu_);
  seen_.erase(key_hash);
}

}  // namespace webhookd
