// `webhookd keys create|list|revoke`.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/duration.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "core/api_key.h"
#include "core/ids.h"
#include "core/validation.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kKeysHelp = R"(Usage:
  webhookd keys create --role publisher|admin [--name N] [--ttl D]
  webhookd keys create --role tenant --tenant T [--name N] [--ttl D]
      creates an API key and prints it once, alone on the last line; a tenant key sees
      tenant T alone (1-128 of A-Z a-z 0-9 . _ : -); --ttl (e.g. 1h, 7d) makes it expire
  webhookd keys list
      lists keys (id, role, tenant, created, expires, revoked, name); never the key itself
  webhookd keys revoke ID
      revokes a key (ID as printed by list, e.g. key_3)
Environment: DATABASE_URL.
)";

// The key to create from the flags of `keys create`; nullopt after a usage line.
std::optional<NewApiKey> KeyToCreate(Flags& flags) {
  if (flags.values.count("--role") == 0 || !flags.positional.empty()) {
    Usage("keys create: --role publisher|admin|tenant is required");
    return std::nullopt;
  }
  NewApiKey key;
  const std::string& role = flags.values["--role"];
  const std::optional<Role> parsed = ParseRole(role);
  if (!parsed) {
    Usage("--role: expected publisher, admin or tenant, got \"" + role + "\"");
    return std::nullopt;
  }
  key.role = *parsed;
  if (auto it = flags.values.find("--tenant"); it != flags.values.end()) {
    if (key.role != Role::kTenant) {
      Usage("--tenant: only a tenant key (--role tenant) has a tenant");
      return std::nullopt;
    }
    if (!IsValidTenantId(it->second)) {
      Usage(std::string("--tenant: ") + kTenantIdRule + ", got \"" + it->second + "\"");
      return std::nullopt;
    }
    key.tenant_id = it->second;
  } else if (key.role == Role::kTenant) {
    Usage("keys create --role tenant: --tenant T is required");
    return std::nullopt;
  }
  if (auto it = flags.values.find("--ttl"); it != flags.values.end()) {
    auto ttl = ParseDuration(it->second);
    if (!ttl || *ttl <= Duration::zero()) {
      Usage("--ttl: expected a duration above zero like 1h or 7d, got \"" + it->second + "\"");
      return std::nullopt;
    }
    key.ttl = *ttl;
  }
  if (auto it = flags.values.find("--name"); it != flags.values.end()) key.name = it->second;
  return key;
}

}  // namespace

int Keys(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kKeysHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args.front();
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  auto flags = ParseFlags(rest, {"--role", "--name", "--tenant", "--ttl"});
  if (!flags) return 2;
  if (sub != "create" && sub != "list" && sub != "revoke") {
    return Usage("keys: unknown subcommand \"" + sub + "\"; expected create, list or revoke");
  }
  std::optional<NewApiKey> to_create;
  if (sub == "create") {
    to_create = KeyToCreate(*flags);
    if (!to_create) return 2;
  }
  std::optional<int64_t> revoke_id;
  if (sub == "revoke") {
    if (flags->positional.size() != 1 || !flags->values.empty()) {
      return Usage("keys revoke: expected one key id, e.g. key_3");
    }
    revoke_id = ParseId(kApiKeyPrefix, flags->positional[0]);
    if (!revoke_id)
      return Usage("keys revoke: expected a key id like key_3, got \"" + flags->positional[0] +
                   "\"");
  }
  if (sub == "list" && (!flags->positional.empty() || !flags->values.empty())) {
    return Usage("keys list takes no arguments");
  }
  auto config = LoadOrComplain();
  if (!config) return 2;
  auto store_owner = OpenStore(*config, StoreUse::kCommand);
  KeyStore& store = *store_owner;

  if (sub == "create") {
    const std::string key = GenerateApiKey();
    to_create->key_hash = HashApiKey(key);
    auto info = store.CreateApiKey(*to_create);
    if (!info) {
      std::fprintf(stderr, "webhookd: %s\n", info.error().message.c_str());
      return 1;
    }
    std::string what = "role " + std::string(RoleName(info->role));
    if (info->tenant_id) what += ", tenant " + *info->tenant_id;
    if (info->expires_at) what += ", expires " + FormatRfc3339(*info->expires_at);
    if (!info->name.empty()) what += ", name " + info->name;
    std::printf("created %s (%s); the key is shown once:\n%s\n",
                FormatId(kApiKeyPrefix, info->id).c_str(), what.c_str(), key.c_str());
    return 0;
  }
  if (sub == "list") {
    auto keys = store.ListApiKeys();
    if (!keys) {
      std::fprintf(stderr, "webhookd: %s\n", keys.error().message.c_str());
      return 1;
    }
    std::printf("%-10s %-10s %-20s %-28s %-28s %-28s %s\n", "ID", "ROLE", "TENANT", "CREATED",
                "EXPIRES", "REVOKED", "NAME");
    for (const auto& k : *keys) {
      std::printf("%-10s %-10s %-20s %-28s %-28s %-28s %s\n", FormatId(kApiKeyPrefix, k.id).c_str(),
                  std::string(RoleName(k.role)).c_str(), k.tenant_id ? k.tenant_id->c_str() : "-",
                  FormatRfc3339(k.created_at).c_str(),
                  k.expires_at ? FormatRfc3339(*k.expires_at).c_str() : "-",
                  k.revoked_at ? FormatRfc3339(*k.revoked_at).c_str() : "-", k.name.c_str());
    }
    return 0;
  }
  auto revoked = store.RevokeApiKey(*revoke_id);
  if (!revoked) {
    std::fprintf(stderr, "webhookd: %s\n", revoked.error().message.c_str());
    return 1;
  }
  std::printf("revoked %s\n", flags->positional[0].c_str());
  return 0;
}

}  // namespace webhookd::cmd
