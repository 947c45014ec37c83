// Slow and broken receivers (docs/api.md, §2 WEBHOOKD_ATTEMPT_TIMEOUT and
// WEBHOOKD_DESTINATION_MAX_IN_FLIGHT): raw listeners that never answer, trickle a byte a
// second, close mid-response, or answer 200 with a 10 MB body each end in the outcome the
// contract names within the attempt timeout; and with all four present, healthy
// destinations get every event, because a bad destination can only hold its own
// max_in_flight of the worker's slots (the throughput ratio is printed for reading).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <pqxx/pqxx>
#include <thread>

#include "tests/testing/raw_listener.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::receivers_fault_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kAttemptTimeoutMs = 2000;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A handler that also tracks how many connections it serves at once.
RawListener::Handler Tracked(RawListener::Handler inner, std::atomic<int>& now,
                             std::atomic<int>& peak) {
  return [inner = std::move(inner), &now, &peak](RawConnection& c) {
    const int n = ++now;
    int seen = peak.load();
    while (n > seen && !peak.compare_exchange_weak(seen, n)) {
    }
    inner(c);
    --now;
  };
}

TEST(ReceiversFaultTest, EachBrokenReceiverEndsInItsOutcomeWithinTheAttemptTimeout) {
  RawListener never("127.0.0.1", 0, RawListener::NeverAnswers());
  RawListener trickle("127.0.0.1", 0, RawListener::Trickles(1000ms));
  RawListener closes("127.0.0.1", 0, RawListener::ClosesMidResponse());
  RawListener huge("127.0.0.1", 0, RawListener::HugeBody(10 << 20));

  TestDatabase db;
  WebhookdProcess w(db.url(), "all",
                    {{"WEBHOOKD_ATTEMPT_TIMEOUT", std::to_string(kAttemptTimeoutMs) + "ms"},
                     {"WEBHOOKD_LEASE", "10s"},
                     {"WEBHOOKD_RETRY_SCHEDULE", "1h"},  // one attempt each within the test
                     {"WEBHOOKD_LOG_LEVEL", "info"}});
  struct Case {
    std::string name;
    RawListener* listener;
    std::string delivery;
  };
  std::vector<Case> cases = {{"never answers", &never, ""},
                             {"trickles a byte a second", &trickle, ""},
                             {"closes mid-response", &closes, ""},
                             {"200 with a 10 MB body", &huge, ""}};
  const auto posted = Clock::now();
  for (Case& c : cases) {
    auto res = w.Call("POST", "/v1/destinations", {{"url", c.listener->url()}});
    ASSERT_EQ(res.status, 201) << res.body;
    const std::string dst = Json::parse(res.body)["id"];
    res = w.Call(
        "POST", "/v1/events",
        {{"type", "fault.receiver"}, {"payload", {{"case", c.name}}}, {"destination_id", dst}});
    ASSERT_EQ(res.status, 202) << res.body;
    c.delivery = Json::parse(res.body)["deliveries"][0]["id"];
  }

  // Every first attempt is recorded within the attempt timeout, plus a margin for a
  // sanitized build on a busy machine.
  std::map<std::string, Json> attempt;
  const bool all = WaitUntil(
      [&] {
        for (const Case& c : cases) {
          if (attempt.contains(c.name)) continue;
          auto res = w.Call("GET", "/v1/deliveries/" + c.delivery + "/attempts");
          if (res.status != 200) continue;
          Json list = Json::parse(res.body);
          if (!list["data"].empty()) attempt[c.name] = list["data"][0];
        }
        return attempt.size() == cases.size();
      },
      Ms(kAttemptTimeoutMs + 8000));
  const double seen_after_s = std::chrono::duration<double>(Clock::now() - posted).count();
  ASSERT_TRUE(all) << "attempts missing after " << seen_after_s << " s";
  // The margin covers the eight posts made after the clock started and the polls' calls.
  EXPECT_LE(seen_after_s, (kAttemptTimeoutMs + 1000) / 1000.0 + 4.0);

  for (const Case& c : cases) {
    const Json& a = attempt[c.name];
    SCOPED_TRACE(c.name + ": " + a.dump());
    EXPECT_EQ(c.listener->accepted(), 1);
    const int duration = a["duration_ms"].get<int>();
    EXPECT_LE(duration, kAttemptTimeoutMs + 1000);
    Json delivery = Json::parse(w.Call("GET", "/v1/deliveries/" + c.delivery).body);
    if (c.listener == &huge) {
      EXPECT_EQ(a["outcome"], "success");
      EXPECT_EQ(a["status_code"], 200);
      EXPECT_LE(a["response_body"].get<std::string>().size(), 4096u);
      EXPECT_GT(a["response_body"].get<std::string>().size(), 0u);
      EXPECT_EQ(delivery["status"], "succeeded");
      continue;
    }
    EXPECT_EQ(a["outcome"], "retryable");
    EXPECT_TRUE(a["status_code"].is_null());
    ASSERT_TRUE(a["error"].is_string());
    EXPECT_EQ(delivery["status"], "pending");  // retried later, per the schedule
    if (c.listener == &closes) {
      EXPECT_FALSE(a["error"].get<std::string>().empty());
    } else {
      const std::string error = Lower(a["error"]);
      EXPECT_TRUE(error.find("timeout") != std::string::npos ||
                  error.find("timed out") != std::string::npos);
      EXPECT_GE(duration, kAttemptTimeoutMs - 100);
    }
  }
}

// Delivers `events` pending events to the healthy receivers with a fresh worker and
// returns the seconds from the first healthy request to the last.
class Throughput {
 public:
  Throughput(const std::string& db_url, std::vector<Receiver*> healthy)
      : url_(db_url), healthy_(std::move(healthy)) {}

  double Run(WebhookdProcess& server, int events, const std::string& type,
             const std::map<std::string, std::string>& env) {
    std::vector<size_t> before;
    for (Receiver* r : healthy_) before.push_back(r->count());
    Post(server, events, type);
    WebhookdProcess worker(url_, "worker", env);
    bool done = WaitUntil(
        [&] {
          for (size_t i = 0; i < healthy_.size(); ++i) {
            if (healthy_[i]->count() < before[i] + static_cast<size_t>(events)) return false;
          }
          return true;
        },
        120s);
    EXPECT_TRUE(done) << "healthy deliveries stalled; deliveries by destination and state:\n"
                      << Summary();
    worker.process().Signal(SIGTERM);
    EXPECT_EQ(worker.process().Wait(30s), std::optional<int>(0));
    Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
    for (size_t i = 0; i < healthy_.size(); ++i) {
      auto requests = healthy_[i]->requests();
      for (size_t j = before[i]; j < requests.size(); ++j) {
        first = std::min(first, requests[j].at);
        last = std::max(last, requests[j].at);
      }
    }
    return std::chrono::duration<double>(last - first).count();
  }

  std::string Summary() {
    auto conn_owner = testing::TestDatabase::Connect(url_);
    pqxx::connection& conn = *conn_owner;
    pqxx::nontransaction tx(conn);
    std::string out;
    for (const auto& row : tx.exec(
             "SELECT t.url, d.status, coalesce(d.last_error, '-'), count(*) FROM delivery_rows d "
             "JOIN destinations t ON t.id = d.destination_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")) {
      out += std::string(row[0].c_str()) + " " + row[1].c_str() + " " + row[2].c_str() + ": " +
             row[3].c_str() + "\n";
    }
    return out + HealthyFailures();
  }

  // Every attempt to a healthy receiver that did not succeed, one line each.
  std::string HealthyFailures() {
    auto conn_owner = testing::TestDatabase::Connect(url_);
    pqxx::connection& conn = *conn_owner;
    pqxx::nontransaction tx(conn);
    std::string out;
    for (const auto& row : tx.exec(
             "SELECT t.url, a.attempt_number, a.started_at::text, a.duration_ms, a.error FROM "
             "attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN destinations t ON t.id = "
             "d.destination_id WHERE a.outcome <> 'success' AND t.event_types = '{load.*}' "
             "ORDER BY a.started_at")) {
      out += std::string("failed attempt to a healthy receiver: ") + row[0].c_str() + " #" +
             row[1].c_str() + " at " + row[2].c_str() + " after " + row[3].c_str() +
             " ms: " + row[4].c_str() + "\n";
    }
    return out;
  }

  static void Post(WebhookdProcess& server, int events, const std::string& type) {
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        auto client = server.Client();
        for (int i = next++; i < events; i = next++) {
          const Json body = {{"type", type}, {"payload", {{"i", i}}}};
          auto res = client->Post("/v1/events", body.dump(), "application/json");
          EXPECT_TRUE(res && res->status == 202);
        }
      });
    }
    for (auto& t : threads) t.join();
  }

 private:
  std::string url_;
  std::vector<Receiver*> healthy_;
};

TEST(ReceiversFaultTest, HealthyDestinationsKeepTheirThroughputBesideBrokenOnes) {
  constexpr int kLoad = 400;
  // Healthy receivers take 100 ms per request, so their throughput is bound by the
  // worker slots they get (16 each), not by the CPU: the bad destinations could lower it
  // only by taking slots that are not theirs, which is the promise under test; CPU noise
  // on a busy machine moves it little.
  constexpr int kBadEvents = 20;  // per round, to each bad destination
  constexpr int kBadCap = 2;      // each bad destination's max_in_flight
  constexpr int kRounds = 4;
  std::atomic<int> now[4] = {}, peak[4] = {};
  RawListener never("127.0.0.1", 0, Tracked(RawListener::NeverAnswers(), now[0], peak[0]));
  RawListener trickle("127.0.0.1", 0, Tracked(RawListener::Trickles(1000ms), now[1], peak[1]));
  RawListener closes("127.0.0.1", 0, Tracked(RawListener::ClosesMidResponse(), now[2], peak[2]));
  RawListener huge("127.0.0.1", 0, Tracked(RawListener::HugeBody(10 << 20), now[3], peak[3]));
  const auto slow_ok = [](const Received&, int) {
    Answer a;
    a.delay = 100ms;
    return a;
  };
  Receiver healthy_a(slow_ok), healthy_b(slow_ok);

  TestDatabase db;
  // The worker has room for every cap at once: 2 × 16 healthy + 4 × 2 bad ≤ 64. Quick
  // retries: a spurious failure of a healthy send must not park it for long.
  const std::map<std::string, std::string> env = {
      {"WEBHOOKD_ATTEMPT_TIMEOUT", std::to_string(kAttemptTimeoutMs) + "ms"},
      {"WEBHOOKD_LEASE", "10s"},
      {"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms"},
      {"WEBHOOKD_WORKER_CONCURRENCY", "64"},
      {"WEBHOOKD_DESTINATION_MAX_IN_FLIGHT", "16"},
      {"WEBHOOKD_LOG_LEVEL", "info"}};
  WebhookdProcess server(db.url(), "server", env);
  for (Receiver* r : {&healthy_a, &healthy_b}) {
    auto res =
        server.Call("POST", "/v1/destinations", {{"url", r->url()}, {"event_types", {"load.*"}}});
    ASSERT_EQ(res.status, 201) << res.body;
  }
  std::vector<std::string> bad;
  for (RawListener* l : {&never, &trickle, &closes, &huge}) {
    auto res = server.Call("POST", "/v1/destinations",
                           {{"url", l->url()},
                            {"event_types", {"bad.*"}},
                            {"max_in_flight", kBadCap},
                            {"enabled", false}});
    ASSERT_EQ(res.status, 201) << res.body;
    bad.push_back(Json::parse(res.body)["id"]);
  }
  const auto set_bad = [&](bool enabled) {
    for (const std::string& id : bad) {
      auto res = server.Call("PATCH", "/v1/destinations/" + id, {{"enabled", enabled}});
      ASSERT_EQ(res.status, 200) << res.body;
    }
  };

  // Rounds alternate without and with the bad destinations; the best time of each kind
  // is compared, which keeps the noise of a shared machine out of the ratio.
  Throughput run(db.url(), {&healthy_a, &healthy_b});
  double best_without = 1e9, best_with = 1e9;
  for (int round = 0; round < kRounds; ++round) {
    set_bad(false);
    const double without = run.Run(server, kLoad, "load.a", env);
    set_bad(true);
    Throughput::Post(server, kBadEvents, "bad.x");
    const double with = run.Run(server, kLoad, "load.b", env);
    std::printf(
        "receivers fault: round %d: %d events to 2 healthy receivers in %.3f s without "
        "the broken ones, %.3f s with them\n",
        round, kLoad, without, with);
    best_without = std::min(best_without, without);
    best_with = std::min(best_with, with);
  }
  const double ratio = best_without / best_with;  // throughput with / throughput without
  std::printf(
      "receivers fault: best %.3f s without, %.3f s with: throughput ratio %.2f; peak "
      "concurrent connections of the bad receivers %d %d %d %d (cap %d)\n",
      best_without, best_with, ratio, peak[0].load(), peak[1].load(), peak[2].load(),
      peak[3].load(), kBadCap);
  std::fflush(stdout);
  const std::string failures = run.HealthyFailures();
  if (!failures.empty()) std::printf("receivers fault: NOTE\n%s", failures.c_str());
  std::fflush(stdout);
  // The ratio is printed, not asserted: a timed bound fails whenever the machine is
  // busy. What keeps healthy destinations fast is asserted below without a clock (each
  // bad destination holds at most its own cap of the worker's slots); the throughput
  // itself is measured by scripts/bench's slow-destination case.
  EXPECT_GT(never.accepted(), 0);
  EXPECT_GT(trickle.accepted(), 0);
  EXPECT_GT(closes.accepted(), 0);
  EXPECT_GT(huge.accepted(), 0);
  // Never-answering and trickling connections live for the whole attempt: their peak is
  // the number of deliveries of that destination in flight at once. The listener notices
  // a hang-up a poll interval late (later on a loaded machine), so the connection of an
  // attempt that just timed out may still be counted when its retry connects: allow one.
  // An ignored cap would show the worker's concurrency here, far above.
  EXPECT_LE(peak[0].load(), kBadCap + 1);
  EXPECT_LE(peak[1].load(), kBadCap + 1);
}

}  // namespace
}  // namespace webhookd::testing::receivers_fault_test
