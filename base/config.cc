#include "base/config.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/duration.h"
#include "base/strings.h"

namespace webhookd {
namespace {

constexpr size_t kMaxEchoedChars = 80;
constexpr size_t kMaxScheduleEntries = 20;

// The bad value as it appears in an error: quoted, on one line, and not too long.
std::string Quote(std::string_view value) {
  std::string out = "\"";
  const size_t shown = std::min(value.size(), kMaxEchoedChars);
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (value.size() > shown) out += "...";
  out += '"';
  return out;
}

std::unexpected<Error> Bad(std::string_view name, std::string_view expected,
                           std::string_view value) {
  return Fail(ErrorKind::kInvalid,
              std::string(name) + ": expected " + std::string(expected) + ", got " + Quote(value));
}

// For secrets: the value itself never appears in an error.
std::unexpected<Error> BadSecret(std::string_view name, std::string_view expected) {
  return Fail(ErrorKind::kInvalid,
              std::string(name) + ": expected " + std::string(expected) + " (value not shown)");
}

std::optional<std::vector<Duration>> ParseSchedule(std::string_view text) {
  std::vector<Duration> schedule;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = Trim(text.substr(0, comma));
    const Result<Duration> d = ParseDuration(item);
    if (!d || *d <= Duration::zero()) return std::nullopt;
    schedule.push_back(*d);
    if (schedule.size() > kMaxScheduleEntries) return std::nullopt;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return schedule;
}

bool IsHostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

// An absolute http(s) URL with a host, no user-info, query or fragment, printable ASCII
// only; trailing slashes go, so "<base>/ui/" never has two. nullopt when it is not one.
std::optional<std::string> ParsePublicUrl(std::string_view text) {
  constexpr size_t kMaxLength = 2048;
  if (text.size() > kMaxLength) return std::nullopt;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '?' || c == '#' || c == '@' || c == '\\') {
      return std::nullopt;
    }
  }
  const std::string lower = Lower(text.substr(0, 8));
  size_t rest = 0;
  if (lower.starts_with("http://")) {
    rest = 7;
  } else if (lower.starts_with("https://")) {
    rest = 8;
  } else {
    return std::nullopt;
  }
  while (text.size() > rest && text.back() == '/') text.remove_suffix(1);
  const std::string_view authority = text.substr(rest, text.find('/', rest) - rest);
  if (authority.empty() || authority.front() == ':') return std::nullopt;
  return std::string(text);
}

// "http://" + WEBHOOKD_ADDR, an IPv6 host in brackets.
std::string DefaultPublicUrl(const ListenAddress& addr) {
  const bool v6 = addr.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + addr.host + "]" : addr.host) + ":" + std::to_string(addr.port);
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto bad = [&] {
    return Fail(
        ErrorKind::kInvalid,
        "expected host:port, [v6]:port or :port with a port in 0..65535, got " + Quote(text));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad();
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (port_text.size() > 5) return bad();
  const std::optional<int64_t> port = ParseBoundedInt(port_text, 0, 65535);
  if (!port) return bad();

  ListenAddress address;
  address.port = static_cast<int>(*port);
  if (host.empty()) {
    address.host = "0.0.0.0";
    return address;
  }
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad();
    host = host.substr(1, host.size() - 2);
    // inet_pton reads up to a NUL: "[::1\0x]" must not pass as ::1.
    if (host.find('\0') != std::string_view::npos) return bad();
    in6_addr ignored;
    if (!inet_pton(AF_INET6, std::string(host).c_str(), &ignored)) return bad();
    address.host = std::string(host);
    return address;
  }
  for (char c : host) {
    if (!IsHostNameChar(c)) return bad();  // also refuses an unbracketed IPv6 literal
  }
  if (host.front() == '.' || host.front() == '-') return bad();
  address.host = std::string(host);
  return address;
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  const std::string level = Lower(text);
  if (level == "debug") return LogLevel::kDebug;
  if (level == "info") return LogLevel::kInfo;
  if (level == "warn") return LogLevel::kWarn;
  if (level == "error") return LogLevel::kError;
  return Fail(ErrorKind::kInvalid, "expected debug, info, warn or error, got " + Quote(text));
}

Result<Config> LoadConfig(const EnvLookup& env) {
  Config config;
  config.retry_schedule = {std::chrono::seconds(30), std::chrono::minutes(2),
                           std::chrono::minutes(10), std::chrono::hours(1)};

  // An empty value means the default, except where emptiness means something.
  const auto get = [&](std::string_view name) -> std::optional<std::string> {
    std::optional<std::string> value = env(name);
    if (value && value->empty()) return std::nullopt;
    return value;
  };

  if (std::optional<std::string> v = env("DATABASE_URL")) config.database_url = *v;

  if (std::optional<std::string> v = get("WEBHOOKD_ADDR")) {
    Result<ListenAddress> a = ParseListenAddress(*v);
    if (!a) return Bad("WEBHOOKD_ADDR", "host:port, [v6]:port or :port", *v);
    config.addr = *a;
  }

  if (std::optional<std::string> v = env("WEBHOOKD_WORKER_ADDR")) {
    if (v->empty()) {
      config.worker_addr = std::nullopt;
    } else {
      Result<ListenAddress> a = ParseListenAddress(*v);
      if (!a) {
        return Bad("WEBHOOKD_WORKER_ADDR", "host:port, [v6]:port, :port or empty for off", *v);
      }
      config.worker_addr = *a;
    }
  }

  if (std::optional<std::string> v = get("WEBHOOKD_BOOTSTRAP_ADMIN_KEY")) {
    bool ok = v->size() >= 16 && v->size() <= 256;
    for (char c : *v) ok = ok && c > 0x20 && c < 0x7f;
    if (!ok) {
      return BadSecret("WEBHOOKD_BOOTSTRAP_ADMIN_KEY",
                       "16 to 256 printable ASCII characters without spaces");
    }
    config.bootstrap_admin_key = *v;
  }

  if (std::optional<std::string> v = get("WEBHOOKD_RETRY_SCHEDULE")) {
    std::optional<std::vector<Duration>> schedule = ParseSchedule(*v);
    if (!schedule) {
      return Bad("WEBHOOKD_RETRY_SCHEDULE",
                 "1 to 20 comma-separated durations above zero like 30s,2m,10m,1h", *v);
    }
    config.retry_schedule = std::move(*schedule);
  }

  if (std::optional<std::string> v = get("WEBHOOKD_RETRY_JITTER")) {
    double jitter = -1;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), jitter);
    if (ec != std::errc() || end != v->data() + v->size() || !std::isfinite(jitter) || jitter < 0 ||
        jitter >= 1 || std::signbit(jitter)) {
      return Bad("WEBHOOKD_RETRY_JITTER", "a number in [0, 1)", *v);
    }
    config.retry_jitter = jitter;
  }

  if (std::optional<std::string> v = get("WEBHOOKD_WORKER_CONCURRENCY")) {
    std::optional<int64_t> n = ParseBoundedInt(*v, 1, 4096);
    if (!n) return Bad("WEBHOOKD_WORKER_CONCURRENCY", "an integer in 1..4096", *v);
    config.worker_concurrency = static_cast<int>(*n);
  }

  if (std::optional<std::string> v = get("WEBHOOKD_DESTINATION_MAX_IN_FLIGHT")) {
    std::optional<int64_t> n = ParseBoundedInt(*v, 1, 10000);
    if (!n) return Bad("WEBHOOKD_DESTINATION_MAX_IN_FLIGHT", "an integer in 1..10000", *v);
    config.destination_max_in_flight = static_cast<int>(*n);
  }

  const auto duration = [&](std::string_view name, Duration& out) -> Result<void> {
    if (std::optional<std::string> v = get(name)) {
      Result<Duration> d = ParseDuration(*v);
      if (!d || *d <= Duration::zero()) {
        return Bad(name, "a duration above zero like 250ms, 30s, 2m or 1h", *v);
      }
      out = *d;
    }
    return {};
  };
  WEBHOOKD_RETURN_IF_ERROR(duration("WEBHOOKD_CONNECT_TIMEOUT", config.connect_timeout));
  WEBHOOKD_RETURN_IF_ERROR(duration("WEBHOOKD_ATTEMPT_TIMEOUT", config.attempt_timeout));
  WEBHOOKD_RETURN_IF_ERROR(duration("WEBHOOKD_LEASE", config.lease));
  if (std::optional<std::string> v = get("WEBHOOKD_RETENTION")) {
    Result<Duration> d = *v == "0" ? Result<Duration>(Duration::zero()) : ParseDuration(*v);
    if (!d || *d < Duration::zero()) {
      return Bad("WEBHOOKD_RETENTION", "0 (keep forever) or a duration like 30d or 12h", *v);
    }
    config.retention = *d;
  }
  if (std::optional<std::string> v = get("WEBHOOKD_SECRET_GRACE")) {
    Result<Duration> d = *v == "0" ? Result<Duration>(Duration::zero()) : ParseDuration(*v);
    if (!d || *d < Duration::zero() || *d > kMaxSecretGrace) {
      return Bad("WEBHOOKD_SECRET_GRACE", "0 or a duration up to 7d like 24h", *v);
    }
    config.secret_grace = *d;
  }
  if (config.lease <= config.attempt_timeout) {
    // A lease that ends before the attempt can would let a second worker send it too.
    return Fail(ErrorKind::kInvalid,
                "WEBHOOKD_LEASE: expected a duration longer than "
                "WEBHOOKD_ATTEMPT_TIMEOUT (" +
                    FormatDuration(config.attempt_timeout) + "), got " +
                    Quote(FormatDuration(config.lease)));
  }

  if (std::optional<std::string> v = get("WEBHOOKD_MAX_PAYLOAD_BYTES")) {
    std::optional<int64_t> n = ParseBoundedInt(*v, 1024, 67108864);
    if (!n) return Bad("WEBHOOKD_MAX_PAYLOAD_BYTES", "an integer in 1024..67108864", *v);
    config.max_payload_bytes = static_cast<size_t>(*n);
  }

  if (std::optional<std::string> v = get("WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS")) {
    const std::string b = Lower(*v);
    if (b == "true" || b == "1") {
      config.allow_private_destinations = true;
    } else if (b == "false" || b == "0") {
      config.allow_private_destinations = false;
    } else {
      return Bad("WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "true, false, 1 or 0", *v);
    }
  }

  if (std::optional<std::string> v = get("WEBHOOKD_UI")) {
    const std::string b = Lower(*v);
    if (b == "true" || b == "1") {
      config.serve_ui = true;
    } else if (b == "false" || b == "0") {
      config.serve_ui = false;
    } else {
      return Bad("WEBHOOKD_UI", "true, false, 1 or 0", *v);
    }
  }

  config.public_url = DefaultPublicUrl(config.addr);
  if (std::optional<std::string> v = get("WEBHOOKD_PUBLIC_URL")) {
    std::optional<std::string> url = ParsePublicUrl(*v);
    if (!url) {
      return Bad("WEBHOOKD_PUBLIC_URL",
                 "an absolute http:// or https:// URL with a host and no query or fragment, "
                 "like https://webhooks.example.com",
                 *v);
    }
    config.public_url = std::move(*url);
  }

  if (std::optional<std::string> v = get("WEBHOOKD_CIRCUIT_THRESHOLD")) {
    std::optional<int64_t> n = ParseBoundedInt(*v, 1, 1000000);
    if (!n) return Bad("WEBHOOKD_CIRCUIT_THRESHOLD", "an integer in 1..1000000", *v);
    config.circuit_threshold = static_cast<int>(*n);
  }

  if (std::optional<std::string> v = get("WEBHOOKD_CIRCUIT_COOLDOWN")) {
    // The cooldown doubles after each failed probe up to an hour: a longer first one
    // could never double.
    Result<Duration> d = ParseDuration(*v);
    if (!d || *d <= Duration::zero() || *d > std::chrono::hours(1)) {
      return Bad("WEBHOOKD_CIRCUIT_COOLDOWN", "a duration above zero and at most 1h like 30s", *v);
    }
    config.circuit_cooldown = *d;
  }

  if (std::optional<std::string> v = get("WEBHOOKD_DISABLE_AFTER")) {
    Result<Duration> d = *v == "0" ? Result<Duration>(Duration::zero()) : ParseDuration(*v);
    if (!d) return Bad("WEBHOOKD_DISABLE_AFTER", "a duration like 120h, or 0 for never", *v);
    config.disable_after = *d;
  }

  if (std::optional<std::string> v = get("WEBHOOKD_LOG_LEVEL")) {
    Result<LogLevel> level = ParseLogLevel(*v);
    if (!level) return Bad("WEBHOOKD_LOG_LEVEL", "debug, info, warn or error", *v);
    config.log_level = *level;
  }

  return config;
}

}  // namespace webhookd
