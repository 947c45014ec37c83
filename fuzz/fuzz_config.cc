// Fuzzes the configuration: the input, split at NUL bytes, gives the values of the
// variables of docs/configuration.md in the order of kNames (a missing value is an unset variable).
// Each value also goes to ParseDuration, ParseListenAddress and ParseLogLevel directly.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "base/duration.h"
#include "fuzz/fuzz_check.h"

namespace {

using webhookd::Duration;

constexpr std::array<std::string_view, 14> kNames = {
    "WEBHOOKD_RETRY_SCHEDULE",
    "WEBHOOKD_RETRY_JITTER",
    "WEBHOOKD_ATTEMPT_TIMEOUT",
    "WEBHOOKD_LEASE",
    "WEBHOOKD_CONNECT_TIMEOUT",
    "WEBHOOKD_ADDR",
    "WEBHOOKD_WORKER_ADDR",
    "WEBHOOKD_WORKER_CONCURRENCY",
    "WEBHOOKD_DESTINATION_MAX_IN_FLIGHT",
    "WEBHOOKD_MAX_PAYLOAD_BYTES",
    "WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS",
    "WEBHOOKD_LOG_LEVEL",
    "WEBHOOKD_BOOTSTRAP_ADMIN_KEY",
    "DATABASE_URL",
};

void CheckDuration(std::string_view text) {
  const webhookd::Result<Duration> d = webhookd::ParseDuration(text);
  if (!d) {
    FUZZ_CHECK(d.error().kind == webhookd::ErrorKind::kInvalid);
    return;
  }
  FUZZ_CHECK(*d >= Duration::zero());
  FUZZ_CHECK(*d % std::chrono::milliseconds(1) == Duration::zero());
  // The shortest spelling reads back as the same duration.
  const webhookd::Result<Duration> again = webhookd::ParseDuration(webhookd::FormatDuration(*d));
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(*again == *d);
}

void CheckListenAddress(std::string_view text) {
  const webhookd::Result<webhookd::ListenAddress> a = webhookd::ParseListenAddress(text);
  if (!a) {
    FUZZ_CHECK(a.error().kind == webhookd::ErrorKind::kInvalid);
    FUZZ_CHECK(a.error().message.find('\n') == std::string::npos);
    return;
  }
  FUZZ_CHECK(a->port >= 0 && a->port <= 65535);
  FUZZ_CHECK(!a->host.empty());
  FUZZ_CHECK(a->host.find_first_of("[] \t\r\n") == std::string::npos);
  FUZZ_CHECK(a->host.find('\0') == std::string::npos);
}

void CheckConfig(const std::vector<std::string>& values) {
  const webhookd::EnvLookup env = [&](std::string_view name) -> std::optional<std::string> {
    for (size_t i = 0; i < kNames.size() && i < values.size(); ++i) {
      if (kNames[i] == name) return values[i];
    }
    return std::nullopt;
  };
  const webhookd::Result<webhookd::Config> config = webhookd::LoadConfig(env);
  if (!config) {
    // One line that starts by naming the variable (docs/configuration.md).
    const std::string& message = config.error().message;
    FUZZ_CHECK(config.error().kind == webhookd::ErrorKind::kInvalid);
    for (char c : message) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    bool named = false;
    for (std::string_view name : kNames) {
      named = named || message.starts_with(std::string(name) + ": ");
    }
    FUZZ_CHECK(named);
    // A secret is never echoed.
    if (message.starts_with("WEBHOOKD_BOOTSTRAP_ADMIN_KEY: ")) {
      FUZZ_CHECK(message.ends_with("(value not shown)"));
    }
    return;
  }
  const webhookd::Config& c = *config;
  FUZZ_CHECK(c.lease > c.attempt_timeout);
  FUZZ_CHECK(c.attempt_timeout > Duration::zero());
  FUZZ_CHECK(c.connect_timeout > Duration::zero());
  FUZZ_CHECK(c.retry_jitter >= 0.0 && c.retry_jitter < 1.0);
  FUZZ_CHECK(!c.retry_schedule.empty() && c.retry_schedule.size() <= 20);
  for (const Duration wait : c.retry_schedule) FUZZ_CHECK(wait > Duration::zero());
  FUZZ_CHECK(c.worker_concurrency >= 1 && c.worker_concurrency <= 4096);
  FUZZ_CHECK(c.destination_max_in_flight >= 1 && c.destination_max_in_flight <= 10000);
  FUZZ_CHECK(c.max_payload_bytes >= 1024 && c.max_payload_bytes <= 67108864);
  FUZZ_CHECK(c.addr.port >= 0 && c.addr.port <= 65535 && !c.addr.host.empty());
  if (c.worker_addr) FUZZ_CHECK(c.worker_addr->port >= 0 && c.worker_addr->port <= 65535);
  if (c.bootstrap_admin_key) {
    FUZZ_CHECK(c.bootstrap_admin_key->size() >= 16 && c.bootstrap_admin_key->size() <= 256);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> values;
  if (!input.empty()) {
    size_t start = 0;
    while (values.size() < kNames.size()) {
      const size_t nul = input.find('\0', start);
      values.emplace_back(input.substr(start, nul == std::string_view::npos ? nul : nul - start));
      if (nul == std::string_view::npos) break;
      start = nul + 1;
    }
  }
  for (const std::string& value : values) {
    CheckDuration(value);
    CheckListenAddress(value);
    const webhookd::Result<webhookd::LogLevel> level = webhookd::ParseLogLevel(value);
    FUZZ_CHECK(level.has_value() || level.error().kind == webhookd::ErrorKind::kInvalid);
  }
  CheckConfig(values);
  return 0;
}
