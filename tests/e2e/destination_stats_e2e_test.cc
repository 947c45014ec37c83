// A destination's stats end to end (GET /v1/destinations/{id}/stats): real deliveries to
// a real receiver are counted in their minute by outcome, with their latency; every key
// that may read the destination reads them, another tenant finds nothing; bad input is a
// 422 problem, never a 5xx.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "base/clock.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::destination_stats_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

class DestinationStatsE2eTest : public ::testing::Test {
 protected:
  DestinationStatsE2eTest()
      : webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", "200ms,200ms"},
                   {"WEBHOOKD_RETRY_JITTER", "0"},
                   {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                   {"WEBHOOKD_LEASE", "5s"}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200, const std::string& key = "") {
    auto res = webhookd_.Call(method, path, body, key);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return !res.body.empty() ? Json::parse(res.body, nullptr, false) : Json::object();
  }

  // Posts one event to `destination` and waits (10 s at most) until its delivery ends as
  // `status`.
  void Deliver(const std::string& destination, const std::string& status) {
    const Json event = Call(
        "POST", "/v1/events",
        {{"type", "order.created"}, {"payload", Json::object()}, {"destination_id", destination}},
        202);
    ASSERT_EQ(event["deliveries"].size(), 1u) << event;
    const std::string delivery = event["deliveries"][0]["id"];
    Json got;
    for (int i = 0; i < 100; ++i) {
      got = Call("GET", "/v1/deliveries/" + delivery);
      if (got["status"] == status) return;
      std::this_thread::sleep_for(100ms);
    }
    FAIL() << "delivery " << delivery << " is " << got;
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(DestinationStatsE2eTest, RealDeliveriesAreCountedByOutcomeWithTheirLatency) {
  // Two answered at once, one 100 ms late, then one refused (permanent, dead-lettered),
  // then one failing once (retryable) and answered on its retry.
  Receiver receiver([](const Received&, int nth) {
    Answer a;
    if (nth == 2) a.delay = 100ms;
    if (nth == 3) a.status = 400;
    if (nth == 4) a.status = 503;
    return a;
  });
  const std::string dst = Call("POST", "/v1/destinations", {{"url", receiver.url()}}, 201)["id"];
  Deliver(dst, "succeeded");
  Deliver(dst, "succeeded");
  Deliver(dst, "succeeded");
  Deliver(dst, "dead_lettered");
  Deliver(dst, "succeeded");

  // The default window: the last 24 hours in buckets of 5 minutes.
  const Json stats = Call("GET", "/v1/destinations/" + dst + "/stats");
  ASSERT_TRUE(stats["buckets"].is_array()) << stats;
  EXPECT_GE(stats["buckets"].size(), 288u);
  EXPECT_LE(stats["buckets"].size(), 289u);
  int64_t succeeded = 0, retryable = 0, permanent = 0, dead_lettered = 0;
  Json busiest;
  int64_t slowest = 0;
  for (const Json& b : stats["buckets"]) {
    succeeded += b["succeeded"].get<int64_t>();
    retryable += b["retryable"].get<int64_t>();
    permanent += b["permanent"].get<int64_t>();
    dead_lettered += b["dead_lettered"].get<int64_t>();
    if (b["succeeded"].get<int64_t>() > 0) busiest = b;
    if (b["p99_ms"].is_number()) slowest = std::max(slowest, b["p99_ms"].get<int64_t>());
    if (b["succeeded"] == 0 && b["retryable"] == 0 && b["permanent"] == 0) {
      EXPECT_TRUE(b["p50_ms"].is_null()) << b;
    }
  }
  EXPECT_EQ(succeeded, 4);
  EXPECT_EQ(retryable, 1);
  EXPECT_EQ(permanent, 1);
  EXPECT_EQ(dead_lettered, 1);
  ASSERT_TRUE(busiest.is_object()) << stats;
  EXPECT_TRUE(busiest["start"].is_string());
  EXPECT_TRUE(busiest["p50_ms"].is_number_integer()) << busiest;
  // The slowest attempt waited 100 ms for its answer.
  EXPECT_GE(slowest, 80) << stats;

  // The last ten minutes by the minute, and a day in one bucket: the same totals.
  for (const std::string& query :
       {"?step=1m&since=" + FormatRfc3339(SystemClock().Now() - 10min), std::string("?step=1d")}) {
    const Json narrow = Call("GET", "/v1/destinations/" + dst + "/stats" + query);
    int64_t all = 0;
    for (const Json& b : narrow["buckets"]) all += b["succeeded"].get<int64_t>();
    EXPECT_EQ(all, 4) << query << ": " << narrow;
  }
}

TEST_F(DestinationStatsE2eTest, EveryKeyThatReadsTheDestinationReadsItsStatsAndNoOtherTenant) {
  const std::string t_key =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "t", "--role", "tenant", "--tenant", "T"});
  const std::string u_key =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "u", "--role", "tenant", "--tenant", "U"});
  const std::string publisher =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "p", "--role", "publisher"});
  ASSERT_FALSE(t_key.empty());
  ASSERT_FALSE(u_key.empty());
  ASSERT_FALSE(publisher.empty());
  const std::string ts = Call("POST", "/v1/destinations",
                              {{"url", "http://127.0.0.1:9/t"}, {"tenant_id", "T"}}, 201)["id"];
  const std::string none =
      Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/n"}}, 201)["id"];
  const std::string query = "/stats?step=1h";
  struct Case {
    const char* who;
    std::string key;
    std::string destination;
    int want;
  };
  const Case cases[] = {
      {"admin", "", ts, 200},
      {"admin", "", none, 200},
      {"publisher", publisher, ts, 200},
      {"publisher", publisher, none, 200},
      {"tenant T", t_key, ts, 200},
      {"tenant T", t_key, none, 404},
      {"tenant U", u_key, ts, 404},
      {"tenant U", u_key, none, 404},
  };
  for (const Case& c : cases) {
    auto res = webhookd_.Call("GET", "/v1/destinations/" + c.destination + query, nullptr, c.key);
    EXPECT_EQ(res.status, c.want) << c.who << " " << c.destination << ": " << res.body;
    if (c.want == 404) {
      // Exactly as an id that names nothing.
      auto unknown =
          webhookd_.Call("GET", "/v1/destinations/dst_999999999" + query, nullptr, c.key);
      EXPECT_EQ(res.body, unknown.body) << c.who;
    } else {
      // The day before now, from the hour it began in.
      EXPECT_EQ(Json::parse(res.body)["buckets"].size(), 25u) << c.who;
    }
  }
  // A deleted destination has no stats either.
  Call("DELETE", "/v1/destinations/" + none, nullptr, 204);
  EXPECT_EQ(webhookd_.Call("GET", "/v1/destinations/" + none + query).status, 404);
}

TEST_F(DestinationStatsE2eTest, BadInputIsA422ProblemNeverAServerError) {
  const std::string dst =
      Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/h"}}, 201)["id"];
  const std::string path = "/v1/destinations/" + dst + "/stats";
  for (const std::string query :
       {"?step=7m", "?step=1M", "?step=60s", "?step=1",
        // since after until, and equal
        "?since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z",
        "?since=2026-12-01T00:00:00Z&until=2026-12-01T00:00:00Z",
        // 5,000 buckets of a minute; 1,001 days
        "?step=1m&since=2026-01-01T00:00:00Z&until=2026-01-04T11:20:00Z",
        "?step=1d&since=2020-01-01T00:00:00Z&until=2022-09-28T00:00:00Z",
        // 36 years: more than 1,000 buckets of the longest step, the default's
        "?since=1990-01-01T00:00:00Z&until=2026-01-01T00:00:00Z", "?since=yesterday",
        "?until=2026-13-01T00:00:00Z", "?since=2026-12-01",
        "?since=2026-12-01T00:00:00Z&step=5x"}) {
    auto res = webhookd_.Call("GET", path + query);
    EXPECT_EQ(res.status, 422) << query << ": " << res.body;
    EXPECT_NE(res.get_header_value("Content-Type").find("application/problem+json"),
              std::string::npos)
        << query;
  }
  // At the bound: 1,000 buckets.
  const Json thousand =
      Call("GET", path + "?step=1m&since=2026-01-01T00:00:00Z&until=2026-01-01T16:40:00Z");
  EXPECT_EQ(thousand["buckets"].size(), 1000u);
  EXPECT_EQ(thousand["buckets"][0]["start"], "2026-01-01T00:00:00.000000Z");
  // Ids that name no destination.
  for (const std::string id : {"dst_999999999", "dst_x", "evt_1", "1"}) {
    EXPECT_EQ(webhookd_.Call("GET", "/v1/destinations/" + id + "/stats").status, 404) << id;
  }
}

// The Overview's most failing destinations: a receiver that answers 503 is listed with
// its failed attempts and its dead letter; one that succeeds is not; only admin keys
// read it, and a bad window or limit is a 422 problem.
TEST_F(DestinationStatsE2eTest, TheOverviewListsTheDestinationsThatFailedMostInTheLastHour) {
  Receiver failing([](const Received&, int) {
    Answer a;
    a.status = 503;
    return a;
  });
  Receiver fine([](const Received&, int) { return Answer{}; });
  const std::string bad = Call("POST", "/v1/destinations",
                               {{"url", failing.url()}, {"description", "down"}}, 201)["id"];
  const std::string good = Call("POST", "/v1/destinations", {{"url", fine.url()}}, 201)["id"];
  Deliver(bad, "dead_lettered");  // three attempts: the first and two retries
  Deliver(good, "succeeded");

  const Json listed = Call("GET", "/v1/admin/stats/failing");
  EXPECT_EQ(listed["window"], "1h") << listed;
  ASSERT_EQ(listed["destinations"].size(), 1u) << listed;
  const Json& d = listed["destinations"][0];
  EXPECT_EQ(d["id"], bad);
  EXPECT_EQ(d["description"], "down");
  EXPECT_EQ(d["url"], failing.url());
  EXPECT_EQ(d["tenant_id"], nullptr);
  EXPECT_EQ(d["failed"], 3);
  EXPECT_EQ(d["succeeded"], 0);
  EXPECT_EQ(d["dead_lettered"], 1);
  EXPECT_EQ(Call("GET", "/v1/admin/stats/failing?window=5m&limit=1")["destinations"].size(), 1u);

  const std::string publisher =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "p", "--role", "publisher"});
  const std::string tenant =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "t", "--role", "tenant", "--tenant", "T"});
  EXPECT_EQ(webhookd_.Call("GET", "/v1/admin/stats/failing", nullptr, publisher).status, 403);
  EXPECT_EQ(webhookd_.Call("GET", "/v1/admin/stats/failing", nullptr, tenant).status, 403);
  for (const std::string query : {"?window=0s", "?window=30s", "?window=25h", "?window=x",
                                  "?limit=0", "?limit=1001", "?limit=ten"}) {
    auto res = webhookd_.Call("GET", "/v1/admin/stats/failing" + query);
    EXPECT_EQ(res.status, 422) << query << ": " << res.body;
    EXPECT_NE(res.get_header_value("Content-Type").find("application/problem+json"),
              std::string::npos)
        << query;
  }
}

}  // namespace
}  // namespace webhookd::testing::destination_stats_e2e_test
