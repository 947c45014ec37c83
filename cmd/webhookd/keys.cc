// `webhookd keys create|list|revoke`.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "core/api_key.h"
#include "core/ids.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kKeysHelp = R"(Usage:
  webhookd keys create --role publisher|admin [--name N]
      creates an API key and prints it once, alone on the last line
  webhookd keys list
      lists keys (id, role, name, created, revoked); never the key itself
  webhookd keys revoke ID
      revokes a key (ID as printed by list, e.g. key_3)
Environment: DATABASE_URL.
)";

}  // namespace

int Keys(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kKeysHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string sub = args.front();
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  auto flags = ParseFlags(rest, {"--role", "--name"});
  if (!flags) return 2;
  if (sub != "create" && sub != "list" && sub != "revoke") {
    return Usage("keys: unknown subcommand \"" + sub + "\"; expected create, list or revoke");
  }
  if (sub == "create" && (flags->values.count("--role") == 0 || !flags->positional.empty())) {
    return Usage("keys create: --role publisher|admin is required");
  }
  std::optional<Role> role;
  if (sub == "create") {
    const std::string& r = flags->values["--role"];
    if (r == "publisher") role = Role::kPublisher;
    if (r == "admin") role = Role::kAdmin;
    if (!role) return Usage("--role: expected publisher or admin, got \"" + r + "\"");
  }
  std::optional<int64_t> revoke_id;
  if (sub == "revoke") {
    if (flags->positional.size() != 1) return Usage("keys revoke: expected one key id, e.g. key_3");
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
    const std::string name = flags->values.count("--name") ? flags->values["--name"] : "";
    auto info = store.CreateApiKey(name, *role, HashApiKey(key));
    if (!info) {
      std::fprintf(stderr, "webhookd: %s\n", info.error().message.c_str());
      return 1;
    }
    std::printf("created %s (role %s%s%s); the key is shown once:\n%s\n",
                FormatId(kApiKeyPrefix, info->id).c_str(), std::string(RoleName(*role)).c_str(),
                name.empty() ? "" : ", name ", name.c_str(), key.c_str());
    return 0;
  }
  if (sub == "list") {
    auto keys = store.ListApiKeys();
    if (!keys) {
      std::fprintf(stderr, "webhookd: %s\n", keys.error().message.c_str());
      return 1;
    }
    std::printf("%-10s %-10s %-28s %-28s %s\n", "ID", "ROLE", "CREATED", "REVOKED", "NAME");
    for (const auto& k : *keys) {
      std::printf("%-10s %-10s %-28s %-28s %s\n", FormatId(kApiKeyPrefix, k.id).c_str(),
                  std::string(RoleName(k.role)).c_str(), FormatRfc3339(k.created_at).c_str(),
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
