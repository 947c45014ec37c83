// `webhookd secrets status|reencrypt`, and the start-up check of the stored credentials
// against the configured encryption keys.
#include <cstdio>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/secret_box.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kSecretsHelp = R"(Usage:
  webhookd secrets status
      counts the stored credentials (signing secrets, earlier secrets still signing,
      custom header values) in plaintext and under each encryption key id
  webhookd secrets reencrypt
      encrypts every stored credential with WEBHOOKD_ENCRYPTION_KEY: those in plaintext
      and those under WEBHOOKD_ENCRYPTION_KEY_PREVIOUS; safe while webhookd runs, and to
      run again
Environment: DATABASE_URL, WEBHOOKD_ENCRYPTION_KEY, WEBHOOKD_ENCRYPTION_KEY_PREVIOUS.
A key id is the first 8 hex digits of the key's SHA-256; the keys themselves are never
printed.
)";

// What a key id of the census is to this process's configuration.
enum class KeyRole { kPlaintext, kCurrent, kPrevious, kUnknown };

KeyRole RoleOf(const std::string& key_id, const Config& config) {
  if (key_id.empty()) return KeyRole::kPlaintext;
  if (config.encryption_key && key_id == EncryptionKeyId(*config.encryption_key)) {
    return KeyRole::kCurrent;
  }
  if (config.encryption_key_previous &&
      key_id == EncryptionKeyId(*config.encryption_key_previous)) {
    return KeyRole::kPrevious;
  }
  return KeyRole::kUnknown;
}

std::string Describe(const std::string& key_id, const Config& config) {
  switch (RoleOf(key_id, config)) {
    case KeyRole::kPlaintext:
      return "plaintext";
    case KeyRole::kCurrent:
      return "key " + key_id + " (WEBHOOKD_ENCRYPTION_KEY)";
    case KeyRole::kPrevious:
      return "key " + key_id + " (WEBHOOKD_ENCRYPTION_KEY_PREVIOUS)";
    case KeyRole::kUnknown:
      break;
  }
  return "key " + key_id + " (not configured: cannot be decrypted)";
}

}  // namespace

int Secrets(const std::vector<std::string>& args) {
  if (args.empty() || WantsHelp(args)) {
    std::fputs(kSecretsHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args.front();
  if (sub != "status" && sub != "reencrypt") {
    return Usage("secrets: unknown subcommand \"" + sub + "\"; expected status or reencrypt");
  }
  if (args.size() > 1) return Usage("secrets " + sub + " takes no arguments");
  auto config = LoadOrComplain();
  if (!config) return 2;
  if (sub == "reencrypt" && !config->encryption_key) {
    return Usage(
        "secrets reencrypt: WEBHOOKD_ENCRYPTION_KEY is unset; set the key to encrypt with");
  }
  auto store_owner = OpenStore(*config, StoreUse::kCommand);
  SecretStore& store = *store_owner;
  if (sub == "reencrypt") {
    auto rewritten = store.ReencryptCredentials();
    if (!rewritten) {
      std::fprintf(stderr, "webhookd: %s\n", rewritten.error().message.c_str());
      return 1;
    }
    std::printf("re-encrypted %lld stored credentials under key %s\n",
                static_cast<long long>(*rewritten),
                EncryptionKeyId(*config->encryption_key).c_str());
  }
  auto census = store.CountCredentials();
  if (!census) {
    std::fprintf(stderr, "webhookd: %s\n", census.error().message.c_str());
    return 1;
  }
  if (census->by_key_id.empty()) std::puts("no stored credentials");
  for (const auto& [key_id, count] : census->by_key_id) {
    std::printf("%lld %s\n", static_cast<long long>(count), Describe(key_id, *config).c_str());
  }
  return 0;
}

int CheckStoredCredentials(SecretStore& store, const Config& config) {
  if (!config.encryption_key) {
    Log(LogLevel::kWarn,
        "WEBHOOKD_ENCRYPTION_KEY is unset: signing secrets and custom header values are "
        "stored in plaintext",
        {});
  }
  auto census = store.CountCredentials();
  if (!census) {
    // The database may not be up yet; deliveries report any value they cannot decrypt.
    Log(LogLevel::kWarn, "could not check the stored credentials against the encryption keys",
        {{"error", census.error().message}});
    return 0;
  }
  int64_t plaintext = 0;
  int64_t previous = 0;
  for (const auto& [key_id, count] : census->by_key_id) {
    const KeyRole role = RoleOf(key_id, config);
    if (role == KeyRole::kUnknown) {
      std::fprintf(stderr,
                   "webhookd: %lld stored credentials are encrypted with key %s, which is "
                   "neither WEBHOOKD_ENCRYPTION_KEY nor WEBHOOKD_ENCRYPTION_KEY_PREVIOUS; "
                   "start with the key they were encrypted with\n",
                   static_cast<long long>(count), key_id.c_str());
      return 1;
    }
    if (role == KeyRole::kPlaintext) plaintext = count;
    if (role == KeyRole::kPrevious) previous = count;
  }
  if (config.encryption_key && plaintext + previous > 0) {
    Log(LogLevel::kInfo,
        "stored credentials not under WEBHOOKD_ENCRYPTION_KEY yet; run webhookd secrets "
        "reencrypt",
        {{"plaintext", plaintext}, {"previous_key", previous}});
  }
  return 0;
}

}  // namespace webhookd::cmd
