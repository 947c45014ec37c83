// After a scripted run (successes, retries, a dead letter, a replay), /metrics and
// /v1/admin/stats say exactly what happened, and no log line holds a secret or a key.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::observability_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// The value of one sample line of a Prometheus text, or -1 when absent.
double Sample(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  const size_t start = at + series.size() + 2;
  return std::stod(text.substr(start, text.find('\n', start) - start));
}

TEST(ObservabilityE2eTest, MetricsAndStatsMatchAScriptedRunExactly) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all",
                           {{"WEBHOOKD_RETRY_SCHEDULE", "1s,1s"}, {"WEBHOOKD_RETRY_JITTER", "0"}});
  Receiver ok;
  Receiver flaky([](const Received&, int nth) { return Status(nth == 0 ? 500 : 200); });
  std::atomic<bool> fixed{false};
  Receiver broken([&](const Received&, int) { return Status(fixed ? 200 : 500); });

  std::vector<std::string> secrets;
  for (Receiver* r : {&ok, &flaky, &broken}) {
    auto res = webhookd.Call("POST", "/v1/destinations",
                             {{"url", r->url()}, {"headers", {{"X-Tenant", "t-secret-header"}}}});
    ASSERT_EQ(res.status, 201) << res.body;
    secrets.push_back(Json::parse(res.body)["secret"]);
  }
  auto posted =
      webhookd.Call("POST", "/v1/events",
                    {{"type", "order.created"}, {"payload", {{"card", "PAYLOAD-MARKER-4242"}}}});
  ASSERT_EQ(posted.status, 202) << posted.body;

  // ok: 1 attempt; flaky: 500 then 200; broken: 3 x 500 then a dead letter.
  ASSERT_TRUE(broken.WaitFor(3, 10s));
  std::string dead_letter_id;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = webhookd.Call("GET", "/v1/admin/dead-letters");
        auto data = Json::parse(r.body)["data"];
        if (data.empty()) return false;
        dead_letter_id = data[0]["id"];
        return true;
      },
      10s));
  fixed = true;
  ASSERT_EQ(webhookd.Call("POST", "/v1/admin/dead-letters/" + dead_letter_id + "/replay").status,
            202);
  ASSERT_TRUE(broken.WaitFor(4, 10s));
  ASSERT_TRUE(flaky.WaitFor(2, 10s));

  // Outcomes are written in batches: wait until all three deliveries are settled.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = webhookd.Call("GET", "/v1/deliveries?status=succeeded");
        return Json::parse(r.body)["data"].size() == 3;
      },
      10s));

  // The recorder counts outcomes just after it writes them: a read of /metrics right after
  // the API shows them can come in between.
  httplib::Response metrics;
  ASSERT_TRUE(WaitUntil(
      [&] {
        metrics = webhookd.Call("GET", "/metrics");
        return metrics.status == 200 &&
               Sample(metrics.body, "webhookd_delivery_latency_seconds_count") == 3;
      },
      10s))
      << metrics.body;
  const std::string& m = metrics.body;
  EXPECT_EQ(Sample(m, "webhookd_events_ingested_total"), 1);
  EXPECT_EQ(Sample(m, "webhookd_deliveries_created_total"), 3);
  EXPECT_EQ(Sample(m, "webhookd_delivery_attempts_total{outcome=\"success\"}"), 3);
  EXPECT_EQ(Sample(m, "webhookd_delivery_attempts_total{outcome=\"retryable\"}"), 4);
  EXPECT_EQ(Sample(m, "webhookd_delivery_attempts_total{outcome=\"permanent\"}"), 0);
  EXPECT_EQ(Sample(m, "webhookd_deliveries_succeeded_total"), 3);
  EXPECT_EQ(Sample(m, "webhookd_dead_letters_total{reason=\"exhausted\"}"), 1);
  EXPECT_EQ(Sample(m, "webhookd_dead_letters_total{reason=\"permanent_failure\"}"), 0);
  EXPECT_EQ(Sample(m, "webhookd_replays_total"), 1);
  EXPECT_EQ(Sample(m, "webhookd_delivery_attempt_duration_seconds_count"), 7);
  EXPECT_EQ(Sample(m, "webhookd_delivery_latency_seconds_count"), 3);
  EXPECT_EQ(Sample(m, "webhookd_http_requests_total{route=\"/v1/events\",code=\"202\"}"), 1);

  auto stats = webhookd.Call("GET", "/v1/admin/stats?window=1h");
  ASSERT_EQ(stats.status, 200) << stats.body;
  const Json s = Json::parse(stats.body);
  EXPECT_EQ(s["attempts"], 7);
  EXPECT_DOUBLE_EQ(s["retry_rate"].get<double>(), 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(s["dead_letter_rate"].get<double>(), 1.0 / 4.0);
  EXPECT_DOUBLE_EQ(s["avg_attempts_to_success"].get<double>(), (1.0 + 2.0 + 4.0) / 3.0);
  EXPECT_DOUBLE_EQ(s["second_attempt_success_rate"].get<double>(), 0.5);
  EXPECT_EQ(s["pending"], 0);
  EXPECT_EQ(s["in_flight"], 0);
  EXPECT_EQ(s["retrying_over_24h"], 0);
  EXPECT_EQ(webhookd.Call("GET", "/v1/admin/stats?window=banana").status, 422);

  // Nothing secret in any log line, at debug level.
  webhookd.process().Signal(SIGTERM);
  ASSERT_EQ(webhookd.process().Wait(20s), 0);
  const std::string log = ReadFile(webhookd.log_path());
  ASSERT_NE(log.find("\"msg\":\"attempt\""), std::string::npos) << "debug lines expected";
  ASSERT_NE(log.find("\"msg\":\"dead-lettered\""), std::string::npos);
  ASSERT_NE(log.find("\"msg\":\"replayed a dead letter\""), std::string::npos);
  // The port bound is a log line too, not a plain line among them.
  EXPECT_NE(log.find("\"msg\":\"listening\",\"addr\":\"127.0.0.1:" +
                     std::to_string(webhookd.port()) + "\""),
            std::string::npos);
  EXPECT_EQ(log.find(webhookd.admin_key()), std::string::npos);
  for (const auto& secret : secrets) {
    EXPECT_EQ(log.find(secret.substr(6)), std::string::npos) << "a destination secret leaked";
  }
  for (const char* needle :
       {"whsec_", "whk_", "Bearer", "PAYLOAD-MARKER-4242", "t-secret-header"}) {
    EXPECT_EQ(log.find(needle), std::string::npos) << needle << " in the log";
  }
  // Every line is one JSON object with ts, level and msg.
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const Json j = Json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    EXPECT_TRUE(j.contains("ts") && j.contains("level") && j.contains("msg")) << line;
  }
}

TEST(ObservabilityE2eTest, TheWorkerServesItsOwnHealthAndMetrics) {
  TestDatabase db;
  const int port = FreePort();
  WebhookdProcess worker(db.url(), "worker",
                         {{"WEBHOOKD_WORKER_ADDR", "127.0.0.1:" + std::to_string(port)}});
  httplib::Client client("127.0.0.1", port);
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = client.Get("/healthz");
        return r && r->status == 200;
      },
      10s));
  auto ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("# TYPE webhookd_delivery_attempts_total counter"),
            std::string::npos);
  // The worker serves no API.
  auto api = client.Get("/v1/events");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 404);
  worker.process().Signal(SIGTERM);
  EXPECT_EQ(worker.process().Wait(20s), 0);
}

}  // namespace
}  // namespace webhookd::testing::observability_e2e_test
