// `webhookd destinations` (cmd/webhookd/destinations.cc) against a real database: a broker
// destination made, listed, changed and deleted from the command line, with the API's
// answers and refusals, and no credential in what it prints.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::destinations_cli_e2e_test {
namespace {

using Json = nlohmann::json;

// The JSON a command printed: its last line that is a JSON object and not a log line
// (those carry "ts").
Json Printed(const std::string& out) {
  size_t end = out.size();
  while (end > 0) {
    const size_t start = out.rfind('\n', end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    Json line = Json::parse(out.substr(from, end - from), nullptr, false);
    if (line.is_object() && !line.contains("ts")) return line;
    if (start == std::string::npos) break;
    end = start;
  }
  return Json();
}

TEST(DestinationsCliE2eTest, ABrokerDestinationIsMadeListedChangedAndDeletedFromTheCommandLine) {
  TestDatabase db;
  const std::map<std::string, std::string> env = {{"DATABASE_URL", db.url()},
                                                  {"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "true"}};
  auto [made_code, made_out] = WebhookdProcess::RunCommand(
      {"destinations", "create",
       R"({"url": "redis://127.0.0.1:6390/2", "tenant_id": "acme",)"
       R"( "broker": {"stream": "orders", "password": "pw-secret-1"}})"},
      env);
  ASSERT_EQ(made_code, 0) << made_out;
  const Json made = Printed(made_out);
  ASSERT_TRUE(made.is_object()) << made_out;
  const std::string id = made.value("id", "");
  EXPECT_EQ(id.rfind("dst_", 0), 0u) << made_out;
  EXPECT_EQ(made["broker"]["stream"], "orders");
  EXPECT_EQ(made["broker"]["password"], "set");
  EXPECT_EQ(made.value("secret", "").rfind("whsec_", 0), 0u) << "create shows the secret once";
  EXPECT_EQ(made_out.find("pw-secret-1"), std::string::npos);

  auto [list_code, list_out] =
      WebhookdProcess::RunCommand({"destinations", "list", "--tenant", "acme"}, env);
  ASSERT_EQ(list_code, 0) << list_out;
  const Json listed = Printed(list_out);
  ASSERT_EQ(listed["data"].size(), 1u) << list_out;
  EXPECT_EQ(listed["data"][0]["id"], id);
  EXPECT_FALSE(listed["data"][0].contains("secret"));
  EXPECT_EQ(list_out.find("pw-secret-1"), std::string::npos);

  // A patch that keeps the password ("set") and moves to another stream.
  auto [update_code, update_out] = WebhookdProcess::RunCommand(
      {"destinations", "update", id, R"({"broker": {"stream": "other", "password": "set"}})"}, env);
  ASSERT_EQ(update_code, 0) << update_out;
  EXPECT_EQ(Printed(update_out)["broker"]["stream"], "other");
  EXPECT_EQ(Printed(update_out)["broker"]["password"], "set");

  // Refusals are the API's, printed as its problem, and leave nothing written.
  auto [misfit_code, misfit_out] = WebhookdProcess::RunCommand(
      {"destinations", "create", R"({"url": "redis://127.0.0.1:6390", "broker": {"topic": "t"}})"},
      env);
  EXPECT_EQ(misfit_code, 1) << misfit_out;
  EXPECT_EQ(Printed(misfit_out)["status"], 422) << misfit_out;
  EXPECT_NE(misfit_out.find("broker"), std::string::npos) << misfit_out;
  auto [private_code, private_out] =
      WebhookdProcess::RunCommand({"destinations", "create", R"({"url": "nats://127.0.0.1:4222"})"},
                                  {{"DATABASE_URL", db.url()}});
  EXPECT_EQ(private_code, 1) << private_out;
  EXPECT_EQ(Printed(private_out)["status"], 422) << private_out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "1");

  // Its stats: every hour of the day asked for, nothing delivered yet; a step not in the
  // list is the API's 422.
  auto [stats_code, stats_out] =
      WebhookdProcess::RunCommand({"destinations", "stats", id, "--since", "2026-12-01T00:00:00Z",
                                   "--until", "2026-12-02T00:00:00Z", "--step", "1h"},
                                  env);
  ASSERT_EQ(stats_code, 0) << stats_out;
  const Json stats = Printed(stats_out);
  ASSERT_EQ(stats["buckets"].size(), 24u) << stats_out;
  EXPECT_EQ(stats["buckets"][0]["start"], "2026-12-01T00:00:00.000000Z");
  EXPECT_EQ(stats["buckets"][23]["succeeded"], 0);
  auto [step_code, step_out] =
      WebhookdProcess::RunCommand({"destinations", "stats", id, "--step", "7m"}, env);
  EXPECT_EQ(step_code, 1) << step_out;
  EXPECT_EQ(Printed(step_out)["status"], 422) << step_out;

  auto [delete_code, delete_out] = WebhookdProcess::RunCommand({"destinations", "delete", id}, env);
  EXPECT_EQ(delete_code, 0) << delete_out;
  auto [gone_code, gone_out] = WebhookdProcess::RunCommand({"destinations", "get", id}, env);
  EXPECT_EQ(gone_code, 1) << gone_out;
  EXPECT_EQ(Printed(gone_out)["status"], 404) << gone_out;

  auto [usage_code, usage_out] = WebhookdProcess::RunCommand({"destinations", "create"}, env);
  EXPECT_EQ(usage_code, 2) << usage_out;
  auto [help_code, help_out] = WebhookdProcess::RunCommand({"destinations", "--help"}, env);
  EXPECT_EQ(help_code, 0);
  EXPECT_NE(help_out.find("webhookd destinations create JSON"), std::string::npos) << help_out;
}

}  // namespace
}  // namespace webhookd::testing::destinations_cli_e2e_test
