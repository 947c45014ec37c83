// GET /v1/admin/stats/series, the console's chart data: the window in whole steps,
// oldest first, each point counting what happened in it.
#include <gtest/gtest.h>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::stats_series_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(StatsSeriesE2eTest, PointsCountTheAttemptsOfTheirStep) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all",
                           {{"WEBHOOKD_RETRY_SCHEDULE", "1s"}, {"WEBHOOKD_RETRY_JITTER", "0"}});
  Receiver flaky([](const Received&, int nth) { return Answer{nth == 0 ? 503 : 200, "", {}, {}}; });
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", flaky.url()}}).status, 201);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(
        webhookd.Call("POST", "/v1/events", {{"type", "t"}, {"payload", Json::object()}}).status,
        202);
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = webhookd.Call("GET", "/v1/deliveries?status=succeeded");
        return Json::parse(r.body)["data"].size() == 3;
      },
      20s));

  auto res = webhookd.Call("GET", "/v1/admin/stats/series?window=10m&step=1m");
  ASSERT_EQ(res.status, 200) << res.body;
  const Json body = Json::parse(res.body);
  EXPECT_EQ(body["window"], "10m");
  EXPECT_EQ(body["step"], "1m");
  ASSERT_EQ(body["points"].size(), 10u);
  int64_t attempts = 0, successes = 0, failures = 0;
  std::string previous;
  for (const Json& p : body["points"]) {
    attempts += p["attempts"].get<int64_t>();
    successes += p["successes"].get<int64_t>();
    failures += p["failures"].get<int64_t>();
    EXPECT_GT(p["at"].get<std::string>(), previous);  // oldest first
    previous = p["at"];
  }
  EXPECT_EQ(attempts, 4);  // the first one failed once
  EXPECT_EQ(successes, 3);
  EXPECT_EQ(failures, 1);
  // The newest point holds them: they all happened in the last minute.
  EXPECT_EQ(body["points"].back()["attempts"], 4);

  for (const char* bad : {"window=10m&step=3m", "window=24h&step=1s", "step=0s", "step=x"}) {
    auto r = webhookd.Call("GET", std::string("/v1/admin/stats/series?") + bad);
    EXPECT_EQ(r.status, 422) << bad << " " << r.body;
  }
  // Admin only.
  auto keys = WebhookdProcess::RunCommand({"keys", "create", "--role", "publisher"},
                                          {{"DATABASE_URL", db.url()}});
  ASSERT_EQ(keys.first, 0) << keys.second;
  const std::string key = keys.second.substr(keys.second.rfind("whk_"), 47);
  EXPECT_EQ(webhookd.Call("GET", "/v1/admin/stats/series", nullptr, key).status, 403);
}

}  // namespace
}  // namespace webhookd::testing::stats_series_e2e_test
