#include "base/config.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <utility>

#include "base/duration.h"
#include "base/encoding.h"
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

namespace {

// What a setting's value parses to; false: not a value of that setting.
using Apply = std::function<bool(std::string_view value, Config& config)>;

Apply Integer(int64_t min, int64_t max, std::function<void(Config&, int64_t)> set) {
  return [min, max, set = std::move(set)](std::string_view v, Config& c) {
    const std::optional<int64_t> n = ParseBoundedInt(v, min, max);
    if (n) set(c, *n);
    return n.has_value();
  };
}

// A duration in (0, max]; with `zero_ok`, "0" too.
Apply Span(Duration Config::*field, bool zero_ok, Duration max = Duration::max()) {
  return [=](std::string_view v, Config& c) {
    const Result<Duration> d =
        zero_ok && v == "0" ? Result<Duration>(Duration::zero()) : ParseDuration(v);
    if (!d || *d < Duration::zero() || (*d == Duration::zero() && !zero_ok) || *d > max) {
      return false;
    }
    c.*field = *d;
    return true;
  };
}

Apply Boolean(bool Config::*field) {
  return [=](std::string_view v, Config& c) {
    const std::string b = Lower(v);
    if (b != "true" && b != "1" && b != "false" && b != "0") return false;
    c.*field = b == "true" || b == "1";
    return true;
  };
}

bool Addr(std::string_view v, Config& c) {
  Result<ListenAddress> a = ParseListenAddress(v);
  if (a) c.addr = std::move(*a);
  return a.has_value();
}

// Empty turns the worker's listener off.
bool WorkerAddr(std::string_view v, Config& c) {
  if (v.empty()) {
    c.worker_addr = std::nullopt;
    return true;
  }
  Result<ListenAddress> a = ParseListenAddress(v);
  if (a) c.worker_addr = std::move(*a);
  return a.has_value();
}

bool BootstrapKey(std::string_view v, Config& c) {
  bool ok = v.size() >= 32 && v.size() <= 256;
  for (char ch : v) ok = ok && ch > 0x20 && ch < 0x7f;
  if (ok) c.bootstrap_admin_key = std::string(v);
  return ok;
}

// Base64 of exactly 32 bytes: an AES-256 key.
Apply EncryptionKey(std::optional<std::string> Config::*field) {
  return [=](std::string_view v, Config& c) {
    std::optional<std::string> key = Base64Decode(Trim(v));
    if (!key || key->size() != 32) return false;
    c.*field = std::move(*key);
    return true;
  };
}

bool Schedule(std::string_view v, Config& c) {
  std::optional<std::vector<Duration>> schedule = ParseSchedule(v);
  if (schedule) c.retry_schedule = std::move(*schedule);
  return schedule.has_value();
}

bool Jitter(std::string_view v, Config& c) {
  double jitter = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), jitter);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(jitter) || jitter < 0 ||
      jitter >= 1 || std::signbit(jitter)) {
    return false;
  }
  c.retry_jitter = jitter;
  return true;
}

// "http://host:port", a trailing "/" allowed: the proxy's address, nothing else (no
// credentials, which would then sit in the environment and in error messages).
bool EgressProxy(std::string_view v, Config& c) {
  if (v.size() < 8 || Lower(v.substr(0, 7)) != "http://") return false;
  std::string_view authority = v.substr(7);
  if (authority.ends_with('/')) authority.remove_suffix(1);
  if (authority.find_first_of("/?#@ ") != std::string_view::npos) return false;
  Result<ListenAddress> address = ParseListenAddress(authority);
  if (!address || authority.front() == ':') return false;
  c.egress_proxy = "http://" + std::string(authority);
  return true;
}

bool PublicUrl(std::string_view v, Config& c) {
  std::optional<std::string> url = ParsePublicUrl(v);
  if (url) c.public_url = std::move(*url);
  return url.has_value();
}

bool Level(std::string_view v, Config& c) {
  Result<LogLevel> level = ParseLogLevel(v);
  if (level) c.log_level = *level;
  return level.has_value();
}

// One entry per variable, in the order they are checked (the first bad one is reported).
struct Setting {
  ConfigVariable doc;
  // An empty value is a value (not "the default"): DATABASE_URL, WEBHOOKD_WORKER_ADDR.
  bool empty_is_value = false;
  // The value never appears in an error.
  bool secret = false;
  Apply apply;
};

// Where it connects and listens, and its keys.
std::vector<Setting> AccessSettings() {
  return {
      {{"DATABASE_URL", "none (`scripts/run` sets it to its own cluster)",
        "a libpq connection string or URI"},
       true,
       false,
       [](std::string_view v, Config& c) {
         c.database_url = std::string(v);
         return true;
       }},
      {{"WEBHOOKD_ADDR", "`127.0.0.1:8080`", "host:port, [v6]:port or :port"}, false, false, Addr},
      {{"WEBHOOKD_WORKER_ADDR", "`127.0.0.1:9090`", "host:port, [v6]:port, :port or empty for off"},
       true,
       false,
       WorkerAddr},
      {{"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", "unset",
        "32 to 256 printable ASCII characters without spaces"},
       false,
       true,
       BootstrapKey},
      {{"WEBHOOKD_ENCRYPTION_KEY", "unset",
        "base64 of 32 bytes, e.g. from openssl rand -base64 32"},
       false,
       true,
       EncryptionKey(&Config::encryption_key)},
      {{"WEBHOOKD_ENCRYPTION_KEY_PREVIOUS", "unset",
        "base64 of 32 bytes, e.g. from openssl rand -base64 32"},
       false,
       true,
       EncryptionKey(&Config::encryption_key_previous)},
  };
}

// How it delivers, what it keeps, and its limits.
std::vector<Setting> DeliverySettings() {
  return {
      {{"WEBHOOKD_RETRY_SCHEDULE", "`30s,2m,10m,1h`",
        "1 to 20 comma-separated durations above zero like 30s,2m,10m,1h"},
       false,
       false,
       Schedule},
      {{"WEBHOOKD_RETRY_JITTER", "`0.2`", "a number in [0, 1)"}, false, false, Jitter},
      {{"WEBHOOKD_WORKER_CONCURRENCY", "`64`", "an integer in 1..4096"},
       false,
       false,
       Integer(1, 4096, [](Config& c, int64_t n) { c.worker_concurrency = static_cast<int>(n); })},
      {{"WEBHOOKD_DESTINATION_MAX_IN_FLIGHT", "`16`", "an integer in 1..10000"},
       false,
       false,
       Integer(1, 10000,
               [](Config& c, int64_t n) { c.destination_max_in_flight = static_cast<int>(n); })},
      {{"WEBHOOKD_CONNECT_TIMEOUT", "`5s`", "a duration above zero like 250ms, 30s, 2m or 1h"},
       false,
       false,
       Span(&Config::connect_timeout, false)},
      {{"WEBHOOKD_ATTEMPT_TIMEOUT", "`15s`", "a duration above zero like 250ms, 30s, 2m or 1h"},
       false,
       false,
       Span(&Config::attempt_timeout, false)},
      {{"WEBHOOKD_LEASE", "`60s`", "a duration above zero like 250ms, 30s, 2m or 1h"},
       false,
       false,
       Span(&Config::lease, false)},
      {{"WEBHOOKD_STATEMENT_TIMEOUT", "`5s`", "a duration above zero like 250ms, 30s, 2m or 1h"},
       false,
       false,
       Span(&Config::statement_timeout, false)},
      {{"WEBHOOKD_RETENTION", "`30d`", "0 (keep forever) or a duration like 30d or 12h"},
       false,
       false,
       Span(&Config::retention, true)},
      {{"WEBHOOKD_SECRET_GRACE", "`24h`", "0 or a duration up to 7d like 24h"},
       false,
       false,
       Span(&Config::secret_grace, true, kMaxSecretGrace)},
      {{"WEBHOOKD_MAX_PAYLOAD_BYTES", "`262144`", "an integer in 1024..67108864"},
       false,
       false,
       Integer(1024, 67108864,
               [](Config& c, int64_t n) { c.max_payload_bytes = static_cast<size_t>(n); })},
      {{"WEBHOOKD_MAX_DESTINATIONS_PER_TENANT", "`1000`", "an integer in 1..1000000"},
       false,
       false,
       Integer(1, 1000000,
               [](Config& c, int64_t n) { c.max_destinations_per_tenant = static_cast<int>(n); })},
      {{"WEBHOOKD_MAX_CONNECTIONS_PER_CLIENT", "`256`", "an integer in 1..1000000"},
       false,
       false,
       Integer(1, 1000000,
               [](Config& c, int64_t n) { c.max_connections_per_client = static_cast<int>(n); })},
      {{"WEBHOOKD_MAX_BROKER_CONNECTIONS", "`256`", "an integer in 1..100000"},
       false,
       false,
       Integer(1, 100000,
               [](Config& c, int64_t n) { c.max_broker_connections = static_cast<int>(n); })},
      {{"WEBHOOKD_SOURCE_RATE", "`1000`", "an integer in 1..1000000"},
       false,
       false,
       Integer(1, 1000000, [](Config& c, int64_t n) { c.source_rate = static_cast<int>(n); })},
      {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "`false`", "true, false, 1 or 0"},
       false,
       false,
       Boolean(&Config::allow_private_destinations)},
      {{"WEBHOOKD_EGRESS_PROXY", "unset", "http://host:port"}, false, false, EgressProxy},
      {{"WEBHOOKD_EVENT_TYPES", "`open`", "open or strict"},
       false,
       false,
       [](std::string_view v, Config& c) {
         c.strict_event_types = v == "strict";
         return v == "strict" || v == "open";
       }},
      {{"WEBHOOKD_UI", "`true`", "true, false, 1 or 0"}, false, false, Boolean(&Config::serve_ui)},
      {{"WEBHOOKD_PUBLIC_URL", "`http://` + `WEBHOOKD_ADDR`",
        "an absolute http:// or https:// URL with a host and no query or fragment, "
        "like https://webhooks.example.com"},
       false,
       false,
       PublicUrl},
      {{"WEBHOOKD_CIRCUIT_THRESHOLD", "`10`", "an integer in 1..1000000"},
       false,
       false,
       Integer(1, 1000000,
               [](Config& c, int64_t n) { c.circuit_threshold = static_cast<int>(n); })},
      // The cooldown doubles after each failed probe up to an hour: a longer first one
      // could never double.
      {{"WEBHOOKD_CIRCUIT_COOLDOWN", "`30s`", "a duration above zero and at most 1h like 30s"},
       false,
       false,
       Span(&Config::circuit_cooldown, false, std::chrono::hours(1))},
      {{"WEBHOOKD_DISABLE_AFTER", "`5d`", "a duration like 120h, or 0 for never"},
       false,
       false,
       Span(&Config::disable_after, true)},
      {{"WEBHOOKD_LOG_LEVEL", "`info`", "debug, info, warn or error"}, false, false, Level},
  };
}

// Every setting, in the order LoadConfig checks them.
const std::vector<Setting>& Settings() {
  static const std::vector<Setting> settings = [] {
    std::vector<Setting> all = AccessSettings();
    for (Setting& s : DeliverySettings()) all.push_back(std::move(s));
    return all;
  }();
  return settings;
}

}  // namespace

std::vector<ConfigVariable> ConfigVariables() {
  std::vector<ConfigVariable> out;
  for (const Setting& s : Settings()) out.push_back(s.doc);
  return out;
}

Result<Config> LoadConfig(const EnvLookup& env) {
  Config config;
  config.retry_schedule = {std::chrono::seconds(30), std::chrono::minutes(2),
                           std::chrono::minutes(10), std::chrono::hours(1)};
  bool public_url_set = false;
  for (const Setting& s : Settings()) {
    std::optional<std::string> v = env(s.doc.name);
    // An empty value means the default, except where emptiness means something.
    if (!v || (v->empty() && !s.empty_is_value)) continue;
    if (!s.apply(*v, config)) {
      return s.secret ? BadSecret(s.doc.name, s.doc.expected) : Bad(s.doc.name, s.doc.expected, *v);
    }
    public_url_set = public_url_set || s.doc.name == "WEBHOOKD_PUBLIC_URL";
  }
  if (!public_url_set) config.public_url = DefaultPublicUrl(config.addr);
  if (config.encryption_key_previous && !config.encryption_key) {
    // Without a current key new values would go in plaintext mid-change.
    return Fail(ErrorKind::kInvalid,
                "WEBHOOKD_ENCRYPTION_KEY_PREVIOUS: set only beside WEBHOOKD_ENCRYPTION_KEY, "
                "during a key change");
  }
  if (config.lease <= config.attempt_timeout) {
    // A lease that ends before the attempt can would let a second worker send it too.
    return Fail(ErrorKind::kInvalid,
                "WEBHOOKD_LEASE: expected a duration longer than "
                "WEBHOOKD_ATTEMPT_TIMEOUT (" +
                    FormatDuration(config.attempt_timeout) + "), got " +
                    Quote(FormatDuration(config.lease)));
  }
  return config;
}

}  // namespace webhookd
