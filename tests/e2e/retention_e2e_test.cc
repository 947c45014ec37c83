// Retention end to end: with WEBHOOKD_RETENTION=2s, a delivered event is gone within the
// purge interval, one still retrying stays, and the purge is counted; `webhookd retention
// status` lists the history's partitions.
#include <gtest/gtest.h>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::retention_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(RetentionE2eTest, AFinishedEventIsPurgedAndARetryingOneStays) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all",
                           {{"WEBHOOKD_RETENTION", "2s"}, {"WEBHOOKD_RETRY_SCHEDULE", "1h"}});
  Receiver ok;
  Receiver failing([](const Received&, int) { return Status(500); });
  auto a = webhookd.Call("POST", "/v1/destinations", {{"url", ok.url()}, {"event_types", {"ok"}}});
  auto b = webhookd.Call("POST", "/v1/destinations",
                         {{"url", failing.url()}, {"event_types", {"fail"}}});
  ASSERT_EQ(a.status, 201);
  ASSERT_EQ(b.status, 201);
  auto done = webhookd.Call("POST", "/v1/events", {{"type", "ok"}, {"payload", Json::object()}});
  auto retrying =
      webhookd.Call("POST", "/v1/events", {{"type", "fail"}, {"payload", Json::object()}});
  ASSERT_EQ(done.status, 202);
  ASSERT_EQ(retrying.status, 202);
  const std::string done_id = Json::parse(done.body)["id"];
  const std::string retrying_id = Json::parse(retrying.body)["id"];
  ASSERT_TRUE(ok.WaitFor(1, 10s));
  ASSERT_TRUE(failing.WaitFor(1, 10s));

  // Two seconds of age plus one purge interval (5 s) and some slack.
  EXPECT_TRUE(
      WaitUntil([&] { return webhookd.Call("GET", "/v1/events/" + done_id).status == 404; }, 15s));
  EXPECT_EQ(webhookd.Call("GET", "/v1/events/" + retrying_id).status, 200);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM delivery_rows"), "1");
  // The purge counts what it removed just after its transaction: poll, as for the 404.
  EXPECT_TRUE(WaitUntil(
      [&] {
        return webhookd.Call("GET", "/metrics").body.find("\nwebhookd_purged_events_total 1\n") !=
               std::string::npos;
      },
      10s));
}

TEST(RetentionE2eTest, TheStatusListsEachDaysPartitionsWhenTheyGoAndTheKept) {
  TestDatabase db;
  auto [code, out] = WebhookdProcess::RunCommand(
      {"retention", "status"}, {{"DATABASE_URL", db.url()}, {"WEBHOOKD_RETENTION", "30d"}});
  ASSERT_EQ(code, 0) << out;
  const std::string today = db.Scalar("SELECT (now() AT TIME ZONE 'UTC')::date::text");
  const std::string goes =
      db.Scalar("SELECT to_char((now() AT TIME ZONE 'UTC')::date + 31, 'YYYY-MM-DD')");
  EXPECT_NE(out.find("day         table"), std::string::npos) << out;
  EXPECT_NE(out.find(today + "  events"), std::string::npos) << out;
  EXPECT_NE(out.find(goes + "T00:00:00.000000Z"), std::string::npos) << out;
  EXPECT_NE(out.find("kept        dead_letters"), std::string::npos) << out;
  EXPECT_NE(out.find("once finished"), std::string::npos) << out;

  auto [forever_code, forever] = WebhookdProcess::RunCommand(
      {"retention", "status"}, {{"DATABASE_URL", db.url()}, {"WEBHOOKD_RETENTION", "0"}});
  ASSERT_EQ(forever_code, 0) << forever;
  EXPECT_NE(forever.find("never"), std::string::npos) << forever;
  auto [bad, usage] = WebhookdProcess::RunCommand({"retention", "drop"}, {});
  EXPECT_EQ(bad, 2) << usage;
}

}  // namespace
}  // namespace webhookd::testing::retention_e2e_test
