// The story receiver protection exists for: 4,000 deliveries queued for a destination that
// is down for a while and then comes back (more than two seconds of the destination's cap,
// 32 in flight at 20 ms a request, so the first second after it is a flood without the
// breaker). Run with the circuit breaker and without it (a threshold no outage reaches),
// the receiver records every request, how many it was holding at once and when; the test
// prints what the receiver saw during the outage and in the first second after it came
// back, and checks that the breaker spared it the outage traffic and the flood, and that
// every delivery arrived either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "tests/testing/gauge_receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::breaker_fault_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kDeliveries = 4'000;
constexpr int kCap = 32;  // the destination's max_in_flight; the receiver has 32 threads
constexpr auto kOutage = 5s;

struct Seen {
  size_t during_outage = 0;     // requests while the receiver was down
  double resumed_after_s = 0;   // from its recovery to the first request after it
  size_t first_second = 0;      // requests in the first second from that request
  size_t first_100ms = 0;       // ... and in its first 100 ms
  int peak_concurrency_1s = 0;  // the most it held at once in that second
  double peak_rate_per_s = 0;   // the busiest 100 ms of that second, per second
  int first_concurrency = 0;    // what the first request after recovery found
  double drain_s = 0;           // from recovery to the last delivery
};

Seen RunStory(bool breaker) {
  TestDatabase db;
  std::atomic<bool> up = false;
  // Down as a crashed service is: 500s (a 503 or 429 would also halve the cap).
  GaugeReceiver receiver(20ms, [&](int) { return up ? 200 : 500; });
  std::map<std::string, std::string> env = {
      {"WEBHOOKD_RETRY_SCHEDULE", "1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s"},
      {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
      {"WEBHOOKD_LEASE", "10s"},
      {"WEBHOOKD_LOG_LEVEL", "info"},
      {"WEBHOOKD_CIRCUIT_COOLDOWN", "1s"},
      {"WEBHOOKD_CIRCUIT_THRESHOLD", breaker ? "10" : "1000000"}};
  // The server alone first, so the backlog is in place before a worker looks.
  auto server = std::make_unique<WebhookdProcess>(db.url(), "server", env);
  auto res =
      server->Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"max_in_flight", kCap}});
  EXPECT_EQ(res.status, 201) << res.body;
  const std::string dst = Json::parse(res.body)["id"];
  // The backlog, as 4,000 ingests would leave it (one statement keeps the test short).
  db.Exec(
      "INSERT INTO webhookd.events (type, payload)"
      " SELECT 'order.created', '{\"i\":' || i || '}' FROM generate_series(1, " +
      std::to_string(kDeliveries) + ") i");
  db.Exec(
      "INSERT INTO webhookd.deliveries (event_id, destination_id)"
      " SELECT id, " +
      dst.substr(4) + " FROM webhookd.events");

  WebhookdProcess worker(db.url(), "worker", env);
  std::this_thread::sleep_for(kOutage);
  const auto recovered = Clock::now();
  up = true;
  EXPECT_TRUE(WaitUntil([&] { return receiver.delivered() == kDeliveries; }, 120s, 100ms))
      << receiver.delivered();

  Seen s;
  std::array<size_t, 10> per_100ms{};
  std::optional<Clock::time_point> resumed;
  Clock::time_point last;
  for (const auto& r : receiver.seen()) {
    if (r.at < recovered) {
      ++s.during_outage;
      continue;
    }
    last = std::max(last, r.at);
    if (!resumed) {
      resumed = r.at;
      s.first_concurrency = r.concurrent;
    }
    const auto after = r.at - *resumed;
    if (after >= 1s) continue;
    ++s.first_second;
    if (after < 100ms) ++s.first_100ms;
    s.peak_concurrency_1s = std::max(s.peak_concurrency_1s, r.concurrent);
    ++per_100ms[static_cast<size_t>(after / 100ms)];
  }
  if (resumed) s.resumed_after_s = std::chrono::duration<double>(*resumed - recovered).count();
  s.peak_rate_per_s =
      10.0 * static_cast<double>(*std::max_element(per_100ms.begin(), per_100ms.end()));
  s.drain_s = std::chrono::duration<double>(last - recovered).count();
  std::printf(
      "breaker %-3s: %zu requests during the %llds outage; traffic resumed %.1f s after the "
      "recovery, its first request found %d in flight; in its first 100 ms %zu requests, in "
      "its first second %zu, peak concurrency %d, peak rate %.0f/s (per 100 ms); all %d "
      "delivered %.1f s after the recovery\n",
      breaker ? "on" : "off", s.during_outage,
      static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(kOutage).count()),
      s.resumed_after_s, s.first_concurrency, s.first_100ms, s.first_second, s.peak_concurrency_1s,
      s.peak_rate_per_s, kDeliveries, s.drain_s);
  std::fflush(stdout);
  return s;
}

TEST(BreakerFaultTest, ABacklogQueuedForADestinationThatComesBack) {
  const Seen off = RunStory(false);
  const Seen on = RunStory(true);

  // Without the breaker every due delivery is tried through the outage; with it the
  // receiver gets the first wave (the cap), what was already claimed, and the probes.
  // Without it, more than with it: about 1,700 against 34 on a quiet machine. How many
  // waves the worker gets through in the outage is the machine's: 128 beside the suite's
  // other tests, 70 beside a benchmark as well, so no fixed count holds for the run
  // without the breaker; the bound is the breaker's.
  EXPECT_LE(on.during_outage, 2u * kCap + 10u);
  EXPECT_GT(off.during_outage, on.during_outage);
  // Recovery: a probe alone, then a ramp (1, 2, 4, ... so the cap is reached within the
  // first second either way), against the whole backlog at the whole cap at once.
  EXPECT_EQ(on.first_concurrency, 1);
  EXPECT_LT(on.first_100ms, off.first_100ms);
  // How high the run without the breaker climbs in its first second is the machine's (16
  // of 32 on a quiet one, 11 under CI's load); that it is more than the probe is not.
  EXPECT_GT(off.peak_concurrency_1s, on.first_concurrency);
}

}  // namespace
}  // namespace webhookd::testing::breaker_fault_test
