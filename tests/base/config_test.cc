#include "base/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "base/encoding.h"

namespace webhookd::config_test {
namespace {

using namespace std::chrono_literals;

EnvLookup Env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    const auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// The error of a configuration that must be refused.
Error Refused(std::map<std::string, std::string> values) {
  const Result<Config> config = LoadConfig(Env(std::move(values)));
  EXPECT_FALSE(config.has_value());
  return config.has_value() ? Error{} : config.error();
}

TEST(ConfigTest, DefaultsMatchTheContract) {
  const Config c = LoadConfig(Env({})).value();
  EXPECT_EQ(c.database_url, "");
  EXPECT_EQ(c.addr.host, "127.0.0.1");
  EXPECT_EQ(c.addr.port, 8080);
  ASSERT_TRUE(c.worker_addr.has_value());
  EXPECT_EQ(c.worker_addr->host, "127.0.0.1");
  EXPECT_EQ(c.worker_addr->port, 9090);
  EXPECT_FALSE(c.bootstrap_admin_key.has_value());
  EXPECT_EQ(c.retry_schedule, (std::vector<Duration>{30s, 2min, 10min, 1h}));
  EXPECT_DOUBLE_EQ(c.retry_jitter, 0.2);
  EXPECT_EQ(c.worker_concurrency, 64);
  EXPECT_EQ(c.destination_max_in_flight, 16);
  EXPECT_EQ(c.connect_timeout, 5s);
  EXPECT_EQ(c.attempt_timeout, 15s);
  EXPECT_EQ(c.lease, 60s);
  EXPECT_EQ(c.max_payload_bytes, 262144u);
  EXPECT_FALSE(c.allow_private_destinations);
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
  EXPECT_EQ(c.circuit_threshold, 10);
  EXPECT_EQ(c.circuit_cooldown, 30s);
  EXPECT_EQ(c.disable_after, 5 * 24h);
}

TEST(ConfigTest, ReadsEveryVariable) {
  const Config c =
      LoadConfig(Env({
                     {"DATABASE_URL", "postgresql://u:p@db/webhookd"},
                     {"WEBHOOKD_ADDR", "[::1]:8443"},
                     {"WEBHOOKD_WORKER_ADDR", ":0"},
                     {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", "whk_abcdefghijklmnopqrstuvwxyz0123"},
                     {"WEBHOOKD_RETRY_SCHEDULE", "1s , 250ms,2m"},
                     {"WEBHOOKD_RETRY_JITTER", "0"},
                     {"WEBHOOKD_WORKER_CONCURRENCY", "4096"},
                     {"WEBHOOKD_DESTINATION_MAX_IN_FLIGHT", "1"},
                     {"WEBHOOKD_CONNECT_TIMEOUT", "500ms"},
                     {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                     {"WEBHOOKD_LEASE", "3s"},
                     {"WEBHOOKD_MAX_PAYLOAD_BYTES", "1024"},
                     {"WEBHOOKD_MAX_CONNECTIONS_PER_CLIENT", "3"},
                     {"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "true"},
                     {"WEBHOOKD_LOG_LEVEL", "debug"},
                     {"WEBHOOKD_CIRCUIT_THRESHOLD", "3"},
                     {"WEBHOOKD_CIRCUIT_COOLDOWN", "1h"},
                     {"WEBHOOKD_DISABLE_AFTER", "90s"},
                     {"WEBHOOKD_EVENT_TYPES", "strict"},
                     {"WEBHOOKD_EGRESS_PROXY", "http://proxy.internal:3128/"},
                 }))
          .value();
  EXPECT_EQ(c.database_url, "postgresql://u:p@db/webhookd");
  EXPECT_EQ(c.addr.host, "::1");
  EXPECT_EQ(c.addr.port, 8443);
  ASSERT_TRUE(c.worker_addr.has_value());
  EXPECT_EQ(c.worker_addr->host, "0.0.0.0");
  EXPECT_EQ(c.worker_addr->port, 0);
  EXPECT_EQ(c.bootstrap_admin_key, "whk_abcdefghijklmnopqrstuvwxyz0123");
  EXPECT_EQ(c.retry_schedule, (std::vector<Duration>{1s, 250ms, 2min}));
  EXPECT_DOUBLE_EQ(c.retry_jitter, 0.0);
  EXPECT_EQ(c.worker_concurrency, 4096);
  EXPECT_EQ(c.destination_max_in_flight, 1);
  EXPECT_EQ(c.connect_timeout, 500ms);
  EXPECT_EQ(c.attempt_timeout, 2s);
  EXPECT_EQ(c.lease, 3s);
  EXPECT_EQ(c.max_payload_bytes, 1024u);
  EXPECT_EQ(c.max_connections_per_client, 3);
  EXPECT_TRUE(c.allow_private_destinations);
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.circuit_threshold, 3);
  EXPECT_EQ(c.circuit_cooldown, 1h);
  EXPECT_EQ(c.disable_after, 90s);
  EXPECT_TRUE(c.strict_event_types);
  EXPECT_EQ(c.egress_proxy, "http://proxy.internal:3128");
}

TEST(ConfigTest, EgressProxyIsAnHttpHostAndPort) {
  EXPECT_EQ(LoadConfig(Env({})).value().egress_proxy, "");
  for (const char* good : {"http://127.0.0.1:8888", "http://[::1]:3128", "HTTP://squid:3128/"}) {
    EXPECT_TRUE(LoadConfig(Env({{"WEBHOOKD_EGRESS_PROXY", good}}))) << good;
  }
  for (const char* bad : {"127.0.0.1:8888", "https://p:3128", "http://p", "http://:3128",
                          "http://user:pw@p:3128", "http://p:3128/path", "socks5://p:1080"}) {
    auto c = LoadConfig(Env({{"WEBHOOKD_EGRESS_PROXY", bad}}));
    ASSERT_FALSE(c) << bad;
    EXPECT_TRUE(c.error().message.starts_with("WEBHOOKD_EGRESS_PROXY: expected http://host:port"))
        << c.error().message;
  }
}

TEST(ConfigTest, EventTypesIsOpenOrStrict) {
  EXPECT_FALSE(LoadConfig(Env({})).value().strict_event_types);
  EXPECT_FALSE(LoadConfig(Env({{"WEBHOOKD_EVENT_TYPES", "open"}})).value().strict_event_types);
  auto bad = LoadConfig(Env({{"WEBHOOKD_EVENT_TYPES", "Strict"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "WEBHOOKD_EVENT_TYPES: expected open or strict, got \"Strict\"");
}

TEST(ConfigTest, DisableAfterZeroMeansNever) {
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_DISABLE_AFTER", "0"}})).value().disable_after,
            Duration::zero());
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_DISABLE_AFTER", "0s"}})).value().disable_after,
            Duration::zero());
}

TEST(ConfigTest, RetentionIsThirtyDaysZeroForeverOrADuration) {
  EXPECT_EQ(LoadConfig(Env({})).value().retention, 24h * 30);
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_RETENTION", "0"}})).value().retention, Duration::zero());
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_RETENTION", "7d"}})).value().retention, 24h * 7);
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_RETENTION", "90m"}})).value().retention, 90min);
  for (const char* bad : {"-1d", "forever", "1.5d", "30"}) {
    const Error e = Refused({{"WEBHOOKD_RETENTION", bad}});
    EXPECT_EQ(e.message.rfind("WEBHOOKD_RETENTION: ", 0), 0u) << bad << ": " << e.message;
  }
}

TEST(ConfigTest, SecretGraceIsADayAtMostSevenDaysZeroAllowed) {
  EXPECT_EQ(LoadConfig(Env({})).value().secret_grace, 24h);
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_SECRET_GRACE", "0"}})).value().secret_grace,
            Duration::zero());
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_SECRET_GRACE", "7d"}})).value().secret_grace, 24h * 7);
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_SECRET_GRACE", "168h"}})).value().secret_grace, 24h * 7);
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_SECRET_GRACE", "90s"}})).value().secret_grace, 90s);
  for (const char* bad : {"8d", "169h", "-1h", "1.5h", "24", "a day"}) {
    const Error e = Refused({{"WEBHOOKD_SECRET_GRACE", bad}});
    EXPECT_EQ(e.message.rfind("WEBHOOKD_SECRET_GRACE: ", 0), 0u) << bad << ": " << e.message;
  }
}

TEST(ConfigTest, EmptyWorkerAddrTurnsItOff) {
  EXPECT_FALSE(LoadConfig(Env({{"WEBHOOKD_WORKER_ADDR", ""}})).value().worker_addr.has_value());
}

TEST(ConfigTest, EmptyValuesMeanTheDefault) {
  const Config c = LoadConfig(Env({{"WEBHOOKD_ADDR", ""},
                                   {"WEBHOOKD_RETRY_SCHEDULE", ""},
                                   {"WEBHOOKD_RETRY_JITTER", ""},
                                   {"WEBHOOKD_LEASE", ""},
                                   {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", ""},
                                   {"WEBHOOKD_LOG_LEVEL", ""}}))
                       .value();
  EXPECT_EQ(c.addr.port, 8080);
  EXPECT_EQ(c.retry_schedule.size(), 4u);
  EXPECT_DOUBLE_EQ(c.retry_jitter, 0.2);
  EXPECT_EQ(c.lease, 60s);
  EXPECT_FALSE(c.bootstrap_admin_key.has_value());
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
}

TEST(ConfigTest, AcceptsTheBooleanSpellings) {
  for (const auto& [text, value] : std::vector<std::pair<std::string, bool>>{
           {"true", true}, {"1", true}, {"false", false}, {"0", false}, {"TRUE", true}}) {
    EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", text}}))
                  .value()
                  .allow_private_destinations,
              value)
        << text;
  }
}

TEST(ConfigTest, ConsoleIsServedUnlessTurnedOff) {
  EXPECT_TRUE(LoadConfig(Env({})).value().serve_ui);
  EXPECT_TRUE(LoadConfig(Env({{"WEBHOOKD_UI", ""}})).value().serve_ui);
  EXPECT_TRUE(LoadConfig(Env({{"WEBHOOKD_UI", "true"}})).value().serve_ui);
  EXPECT_FALSE(LoadConfig(Env({{"WEBHOOKD_UI", "false"}})).value().serve_ui);
  EXPECT_FALSE(LoadConfig(Env({{"WEBHOOKD_UI", "0"}})).value().serve_ui);
  const Error error = Refused({{"WEBHOOKD_UI", "off"}});
  EXPECT_EQ(error.message, R"(WEBHOOKD_UI: expected true, false, 1 or 0, got "off")");
}

TEST(ConfigTest, PublicUrlDefaultsToTheListenAddress) {
  EXPECT_EQ(LoadConfig(Env({})).value().public_url, "http://127.0.0.1:8080");
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_ADDR", "0.0.0.0:9000"}})).value().public_url,
            "http://0.0.0.0:9000");
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_ADDR", "[::1]:8081"}})).value().public_url,
            "http://[::1]:8081");
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_PUBLIC_URL", ""}})).value().public_url,
            "http://127.0.0.1:8080");
}

TEST(ConfigTest, PublicUrlIsAnAbsoluteHttpUrlWithoutATrailingSlash) {
  for (const auto& [given, kept] : std::vector<std::pair<std::string, std::string>>{
           {"https://webhooks.example.com", "https://webhooks.example.com"},
           {"https://webhooks.example.com/", "https://webhooks.example.com"},
           {"http://10.0.0.5:8080//", "http://10.0.0.5:8080"},
           {"HTTPS://Example.com/webhookd/", "HTTPS://Example.com/webhookd"},
           {"http://[2001:db8::1]:8443/base", "http://[2001:db8::1]:8443/base"}}) {
    auto c = LoadConfig(Env({{"WEBHOOKD_PUBLIC_URL", given}}));
    ASSERT_TRUE(c) << given << ": " << c.error().message;
    EXPECT_EQ(c->public_url, kept) << given;
  }
  for (const std::string bad :
       {"webhooks.example.com", "ftp://example.com", "https://", "https:///path", "http:/x.com",
        "https://example.com/a b", "https://user:pw@example.com", "https://example.com/?x=1",
        "https://example.com/#k", "https://:8080", "https://ex\xe4mple.com"}) {
    const Error error = Refused({{"WEBHOOKD_PUBLIC_URL", bad}});
    EXPECT_TRUE(
        error.message.starts_with("WEBHOOKD_PUBLIC_URL: expected an absolute http:// or "
                                  "https:// URL"))
        << bad << ": " << error.message;
  }
}

struct BadCase {
  std::string name;
  std::string value;
};

TEST(ConfigTest, RefusesBadValuesNamingTheVariableAndEchoingTheValue) {
  const BadCase cases[] = {
      {"WEBHOOKD_ADDR", "127.0.0.1"},
      {"WEBHOOKD_ADDR", "127.0.0.1:65536"},
      {"WEBHOOKD_ADDR", "127.0.0.1:80x"},
      {"WEBHOOKD_ADDR", "::1:8080"},
      {"WEBHOOKD_ADDR", "[::1:8080"},
      {"WEBHOOKD_ADDR", "bad host:80"},
      {"WEBHOOKD_WORKER_ADDR", "nope"},
      {"WEBHOOKD_RETRY_SCHEDULE", "30s,,2m"},
      {"WEBHOOKD_RETRY_SCHEDULE", "30s,2"},
      {"WEBHOOKD_RETRY_SCHEDULE", "30s,0s"},
      {"WEBHOOKD_RETRY_SCHEDULE", "30s;2m"},
      {"WEBHOOKD_RETRY_SCHEDULE", ","},
      {"WEBHOOKD_RETRY_SCHEDULE", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"},
      {"WEBHOOKD_RETRY_JITTER", "-0.1"},
      {"WEBHOOKD_RETRY_JITTER", "abc"},
      {"WEBHOOKD_RETRY_JITTER", "1"},
      {"WEBHOOKD_RETRY_JITTER", "nan"},
      {"WEBHOOKD_RETRY_JITTER", "inf"},
      {"WEBHOOKD_RETRY_JITTER", "0.2x"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "0"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "4097"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "+8"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "-8"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "8 "},
      {"WEBHOOKD_WORKER_CONCURRENCY", "8k"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "99999999999999999999999"},
      {"WEBHOOKD_DESTINATION_MAX_IN_FLIGHT", "10001"},
      {"WEBHOOKD_CONNECT_TIMEOUT", "5"},
      {"WEBHOOKD_CONNECT_TIMEOUT", "0s"},
      {"WEBHOOKD_ATTEMPT_TIMEOUT", "1.5s"},
      {"WEBHOOKD_LEASE", "-60s"},
      {"WEBHOOKD_MAX_PAYLOAD_BYTES", "1023"},
      {"WEBHOOKD_MAX_PAYLOAD_BYTES", "67108865"},
      {"WEBHOOKD_MAX_CONNECTIONS_PER_CLIENT", "0"},
      {"WEBHOOKD_MAX_CONNECTIONS_PER_CLIENT", "-1"},
      {"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "yes"},
      {"WEBHOOKD_LOG_LEVEL", "verbose"},
      {"WEBHOOKD_CIRCUIT_THRESHOLD", "0"},
      {"WEBHOOKD_CIRCUIT_THRESHOLD", "ten"},
      {"WEBHOOKD_CIRCUIT_COOLDOWN", "0s"},
      {"WEBHOOKD_CIRCUIT_COOLDOWN", "61m"},
      {"WEBHOOKD_CIRCUIT_COOLDOWN", "30"},
      {"WEBHOOKD_DISABLE_AFTER", "-1s"},
      {"WEBHOOKD_DISABLE_AFTER", "00"},
      {"WEBHOOKD_DISABLE_AFTER", "soon"},
  };
  for (const BadCase& c : cases) {
    const Error e = Refused({{c.name, c.value}});
    EXPECT_EQ(e.kind, ErrorKind::kInvalid) << c.name << "=" << c.value;
    EXPECT_TRUE(e.message.starts_with(c.name + ": expected ")) << e.message;
    EXPECT_NE(e.message.find("\"" + c.value + "\""), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  }
}

TEST(ConfigTest, JitterMessageIsTheDocumentedOne) {
  EXPECT_EQ(Refused({{"WEBHOOKD_RETRY_JITTER", "-0.1"}}).message,
            "WEBHOOKD_RETRY_JITTER: expected a number in [0, 1), got \"-0.1\"");
}

TEST(ConfigTest, LeaseMustExceedTheAttemptTimeout) {
  const Error equal = Refused({{"WEBHOOKD_ATTEMPT_TIMEOUT", "30s"}, {"WEBHOOKD_LEASE", "30s"}});
  EXPECT_TRUE(equal.message.starts_with("WEBHOOKD_LEASE: ")) << equal.message;
  const Error below = Refused({{"WEBHOOKD_ATTEMPT_TIMEOUT", "90s"}});  // default lease 60s
  EXPECT_TRUE(below.message.starts_with("WEBHOOKD_LEASE: ")) << below.message;
  EXPECT_TRUE(
      LoadConfig(Env({{"WEBHOOKD_ATTEMPT_TIMEOUT", "30s"}, {"WEBHOOKD_LEASE", "30001ms"}})));
}

TEST(ConfigTest, ControlCharactersInAnEchoedValueStayOnOneLine) {
  const Error e = Refused({{"WEBHOOKD_LOG_LEVEL", "info\nerror"}});
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  EXPECT_TRUE(e.message.starts_with("WEBHOOKD_LOG_LEVEL: ")) << e.message;
}

TEST(ConfigTest, BootstrapKeyIsCheckedButNeverEchoed) {
  for (const std::string& bad :
       {std::string("short-secret-15"), std::string(31, 'k'),
        std::string("has a space in the key, which is long enough"),
        std::string("tab\tinside-the-secret-key-which-is-long"), std::string(257, 'k')}) {
    const Error e = Refused({{"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", bad}});
    EXPECT_TRUE(e.message.starts_with("WEBHOOKD_BOOTSTRAP_ADMIN_KEY: expected ")) << e.message;
    EXPECT_EQ(e.message.find(bad.substr(0, 8)), std::string::npos) << e.message;
  }
  EXPECT_EQ(LoadConfig(Env({{"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", std::string(32, 'k')}}))
                .value()
                .bootstrap_admin_key,
            std::string(32, 'k'));
  EXPECT_TRUE(LoadConfig(Env({{"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", std::string(256, 'k')}})));
}

TEST(ConfigTest, EncryptionKeysAreBase64Of32BytesNeverEchoed) {
  const std::string key = Base64Encode(std::string(32, 'k'));
  const std::string previous = Base64Encode(std::string(32, 'p'));
  const Config c = LoadConfig(Env({{"WEBHOOKD_ENCRYPTION_KEY", key},
                                   {"WEBHOOKD_ENCRYPTION_KEY_PREVIOUS", previous}}))
                       .value();
  EXPECT_EQ(c.encryption_key, std::string(32, 'k'));
  EXPECT_EQ(c.encryption_key_previous, std::string(32, 'p'));
  EXPECT_FALSE(LoadConfig(Env({})).value().encryption_key);
  for (const std::string& bad : {Base64Encode(std::string(31, 'k')),
                                 Base64Encode(std::string(33, 'k')), std::string("not base64!")}) {
    const Error e = Refused({{"WEBHOOKD_ENCRYPTION_KEY", bad}});
    EXPECT_EQ(e.message,
              "WEBHOOKD_ENCRYPTION_KEY: expected base64 of 32 bytes, e.g. from openssl rand "
              "-base64 32 (value not shown)");
  }
  // A previous key alone would mean writing plaintext in the middle of a key change.
  const Error alone = Refused({{"WEBHOOKD_ENCRYPTION_KEY_PREVIOUS", previous}});
  EXPECT_TRUE(alone.message.starts_with("WEBHOOKD_ENCRYPTION_KEY_PREVIOUS: set only beside"))
      << alone.message;
}

TEST(ConfigTest, DatabaseUrlNeverAppearsInAnotherVariablesError) {
  const Error e =
      Refused({{"DATABASE_URL", "postgresql://user:hunter2@db/x"}, {"WEBHOOKD_LOG_LEVEL", "loud"}});
  EXPECT_EQ(e.message.find("hunter2"), std::string::npos) << e.message;
}

TEST(ListenAddressTest, ParsesTheAcceptedForms) {
  const auto check = [](std::string_view text, std::string_view host, int port) {
    const Result<ListenAddress> a = ParseListenAddress(text);
    ASSERT_TRUE(a.has_value()) << text << ": " << a.error().message;
    EXPECT_EQ(a->host, host) << text;
    EXPECT_EQ(a->port, port) << text;
  };
  check("127.0.0.1:8080", "127.0.0.1", 8080);
  check("[::1]:8080", "::1", 8080);
  check(":8080", "0.0.0.0", 8080);
  check("localhost:80", "localhost", 80);
  check("0.0.0.0:0", "0.0.0.0", 0);
  check("example.com:65535", "example.com", 65535);
}

TEST(ListenAddressTest, RefusesJunk) {
  for (const char* bad :
       {"", "8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
        "127.0.0.1:8080x", "::1:8080", "[::1]8080", "[]:80", "[nothost]:80", "a b:80", "host/x:80",
        "127.0.0.1:99999999999999999999"}) {
    EXPECT_FALSE(ParseListenAddress(bad).has_value()) << bad;
  }
}

TEST(LogLevelTest, ParsesTheFourLevels) {
  EXPECT_EQ(ParseLogLevel("debug").value(), LogLevel::kDebug);
  EXPECT_EQ(ParseLogLevel("info").value(), LogLevel::kInfo);
  EXPECT_EQ(ParseLogLevel("warn").value(), LogLevel::kWarn);
  EXPECT_EQ(ParseLogLevel("error").value(), LogLevel::kError);
  EXPECT_FALSE(ParseLogLevel("trace").has_value());
  EXPECT_FALSE(ParseLogLevel("").has_value());
}

// docs/configuration.md lists every variable LoadConfig reads, with the default the
// table in base/config.cc gives it: a variable added to one and not the other fails here.
TEST(ConfigTest, EveryVariableIsDocumentedWithItsDefault) {
  std::ifstream file(std::string(WEBHOOKD_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_TRUE(file) << "docs/configuration.md not found";
  std::stringstream text;
  text << file.rdbuf();
  std::map<std::string, std::string> documented;  // name -> its default column
  std::string line;
  while (std::getline(text, line)) {
    if (!line.starts_with("| `")) continue;
    const size_t name_end = line.find('`', 3);
    const size_t col = line.find(" | ", name_end);
    const size_t col_end = line.find(" | ", col + 3);
    if (name_end == std::string::npos || col == std::string::npos || col_end == std::string::npos)
      continue;
    documented[line.substr(3, name_end - 3)] = line.substr(col + 3, col_end - col - 3);
  }
  const std::vector<ConfigVariable> variables = ConfigVariables();
  EXPECT_EQ(variables.size(), 30u);
  for (const ConfigVariable& v : variables) {
    auto it = documented.find(std::string(v.name));
    ASSERT_NE(it, documented.end()) << v.name << " is not in docs/configuration.md";
    EXPECT_EQ(it->second, v.default_text) << v.name;
  }
}

}  // namespace
}  // namespace webhookd::config_test
