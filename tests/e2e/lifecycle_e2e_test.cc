// The binary's life cycle (docs/configuration.md, §2): readiness before and after `migrate`, a
// clean exit on SIGTERM, --help everywhere, exit 2 with one line for a bad environment
// value, and `keys create | list | revoke` working against a running server.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>
#include <sstream>
#include <thread>

#include "tests/testing/process.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::lifecycle_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string LogPath(const std::string& what) {
  static int n = 0;
  return TestLogDir() + "/lifecycle-" + what + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(++n) + ".log";
}

// Runs `webhookd <args>` with `env` and returns {exit code, stdout+stderr}; -1 when it
// is still running after `timeout` (then it is killed).
std::pair<int, std::string> RunWebhookd(const std::vector<std::string>& args,
                                        const std::map<std::string, std::string>& env,
                                        std::chrono::milliseconds timeout = 10s) {
  std::vector<std::string> argv = {WebhookdBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = LogPath("command");
  Process p(argv, env, log);
  auto code = p.Wait(timeout);
  return {code.value_or(-1), ReadFile(log)};
}

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

httplib::Result Get(int port, const std::string& path, const std::string& key = "") {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(5, 0);
  if (!key.empty()) client.set_bearer_token_auth(key.c_str());
  return client.Get(path.c_str());
}

TEST(LifecycleE2eTest, ReadyOnlyAfterMigrateAndExitsZeroOnSigterm) {
  TestDatabase db(/*migrate=*/false);
  const int port = FreePort();
  const std::string admin_key = "whk_lifecycle_admin_key_0123456789";
  Process server({WebhookdBinary(), "server"},
                 {{"DATABASE_URL", db.url()},
                  {"WEBHOOKD_ADDR", "127.0.0.1:" + std::to_string(port)},
                  {"WEBHOOKD_BOOTSTRAP_ADMIN_KEY", admin_key},
                  {"WEBHOOKD_LOG_LEVEL", "debug"}},
                 LogPath("server"));

  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Get(port, "/healthz");
        return r && r->status == 200;
      },
      20s))
      << ReadFile(server.log_path());
  auto ready = Get(port, "/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_EQ(ready->get_header_value("Content-Type"), "application/problem+json");
  const Json problem = Json::parse(ready->body, nullptr, false);
  EXPECT_EQ(problem.value("status", 0), 503);
  EXPECT_TRUE(problem.contains("title") && problem.contains("detail") && problem.contains("type"));
  // Still alive and healthy while unmigrated.
  auto health = Get(port, "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);

  auto [code, out] = WebhookdProcess::RunCommand({"migrate"}, {{"DATABASE_URL", db.url()}});
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("applied 0034_baseline"), std::string::npos) << out;
  // Again: nothing to do, still exit 0.
  auto [again, again_out] = WebhookdProcess::RunCommand({"migrate"}, {{"DATABASE_URL", db.url()}});
  EXPECT_EQ(again, 0) << again_out;

  EXPECT_TRUE(WaitUntil(
      [&] {
        auto r = Get(port, "/readyz");
        return r && r->status == 200;
      },
      5s));
  // The bootstrap admin key is stored once the schema exists.
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto r = Get(port, "/v1/destinations", admin_key);
        return r && r->status == 200;
      },
      5s));

  server.Signal(SIGTERM);
  auto exit_code = server.Wait(10s);
  ASSERT_TRUE(exit_code.has_value()) << "still running 10 s after SIGTERM";
  EXPECT_EQ(*exit_code, 0) << ReadFile(server.log_path());
  EXPECT_FALSE(Get(port, "/healthz"));
}

TEST(LifecycleE2eTest, AllStopsCleanlyOnSigtermAndSigint) {
  TestDatabase db;
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    WebhookdProcess webhookd(db.url(), "all");
    webhookd.process().Signal(sig);
    auto code = webhookd.process().Wait(10s);
    ASSERT_TRUE(code.has_value()) << "still running 10 s after the signal";
    EXPECT_EQ(*code, 0) << ReadFile(webhookd.log_path());
  }
}

TEST(LifecycleE2eTest, EveryCommandAnswersHelp) {
  const std::vector<std::vector<std::string>> commands = {
      {"--help"},        {"migrate", "--help"}, {"server", "--help"},   {"worker", "--help"},
      {"all", "--help"}, {"keys", "--help"},    {"retention", "--help"}};
  for (const auto& args : commands) {
    SCOPED_TRACE(args.front());
    // No DATABASE_URL: help must not need one.
    auto [code, out] = RunWebhookd(args, {{"DATABASE_URL", ""}});
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("Usage"), std::string::npos) << out;
  }
}

TEST(LifecycleE2eTest, ABadEnvironmentValueExitsTwoWithOneLineNamingIt) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"WEBHOOKD_RETRY_SCHEDULE", "banana"},
      {"WEBHOOKD_CONNECT_TIMEOUT", "5"},
      {"WEBHOOKD_RETRY_JITTER", "-0.1"},
      {"WEBHOOKD_ADDR", "nonsense"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "0"},
      {"WEBHOOKD_MAX_PAYLOAD_BYTES", "big"},
      {"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "maybe"},
      {"WEBHOOKD_LOG_LEVEL", "loud"},
      {"OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://127.0.0.1:4318"},
      {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
      {"OTEL_BSP_MAX_QUEUE_SIZE", "many"},
  };
  for (const auto& [name, value] : bad) {
    for (const std::string command : {"server", "all"}) {
      SCOPED_TRACE(command + " with " + name + "=" + value);
      // A reachable-looking database and a free port: only the bad value can stop it.
      std::map<std::string, std::string> env = {
          {"DATABASE_URL", TestDatabase::AdminUrl()},
          {"WEBHOOKD_WORKER_ADDR", "127.0.0.1:0"},
          {"WEBHOOKD_ADDR", "127.0.0.1:" + std::to_string(FreePort())}};
      // Export settings matter once there is somewhere to export to (nothing listens there).
      if (name.starts_with("OTEL_")) env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9";
      env[name] = value;
      auto [code, out] = RunWebhookd({command}, env);
      EXPECT_EQ(code, 2) << out;
      const auto lines = NonEmptyLines(out);
      ASSERT_EQ(lines.size(), 1u) << out;
      EXPECT_NE(lines[0].find(name), std::string::npos) << lines[0];
    }
  }
  // A bad flag too.
  auto [code, out] = RunWebhookd({"server", "--bogus"}, {});
  EXPECT_EQ(code, 2) << out;
  EXPECT_EQ(NonEmptyLines(out).size(), 1u) << out;
}

TEST(LifecycleE2eTest, KeysCreateListRevoke) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  const std::map<std::string, std::string> env = {{"DATABASE_URL", db.url()}};

  auto [code, out] =
      WebhookdProcess::RunCommand({"keys", "create", "--role", "publisher", "--name", "ci"}, env);
  ASSERT_EQ(code, 0) << out;
  const auto lines = NonEmptyLines(out);
  ASSERT_GE(lines.size(), 2u) << out;
  const std::string key = lines.back();
  EXPECT_EQ(key.find_first_of(" \t"), std::string::npos) << "the last line is the key alone";
  EXPECT_GE(key.size(), 20u);
  std::smatch m;
  const std::string before_key = out.substr(0, out.rfind(key));
  ASSERT_TRUE(std::regex_search(before_key, m, std::regex(R"(key_[0-9]+)"))) << out;
  const std::string key_id = m.str();

  // The key works as Bearer on /v1/events (GET and POST), not on admin routes.
  EXPECT_EQ(webhookd.Call("GET", "/v1/events", nullptr, key).status, 200);
  auto posted =
      webhookd.Call("POST", "/v1/events", {{"type", "ci.ping"}, {"payload", Json::object()}}, key);
  EXPECT_EQ(posted.status, 202) << posted.body;
  EXPECT_EQ(webhookd.Call("GET", "/v1/admin/dead-letters", nullptr, key).status, 403);

  auto [list_code, list] = WebhookdProcess::RunCommand({"keys", "list"}, env);
  EXPECT_EQ(list_code, 0) << list;
  EXPECT_EQ(list.find(key), std::string::npos) << "keys list printed the key";
  EXPECT_EQ(list.find(webhookd.admin_key()), std::string::npos) << "keys list printed a key";
  EXPECT_NE(list.find(key_id), std::string::npos) << list;
  EXPECT_NE(list.find("publisher"), std::string::npos) << list;
  EXPECT_NE(list.find("ci"), std::string::npos) << list;

  auto [revoke_code, revoke_out] = WebhookdProcess::RunCommand({"keys", "revoke", key_id}, env);
  EXPECT_EQ(revoke_code, 0) << revoke_out;
  auto after = webhookd.Call("GET", "/v1/events", nullptr, key);
  EXPECT_EQ(after.status, 401);
  EXPECT_EQ(after.get_header_value("Content-Type"), "application/problem+json");
  // The admin key is unaffected.
  EXPECT_EQ(webhookd.Call("GET", "/v1/events").status, 200);
  // Revoking it again, or an unknown key, fails without exit 0.
  EXPECT_NE(WebhookdProcess::RunCommand({"keys", "revoke", key_id}, env).first, 0);

  // Bad invocations exit 2.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"keys", "create", "--role", "bogus"},
        std::vector<std::string>{"keys", "create"},
        std::vector<std::string>{"keys", "revoke", "banana"},
        std::vector<std::string>{"keys", "frobnicate"},
        std::vector<std::string>{"keys", "create", "--role", "tenant"},
        std::vector<std::string>{"keys", "create", "--role", "publisher", "--tenant", "acme"},
        std::vector<std::string>{"keys", "create", "--role", "tenant", "--tenant", "a b"},
        std::vector<std::string>{"keys", "create", "--role", "tenant", "--tenant", "acme", "--ttl",
                                 "soon"},
        std::vector<std::string>{"keys", "create", "--role", "tenant", "--tenant", "acme", "--ttl",
                                 "0s"}}) {
    SCOPED_TRACE(args.back());
    auto [bad_code, bad_out] = WebhookdProcess::RunCommand(args, env);
    EXPECT_EQ(bad_code, 2) << bad_out;
    EXPECT_EQ(NonEmptyLines(bad_out).size(), 1u) << bad_out;
  }
  auto [role_code, role_out] =
      WebhookdProcess::RunCommand({"keys", "create", "--role", "bogus"}, env);
  EXPECT_NE(role_out.find("--role"), std::string::npos) << role_out;
  // Nothing was created by the refused commands.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM api_keys"), "2");

  // A tenant key with a ttl: its tenant and expiry in the list, and it sees acme alone.
  auto [tenant_code, tenant_out] = WebhookdProcess::RunCommand(
      {"keys", "create", "--role", "tenant", "--tenant", "acme", "--ttl", "2h"}, env);
  ASSERT_EQ(tenant_code, 0) << tenant_out;
  EXPECT_NE(tenant_out.find("tenant acme"), std::string::npos) << tenant_out;
  const std::string tenant_key = NonEmptyLines(tenant_out).back();
  EXPECT_EQ(webhookd.Call("GET", "/v1/events", nullptr, tenant_key).status, 200);
  EXPECT_EQ(
      webhookd
          .Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}}, tenant_key)
          .status,
      403);
  auto [list2_code, list2] = WebhookdProcess::RunCommand({"keys", "list"}, env);
  EXPECT_EQ(list2_code, 0) << list2;
  EXPECT_NE(list2.find("acme"), std::string::npos) << list2;
  EXPECT_EQ(list2.find(tenant_key), std::string::npos) << "keys list printed the key";
  EXPECT_EQ(db.Scalar("SELECT (expires_at - now()) BETWEEN interval '119 minutes' AND "
                      "interval '2 hours' FROM api_keys WHERE tenant_id = 'acme'"),
            "t");
}

}  // namespace
}  // namespace webhookd::testing::lifecycle_e2e_test
