// Protecting a struggling receiver (docs/api.md) end to end: the real binary, a real
// PostgreSQL and scripted receivers on loopback that record how many requests they had
// at once. The circuit breaker, the ramp after recovery, the cap after 429s, the rate
// limit across workers, one probe across workers, disabling, and the operational events.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/testing/gauge_receiver.h"
#include "tests/testing/receiver.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::protection_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Sixteen attempts a second or two apart (skips use attempts too): nothing is
// dead-lettered within a test's outage.
const std::map<std::string, std::string> kEnv = {
    {"WEBHOOKD_RETRY_SCHEDULE", "1s,1s,1s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s"},
    {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
    {"WEBHOOKD_LEASE", "5s"},
    {"WEBHOOKD_CIRCUIT_THRESHOLD", "3"},
    {"WEBHOOKD_CIRCUIT_COOLDOWN", "1s"}};

std::map<std::string, std::string> With(std::map<std::string, std::string> env,
                                        const std::map<std::string, std::string>& more) {
  for (const auto& [k, v] : more) env[k] = v;
  return env;
}

class ProtectionE2eTest : public ::testing::Test {
 protected:
  void Start(std::map<std::string, std::string> env = kEnv, const std::string& mode = "all") {
    webhookd_ = std::make_unique<WebhookdProcess>(db_.url(), mode, std::move(env));
  }
  WebhookdProcess& W() { return *webhookd_; }

  Json CreateDestination(Json body) {
    auto res = W().Call("POST", "/v1/destinations", body);
    EXPECT_EQ(res.status, 201) << res.body;
    return res.status == 201 ? Json::parse(res.body) : Json::object();
  }

  void PostEvents(int n) {
    for (int i = 0; i < n; ++i) {
      auto res =
          W().Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"i", i}}}});
      ASSERT_EQ(res.status, 202) << res.body;
    }
  }

  Json Get(const std::string& path) {
    auto res = W().Call("GET", path);
    EXPECT_EQ(res.status, 200) << path << ": " << res.body;
    return res.status == 200 ? Json::parse(res.body) : Json::object();
  }

  Json Health(const Json& dest) { return Get("/v1/destinations/" + dest["id"].get<std::string>()); }

  // The operational events `ops` received, by type, each checked against its signature.
  std::map<std::string, std::vector<Json>> OperationalEvents(Receiver& ops,
                                                             const std::string& secret) {
    std::map<std::string, std::vector<Json>> out;
    for (const Received& r : ops.requests()) {
      EXPECT_EQ(
          r.header("webhook-signature"),
          ExpectedSignature(secret, r.header("webhook-id"), r.header("webhook-timestamp"), r.body));
      const Json body = Json::parse(r.body);
      out[body["type"]].push_back(body["data"]);
    }
    return out;
  }

  TestDatabase db_;
  std::unique_ptr<WebhookdProcess> webhookd_;
};

// The seed story in small: a receiver down for a while gets its first wave and the
// probes, nothing else; when it is back, every event arrives, in a ramp from one request
// at a time, and the operator's endpoint hears of the opening and the recovery once each.
TEST_F(ProtectionE2eTest, AnOutageGetsOnlyProbesAndTheRecoveryIsARamp) {
  Start();
  std::atomic<bool> up = false;
  // Held long enough that deliveries falling due meanwhile pile up: without a ramp they
  // would all go at once when the probe succeeds.
  GaugeReceiver gauge(400ms, [&](int) { return up ? 200 : 500; });
  Receiver ops;
  const Json ops_dest = CreateDestination({{"url", ops.url()}, {"event_types", {"webhookd.*"}}});
  const Json dest =
      CreateDestination({{"url", gauge.url()}, {"event_types", {"order.*"}}, {"max_in_flight", 8}});
  PostEvents(24);

  ASSERT_TRUE(WaitUntil([&] { return Health(dest)["health"]["circuit"] == "open"; }, 15s))
      << Health(dest).dump();
  const size_t at_open = gauge.count();
  EXPECT_LE(at_open, 8u + 3u);  // the first wave (the cap) and what its outcomes let through
  const Json open = Health(dest)["health"];
  EXPECT_GE(open["consecutive_failures"].get<int>(), 3);
  EXPECT_FALSE(open["failing_since"].is_null());
  EXPECT_FALSE(open["next_probe_at"].is_null());

  // 3.5 s of outage: probes at about 1 s and then 2 s after that (±20 %), one each.
  std::this_thread::sleep_for(3500ms);
  const size_t probes = gauge.count() - at_open;
  EXPECT_GE(probes, 1u);
  EXPECT_LE(probes, 3u);
  for (const auto& s : gauge.seen()) EXPECT_LE(s.concurrent, 8);

  const auto recovered_at = Clock::now();
  up = true;
  ASSERT_TRUE(WaitUntil([&] { return gauge.delivered() == 24; }, 40s)) << gauge.delivered();

  std::vector<int> ramp;
  for (const auto& s : gauge.seen())
    if (s.at > recovered_at) ramp.push_back(s.concurrent);
  ASSERT_GE(ramp.size(), 24u);
  EXPECT_EQ(ramp[0], 1) << "the probe goes alone";
  // Then one, then two (each success doubles the cap, so two at once make it eight).
  EXPECT_LE(*std::max_element(ramp.begin(), ramp.begin() + 4), 2);
  EXPECT_LE(*std::max_element(ramp.begin(), ramp.end()), 8);

  ASSERT_TRUE(WaitUntil([&] { return Health(dest)["health"]["circuit"] == "closed"; }, 10s));
  const Json healthy = Health(dest);
  EXPECT_EQ(healthy["health"]["consecutive_failures"], 0);
  EXPECT_TRUE(healthy["health"]["failing_since"].is_null());
  EXPECT_TRUE(healthy["health"]["next_probe_at"].is_null());
  EXPECT_TRUE(healthy["enabled"]);

  // Skipped attempts are in the history, with no status and the reason.
  const Json deliveries =
      Get("/v1/deliveries?destination_id=" + dest["id"].get<std::string>() + "&limit=100")["data"];
  int skipped = 0;
  for (const Json& d : deliveries) {
    const Json attempts = Get("/v1/deliveries/" + d["id"].get<std::string>() + "/attempts");
    for (const Json& a : attempts["data"]) {
      if (a["outcome"] != "skipped") continue;
      ++skipped;
      EXPECT_EQ(a["error"], "circuit open");
      EXPECT_TRUE(a["status_code"].is_null());
    }
  }
  EXPECT_GT(skipped, 0);

  ASSERT_TRUE(WaitUntil([&] { return ops.count() >= 2; }, 15s));
  std::this_thread::sleep_for(500ms);  // anything more would arrive now
  const auto events = OperationalEvents(ops, ops_dest["secret"]);
  ASSERT_EQ(events.count("webhookd.destination.circuit_opened"), 1u);
  ASSERT_EQ(events.at("webhookd.destination.circuit_opened").size(), 1u);
  const Json opened = events.at("webhookd.destination.circuit_opened")[0];
  EXPECT_EQ(opened["destination_id"], dest["id"]);
  EXPECT_TRUE(opened["tenant_id"].is_null());
  EXPECT_GE(opened["consecutive_failures"].get<int>(), 3);
  EXPECT_EQ(opened["last_error"], "HTTP 500");
  ASSERT_EQ(events.count("webhookd.destination.recovered"), 1u);
  ASSERT_EQ(events.at("webhookd.destination.recovered").size(), 1u);
  EXPECT_EQ(events.at("webhookd.destination.recovered")[0]["destination_id"], dest["id"]);
  EXPECT_EQ(events.size(), 2u);

  auto metrics = W().Client()->Get("/metrics");
  ASSERT_TRUE(metrics);
  for (const std::string line :
       {"webhookd_circuit_transitions_total{to=\"open\"}",
        "webhookd_circuit_transitions_total{to=\"half_open\"}",
        "webhookd_circuit_transitions_total{to=\"closed\"} 1", "webhookd_attempts_skipped_total"}) {
    EXPECT_NE(metrics->body.find(line), std::string::npos) << line;
  }
  EXPECT_EQ(metrics->body.find("webhookd_attempts_skipped_total 0\n"), std::string::npos);
}

// 429s halve the cap in force, which the receiver feels at once, and runs of successes
// raise it back to max_in_flight; the circuit is not involved.
TEST_F(ProtectionE2eTest, A429StormLowersTheCapAndItComesBack) {
  Start(With(kEnv, {{"WEBHOOKD_RETRY_SCHEDULE", "300ms,300ms,300ms,300ms"}}));
  GaugeReceiver gauge(50ms, [](int nth) { return nth < 6 ? 429 : 200; });
  const Json dest =
      CreateDestination({{"url", gauge.url()}, {"event_types", {"order.*"}}, {"max_in_flight", 8}});
  // The cap is watched from before the first event: on a slow machine the storm can be over
  // and the cap back at 8 by the time the last event is posted.
  std::atomic<int> lowest{8};
  struct Watch {
    std::atomic<bool> done{false};
    std::thread thread;
    ~Watch() {
      done = true;
      if (thread.joinable()) thread.join();
    }
  } watch;
  const std::string path = "/v1/destinations/" + dest["id"].get<std::string>();
  watch.thread = std::thread([&] {
    while (!watch.done) {
      const Json got = Json::parse(W().Call("GET", path).body, nullptr, false);
      const Json::json_pointer cap("/health/effective_max_in_flight");
      if (got.is_object() && got.contains(cap) && got.at(cap).is_number_integer()) {
        lowest = std::min(lowest.load(), got.at(cap).get<int>());
      }
      std::this_thread::sleep_for(10ms);
    }
  });
  PostEvents(40);
  ASSERT_TRUE(WaitUntil([&] { return gauge.delivered() == 40; }, 60s, 10ms)) << gauge.delivered();
  watch.done = true;
  watch.thread.join();
  EXPECT_LT(lowest.load(), 8);
  const auto seen = gauge.seen();
  ASSERT_GE(seen.size(), 46u);
  // The first wave had the whole cap; once the 429s are written the receiver gets at
  // most a few at once while the cap climbs back by one per run of successes.
  int after_storm = 0;
  for (size_t i = 10; i < 16; ++i) after_storm = std::max(after_storm, seen[i].concurrent);
  EXPECT_LE(after_storm, 4);

  ASSERT_TRUE(
      WaitUntil([&] { return Health(dest)["health"]["effective_max_in_flight"] == 8; }, 10s))
      << Health(dest).dump();
  const Json h = Health(dest)["health"];
  EXPECT_EQ(h["circuit"], "closed");
  EXPECT_EQ(h["consecutive_failures"], 0);
}

// rate_limit r: in any window of T seconds at most r × (T + 1) attempts start, with three
// workers claiming.
TEST_F(ProtectionE2eTest, TheRateLimitHoldsAcrossThreeWorkers) {
  Start(kEnv, "server");
  std::vector<std::unique_ptr<WebhookdProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(std::make_unique<WebhookdProcess>(db_.url(), "worker", kEnv));
  GaugeReceiver gauge(0ms, [](int) { return 200; });
  CreateDestination({{"url", gauge.url()}, {"event_types", {"order.*"}}, {"rate_limit", 5}});
  PostEvents(30);
  ASSERT_TRUE(WaitUntil([&] { return gauge.delivered() == 30; }, 30s)) << gauge.delivered();

  const auto seen = gauge.seen();
  for (size_t i = 0; i < seen.size(); ++i) {
    for (size_t j = i; j < seen.size(); ++j) {
      const double t = std::chrono::duration<double>(seen[j].at - seen[i].at).count();
      // The bucket is spent at the claim; a request arrives later by a varying delay (a
      // worker's first connection, its queue; more on a loaded machine), so half a second
      // of slack on the window. The exact bound is protection_pgtest's, on the claims.
      EXPECT_LE(static_cast<double>(j - i + 1), 5 * (t + 0.5 + 1)) << i << ".." << j;
    }
  }
  // 30 at 5 per second with a full bucket of 5 to start: not much under 5 s.
  EXPECT_GE(std::chrono::duration<double>(seen.back().at - seen.front().at).count(), 4.0);
}

// Two workers share one circuit: once it is open, the receiver never has two requests.
TEST_F(ProtectionE2eTest, TwoWorkersNeverProbeAtOnce) {
  const auto env =
      With(kEnv, {{"WEBHOOKD_CIRCUIT_THRESHOLD", "2"}, {"WEBHOOKD_CIRCUIT_COOLDOWN", "300ms"}});
  Start(env, "server");
  WebhookdProcess one(db_.url(), "worker", env);
  WebhookdProcess two(db_.url(), "worker", env);
  GaugeReceiver gauge(200ms, [](int) { return 500; });
  const Json dest = CreateDestination({{"url", gauge.url()}, {"event_types", {"order.*"}}});
  PostEvents(20);
  ASSERT_TRUE(WaitUntil([&] { return Health(dest)["health"]["circuit"] != "closed"; }, 15s));
  const auto opened = Clock::now();
  std::this_thread::sleep_for(4s);
  int probes = 0;
  for (const auto& s : gauge.seen()) {
    if (s.at < opened + 500ms) continue;  // the first wave has ended by then
    ++probes;
    EXPECT_EQ(s.concurrent, 1);
  }
  // Cooldowns of 0.3, 0.6, 1.2 and 2.4 s (±20 %): two to four probes in the 3.5 s.
  EXPECT_GE(probes, 2);
  EXPECT_LE(probes, 5);
}

// Failing for longer than WEBHOOKD_DISABLE_AFTER disables ("failing"); a 410 disables
// ("gone"); each is published once; enabling clears the reason and the health.
TEST_F(ProtectionE2eTest, FailingTooLongAndGoneDisableWithAnEventEach) {
  Start(With(kEnv, {{"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"}, {"WEBHOOKD_DISABLE_AFTER", "2s"}}));
  Receiver ops;
  const Json ops_dest = CreateDestination({{"url", ops.url()}, {"event_types", {"webhookd.*"}}});
  GaugeReceiver failing(0ms, [](int) { return 500; });
  GaugeReceiver gone(0ms, [](int) { return 410; });
  const Json a = CreateDestination({{"url", failing.url()}, {"event_types", {"order.*"}}});
  const Json b = CreateDestination({{"url", gone.url()}, {"event_types", {"order.*"}}});
  PostEvents(1);

  ASSERT_TRUE(WaitUntil([&] { return Health(a)["disabled_reason"] == "failing"; }, 20s))
      << Health(a).dump();
  EXPECT_FALSE(Health(a)["enabled"]);
  EXPECT_EQ(Health(b)["disabled_reason"], "gone");
  EXPECT_FALSE(Health(b)["enabled"]);
  const size_t attempts = failing.count();
  EXPECT_GE(attempts, 2u);

  // Disabled: its delivery waits, unattempted.
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(failing.count(), attempts);

  ASSERT_TRUE(WaitUntil([&] { return ops.count() >= 3; }, 15s)) << ops.count();
  std::this_thread::sleep_for(500ms);
  const auto events = OperationalEvents(ops, ops_dest["secret"]);
  ASSERT_EQ(events.count("webhookd.destination.disabled"), 1u);
  std::map<std::string, std::string> reasons;
  for (const Json& e : events.at("webhookd.destination.disabled"))
    reasons[e["destination_id"]] = e["reason"];
  EXPECT_EQ(reasons, (std::map<std::string, std::string>{{a["id"], "failing"}, {b["id"], "gone"}}));
  ASSERT_EQ(events.count("webhookd.delivery.dead_lettered"), 1u);
  ASSERT_EQ(events.at("webhookd.delivery.dead_lettered").size(), 1u);
  const Json dead = events.at("webhookd.delivery.dead_lettered")[0];
  EXPECT_EQ(dead["destination_id"], b["id"]);
  EXPECT_EQ(dead["reason"], "permanent_failure");
  EXPECT_TRUE(dead["dead_letter_id"].get<std::string>().starts_with("dlq_"));
  EXPECT_TRUE(dead["delivery_id"].get<std::string>().starts_with("dlv_"));
  EXPECT_TRUE(dead["event_id"].get<std::string>().starts_with("evt_"));

  // Enabling clears the reason and the health; the waiting delivery is tried again.
  auto res =
      W().Call("PATCH", "/v1/destinations/" + a["id"].get<std::string>(), {{"enabled", true}});
  ASSERT_EQ(res.status, 200) << res.body;
  const Json enabled = Json::parse(res.body);
  EXPECT_TRUE(enabled["disabled_reason"].is_null());
  EXPECT_EQ(enabled["health"]["consecutive_failures"], 0);
  EXPECT_TRUE(enabled["health"]["failing_since"].is_null());
  EXPECT_TRUE(WaitUntil([&] { return failing.count() > attempts; }, 10s));

  res = W().Call("PATCH", "/v1/destinations/" + a["id"].get<std::string>(), {{"enabled", false}});
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Json::parse(res.body)["disabled_reason"], "manual");
}

}  // namespace
}  // namespace webhookd::testing::protection_e2e_test
