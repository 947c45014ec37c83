#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/result.h"

namespace webhookd {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 literal or a host name, without brackets
  int port = 0;      // 0..65535; 0 picks a free port
};

// The longest a rotated-out secret may keep signing.
inline constexpr Duration kMaxSecretGrace = std::chrono::hours(24 * 7);

// Every setting of docs/configuration.md, validated.
struct Config {
  std::string database_url;
  ListenAddress addr{"127.0.0.1", 8080};
  std::optional<ListenAddress> worker_addr = ListenAddress{"127.0.0.1", 9090};  // nullopt = off
  std::optional<std::string> bootstrap_admin_key;
  // WEBHOOKD_ENCRYPTION_KEY(_PREVIOUS), decoded: 32 raw bytes each (base/secret_box.h).
  std::optional<std::string> encryption_key;
  std::optional<std::string> encryption_key_previous;
  std::vector<Duration> retry_schedule;  // waits before attempts 2..N
  double retry_jitter = 0.2;             // in [0, 1)
  int worker_concurrency = 64;
  int destination_max_in_flight = 16;
  Duration connect_timeout = std::chrono::seconds(5);
  Duration attempt_timeout = std::chrono::seconds(15);
  Duration lease = std::chrono::seconds(60);
  // WEBHOOKD_STATEMENT_TIMEOUT: the longest a statement run for an API request may take
  // (the API pool's connections); one over it is cancelled and the request answers 503.
  Duration statement_timeout = std::chrono::seconds(5);
  size_t max_payload_bytes = 262144;
  int max_destinations_per_tenant = 1000;
  // Connections one client address may hold open at once; more are closed on accept.
  int max_connections_per_client = 256;
  // WEBHOOKD_MAX_BROKER_CONNECTIONS: broker connections a worker keeps open at once, all
  // tenants together (each tenant at most 16 of them).
  int max_broker_connections = 256;
  // WEBHOOKD_SOURCE_RATE: verified requests a second one inbound source accepts.
  int source_rate = 1000;
  bool allow_private_destinations = false;
  // WEBHOOKD_EGRESS_PROXY: "http://host:port" every attempt tunnels through; empty: none.
  std::string egress_proxy;
  // WEBHOOKD_EVENT_TYPES=strict: only types in the event catalog are accepted.
  bool strict_event_types = false;
  bool serve_ui = true;  // WEBHOOKD_UI: the console and tenant portal at /ui/
  // WEBHOOKD_PUBLIC_URL: the base URL people reach webhookd at, without a trailing slash;
  // portal links are built on it. Defaults to "http://" + the listen address.
  std::string public_url = "http://127.0.0.1:8080";
  LogLevel log_level = LogLevel::kInfo;
  // How long an event is kept once all its deliveries are terminal; zero: forever.
  Duration retention = std::chrono::hours(24 * 30);
  // How long a rotated-out secret keeps signing unless the rotation says otherwise.
  Duration secret_grace = std::chrono::hours(24);
  int circuit_threshold = 10;
  Duration circuit_cooldown = std::chrono::seconds(30);  // at most 1h
  Duration disable_after = std::chrono::hours(24 * 5);   // zero: never
};

// One environment variable LoadConfig reads: the table in base/config.cc is the one list
// of them (docs/configuration.md shows each with this default; config_test holds the two
// together).
struct ConfigVariable {
  std::string_view name;
  std::string_view default_text;  // as docs/configuration.md's tables write it
  std::string_view expected;      // what a value must be, as its error says
};

// Every variable, in the order LoadConfig checks them.
std::vector<ConfigVariable> ConfigVariables();

// Looks an environment variable up; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

EnvLookup ProcessEnv();

// Reads the configuration. On a bad value the error's message is one line naming the
// variable and what was expected, e.g.
//   WEBHOOKD_RETRY_JITTER: expected a number in [0, 1), got "-0.1"
Result<Config> LoadConfig(const EnvLookup& env);

// "host:port", "[v6]:port" or ":port" (all interfaces). The port is required.
Result<ListenAddress> ParseListenAddress(std::string_view text);

Result<LogLevel> ParseLogLevel(std::string_view text);

}  // namespace webhookd
