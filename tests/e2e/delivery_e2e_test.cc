// The delivery engine end to end: the real binary, a real PostgreSQL and scripted
// receivers on loopback. Covers the wire format (docs/api.md), the outcome table and the
// retry schedule (§5) and the at-least-once guarantees (§6).
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::delivery_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;

// The fast schedule most tests run with: 5 attempts, waits 1 s, 2 s, 2 s, 2 s (±20 %).
const std::map<std::string, std::string> kFast = {{"WEBHOOKD_RETRY_SCHEDULE", "1s,2s,2s,2s"},
                                                  {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                                                  {"WEBHOOKD_LEASE", "5s"}};

std::map<std::string, std::string> With(std::map<std::string, std::string> env,
                                        const std::map<std::string, std::string>& more) {
  for (const auto& [k, v] : more) env[k] = v;
  return env;
}

// Checks one received request against §4: signature, timestamp near its arrival.
void ExpectSignedRequest(const Received& r, const std::string& secret,
                         const std::string& event_id) {
  EXPECT_EQ(r.header("webhook-id"), event_id);
  const std::string ts = r.header("webhook-timestamp");
  ASSERT_TRUE(std::regex_match(ts, std::regex("[0-9]{9,11}"))) << ts;
  // The wall-clock second at which the request arrived.
  const auto arrived = std::chrono::system_clock::now() - (std::chrono::steady_clock::now() - r.at);
  const auto arrived_s =
      std::chrono::duration_cast<std::chrono::seconds>(arrived.time_since_epoch()).count();
  EXPECT_NEAR(static_cast<double>(std::stoll(ts)), static_cast<double>(arrived_s), 3.0);
  EXPECT_EQ(r.header("webhook-signature"), ExpectedSignature(secret, event_id, ts, r.body));
}

class DeliveryE2eTest : public ::testing::Test {
 protected:
  void Start(std::map<std::string, std::string> env = kFast) {
    webhookd_ = std::make_unique<WebhookdProcess>(db_.url(), "all", std::move(env));
  }
  WebhookdProcess& W() { return *webhookd_; }

  Json CreateDestination(Json body) {
    auto res = W().Call("POST", "/v1/destinations", body);
    EXPECT_EQ(res.status, 201) << res.body;
    return res.status == 201 ? Json::parse(res.body) : Json::object();
  }

  Json PostEvent(const std::string& type, const Json& payload) {
    auto res = W().Call("POST", "/v1/events", {{"type", type}, {"payload", payload}});
    EXPECT_EQ(res.status, 202) << res.body;
    return res.status == 202 ? Json::parse(res.body) : Json::object();
  }

  Json Get(const std::string& path) {
    auto res = W().Call("GET", path);
    EXPECT_EQ(res.status, 200) << path << ": " << res.body;
    return res.status == 200 ? Json::parse(res.body) : Json::object();
  }

  // Waits until the delivery reaches `status`; returns its last JSON.
  Json WaitForStatus(const std::string& delivery_id, const std::string& status, Ms timeout) {
    Json last;
    WaitUntil(
        [&] {
          last = Get("/v1/deliveries/" + delivery_id);
          return last.value("status", "") == status;
        },
        timeout);
    return last;
  }

  Json Attempts(const std::string& delivery_id) {
    return Get("/v1/deliveries/" + delivery_id + "/attempts")["data"];
  }

  TestDatabase db_;
  std::unique_ptr<WebhookdProcess> webhookd_;
};

TEST(SignatureCheckTest, TheTestsVerifierMatchesTheSpecVector) {
  // The verifier the tests below rely on must itself be right (docs/api.md's vector).
  EXPECT_EQ(
      ExpectedSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
                        "1614265330", R"({"test": 2432232314})"),
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
}

TEST_F(DeliveryE2eTest, SuccessSendsTheExactWireFormat) {
  Start();
  Receiver receiver;
  const Json dest =
      CreateDestination({{"url", receiver.url("/in?x=1")}, {"headers", {{"X-Tenant", "acme-42"}}}});
  const std::string secret = dest["secret"];
  const Json payload = {{"order", 123}, {"items", {"a", "b"}}, {"note", "caf\u00e9 \"q\""}};
  const Json event = PostEvent("order.created", payload);
  ASSERT_EQ(event["deliveries"].size(), 1u);
  const std::string delivery_id = event["deliveries"][0]["id"];

  ASSERT_TRUE(receiver.WaitFor(1, 15s));
  const Json delivery = WaitForStatus(delivery_id, "succeeded", 10s);
  EXPECT_EQ(delivery["status"], "succeeded") << delivery.dump();
  EXPECT_EQ(delivery["attempt_count"], 1);
  EXPECT_EQ(delivery["last_status_code"], 200);

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  const Received& r = requests[0];
  EXPECT_EQ(r.path, "/in");
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("user-agent"), std::string("webhookd/") + WEBHOOKD_VERSION);
  EXPECT_TRUE(std::regex_match(r.header("user-agent"), std::regex(R"(webhookd/\d+\.\d+\.\d+.*)")));
  EXPECT_EQ(r.header("X-Tenant"), "acme-42");
  EXPECT_TRUE(r.header("webhook-signature").starts_with("v1,"));
  ExpectSignedRequest(r, secret, event["id"]);

  const Json body = Json::parse(r.body);
  ASSERT_TRUE(body.is_object());
  EXPECT_EQ(body.size(), 3u) << r.body;
  EXPECT_EQ(body["type"], "order.created");
  EXPECT_EQ(body["timestamp"], event["created_at"]);
  EXPECT_EQ(body["data"], payload);

  const Json attempts = Attempts(delivery_id);
  ASSERT_EQ(attempts.size(), 1u) << attempts.dump();
  EXPECT_EQ(attempts[0]["attempt_number"], 1);
  EXPECT_EQ(attempts[0]["outcome"], "success");
  EXPECT_EQ(attempts[0]["status_code"], 200);
  EXPECT_TRUE(attempts[0]["error"].is_null());
}

TEST_F(DeliveryE2eTest, RetriesOnTheJitteredScheduleUntilSuccess) {
  Start();
  Receiver receiver([](const Received&, int nth) {
    Answer a = Status(nth == 0 ? 503 : nth == 1 ? 500 : 200);
    a.body = "answer " + std::to_string(nth);
    return a;
  });
  const Json dest = CreateDestination({{"url", receiver.url()}});
  const Json event = PostEvent("order.paid", {{"n", 1}});
  const std::string delivery_id = event["deliveries"][0]["id"];

  ASSERT_TRUE(receiver.WaitFor(3, 20s));
  const Json delivery = WaitForStatus(delivery_id, "succeeded", 10s);
  EXPECT_EQ(delivery["status"], "succeeded");
  EXPECT_EQ(delivery["attempt_count"], 3);
  std::this_thread::sleep_for(500ms);
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3u);

  // Wait k is the schedule's entry k times [0.8, 1.2]; it runs from after the attempt, so
  // the gap between arrivals is never shorter, and only a little longer (the outcome's
  // write, the next claim and a connection: a second at most on a loaded machine).
  const std::vector<Ms> schedule = {1000ms, 2000ms};
  for (size_t k = 0; k < 2; ++k) {
    const auto gap = std::chrono::duration_cast<Ms>(requests[k + 1].at - requests[k].at);
    EXPECT_GE(gap.count(), schedule[k].count() * 8 / 10 - 20) << "gap " << k;
    EXPECT_LE(gap.count(), schedule[k].count() * 12 / 10 + 1000) << "gap " << k;
  }

  std::set<std::string> timestamps;
  for (const Received& r : requests) {
    ExpectSignedRequest(r, dest["secret"], event["id"]);
    EXPECT_EQ(r.body, requests[0].body);  // the same bytes every time
    timestamps.insert(r.header("webhook-timestamp"));
  }
  // Each attempt is signed with its own time. Neighbours may be under a second apart and
  // share a second, but the first and the last are at least 2.4 s apart.
  EXPECT_GE(timestamps.size(), 2u);
  EXPECT_LT(std::stoll(requests.front().header("webhook-timestamp")),
            std::stoll(requests.back().header("webhook-timestamp")));

  const Json attempts = Attempts(delivery_id);
  ASSERT_EQ(attempts.size(), 3u) << attempts.dump();
  const std::vector<std::string> outcomes = {"retryable", "retryable", "success"};
  const std::vector<int> codes = {503, 500, 200};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(attempts[i]["attempt_number"], i + 1);
    EXPECT_EQ(attempts[i]["outcome"], outcomes[i]);
    EXPECT_EQ(attempts[i]["status_code"], codes[i]);
    EXPECT_EQ(attempts[i]["response_body"], "answer " + std::to_string(i));
  }
}

TEST_F(DeliveryE2eTest, GoneDeadLettersAndDisablesTheDestination) {
  Start();
  Receiver receiver([](const Received&, int) { return Status(410); });
  const Json dest = CreateDestination({{"url", receiver.url()}});
  const std::string dest_id = dest["id"];
  const Json event = PostEvent("user.deleted", {{"u", 7}});
  const std::string delivery_id = event["deliveries"][0]["id"];

  const Json delivery = WaitForStatus(delivery_id, "dead_lettered", 15s);
  EXPECT_EQ(delivery["status"], "dead_lettered") << delivery.dump();
  EXPECT_EQ(delivery["attempt_count"], 1);
  EXPECT_EQ(delivery["last_status_code"], 410);
  const Json attempts = Attempts(delivery_id);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["outcome"], "permanent");

  const Json dead = Get("/v1/admin/dead-letters?destination_id=" + dest_id)["data"];
  ASSERT_EQ(dead.size(), 1u) << dead.dump();
  EXPECT_EQ(dead[0]["delivery_id"], delivery_id);
  EXPECT_EQ(dead[0]["reason"], "permanent_failure");
  EXPECT_EQ(dead[0]["last_status_code"], 410);
  EXPECT_EQ(dead[0]["attempt_count"], 1);

  EXPECT_EQ(Get("/v1/destinations/" + dest_id)["enabled"], false);
  const Json later = PostEvent("user.deleted", {{"u", 8}});
  EXPECT_TRUE(later["deliveries"].empty()) << later.dump();
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(receiver.count(), 1u);
}

TEST_F(DeliveryE2eTest, AlwaysFailingExhaustsFiveAttemptsThenDeadLetters) {
  Start();
  Receiver receiver([](const Received&, int) { return Status(500); });
  const Json dest = CreateDestination({{"url", receiver.url()}});
  const Json event = PostEvent("order.created", {{"n", 2}});
  const std::string delivery_id = event["deliveries"][0]["id"];

  // 1 + 2 + 2 + 2 s of waits, at most 1.2 × 7 = 8.4 s.
  ASSERT_TRUE(receiver.WaitFor(5, 20s));
  const Json delivery = WaitForStatus(delivery_id, "dead_lettered", 10s);
  EXPECT_EQ(delivery["status"], "dead_lettered") << delivery.dump();
  EXPECT_EQ(delivery["attempt_count"], 5);
  EXPECT_TRUE(delivery["next_attempt_at"].is_null()) << delivery.dump();

  const Json dead = Get("/v1/admin/dead-letters?destination_id=" + dest["id"].get<std::string>());
  ASSERT_EQ(dead["data"].size(), 1u) << dead.dump();
  EXPECT_EQ(dead["data"][0]["reason"], "exhausted");
  EXPECT_EQ(dead["data"][0]["attempt_count"], 5);
  EXPECT_EQ(dead["data"][0]["last_status_code"], 500);

  const Json attempts = Attempts(delivery_id);
  ASSERT_EQ(attempts.size(), 5u);
  for (const Json& a : attempts) EXPECT_EQ(a["outcome"], "retryable");

  // No sixth attempt: longer than the longest wait of the schedule (2.4 s).
  EXPECT_FALSE(receiver.WaitFor(6, 3500ms));
  EXPECT_EQ(receiver.count(), 5u);
}

TEST_F(DeliveryE2eTest, RetryAfterOnA429IsHonoured) {
  Start();
  Receiver receiver([](const Received&, int nth) {
    if (nth > 0) return Status(200);
    Answer a = Status(429);
    a.headers.emplace("Retry-After", "2");
    return a;
  });
  CreateDestination({{"url", receiver.url()}});
  const Json event = PostEvent("order.created", {{"n", 3}});
  const std::string delivery_id = event["deliveries"][0]["id"];

  ASSERT_TRUE(receiver.WaitFor(2, 15s));
  const auto requests = receiver.requests();
  const auto gap = std::chrono::duration_cast<Ms>(requests[1].at - requests[0].at);
  // Retry-After × [1.0, 1.2]: never sooner (the 1 s schedule would be), at most 2.4 s and
  // the overhead of a retry (a second at most on a loaded machine).
  EXPECT_GE(gap.count(), 2000 - 10);
  EXPECT_LE(gap.count(), 2400 + 1000);

  const Json delivery = WaitForStatus(delivery_id, "succeeded", 10s);
  EXPECT_EQ(delivery["status"], "succeeded");
  const Json attempts = Attempts(delivery_id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["status_code"], 429);
  EXPECT_EQ(attempts[0]["outcome"], "retryable");
  EXPECT_EQ(attempts[1]["outcome"], "success");
}

TEST_F(DeliveryE2eTest, ATimeoutIsRetryableAndTheNextAttemptSucceeds) {
  Start(With(kFast, {{"WEBHOOKD_ATTEMPT_TIMEOUT", "1s"}}));
  Receiver receiver([](const Received&, int nth) {
    Answer a = Status(200);
    if (nth == 0) a.delay = 4000ms;
    return a;
  });
  CreateDestination({{"url", receiver.url()}});
  const Json event = PostEvent("order.created", {{"n", 4}});
  const std::string delivery_id = event["deliveries"][0]["id"];

  ASSERT_TRUE(receiver.WaitFor(2, 15s));
  const auto requests = receiver.requests();
  // The first attempt was cut at 1 s, then 1 s × [0.8, 1.2] of wait.
  const auto gap = std::chrono::duration_cast<Ms>(requests[1].at - requests[0].at);
  EXPECT_LT(gap.count(), 3500) << "the attempt was not cut off at the attempt timeout";
  EXPECT_GE(gap.count(), 1000 + 800 - 50);

  const Json delivery = WaitForStatus(delivery_id, "succeeded", 10s);
  EXPECT_EQ(delivery["status"], "succeeded") << delivery.dump();
  const Json attempts = Attempts(delivery_id);
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump();
  EXPECT_EQ(attempts[0]["outcome"], "retryable");
  EXPECT_TRUE(attempts[0]["status_code"].is_null()) << attempts.dump();
  ASSERT_TRUE(attempts[0]["error"].is_string()) << attempts.dump();
  EXPECT_TRUE(std::regex_search(attempts[0]["error"].get<std::string>(),
                                std::regex("timed out|timeout", std::regex::icase)))
      << attempts[0]["error"];
  EXPECT_GE(attempts[0]["duration_ms"].get<int>(), 900);
  EXPECT_LE(attempts[0]["duration_ms"].get<int>(), 2000);
  EXPECT_EQ(attempts[1]["outcome"], "success");
}

TEST_F(DeliveryE2eTest, RedirectsAreNotFollowed) {
  Start();
  Receiver elsewhere;
  Receiver receiver([&](const Received&, int) {
    Answer a = Status(302);
    a.headers.emplace("Location", elsewhere.url());
    return a;
  });
  CreateDestination({{"url", receiver.url()}});
  const Json event = PostEvent("order.created", {{"n", 5}});
  const std::string delivery_id = event["deliveries"][0]["id"];

  const Json delivery = WaitForStatus(delivery_id, "dead_lettered", 15s);
  EXPECT_EQ(delivery["status"], "dead_lettered") << delivery.dump();
  EXPECT_EQ(delivery["last_status_code"], 302);
  const Json dead = Get("/v1/admin/dead-letters")["data"];
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]["reason"], "permanent_failure");
  EXPECT_EQ(receiver.count(), 1u);
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(elsewhere.count(), 0u);
}

TEST_F(DeliveryE2eTest, AWorkerKilledMidDeliveryLosesNothing) {
  const std::map<std::string, std::string> env = {{"WEBHOOKD_RETRY_SCHEDULE", "1s,1s,1s,1s"},
                                                  {"WEBHOOKD_LEASE", "3s"},
                                                  {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                                                  {"WEBHOOKD_DESTINATION_MAX_IN_FLIGHT", "32"},
                                                  {"WEBHOOKD_WORKER_CONCURRENCY", "32"}};
  webhookd_ = std::make_unique<WebhookdProcess>(db_.url(), "server", env);

  std::atomic<bool> hold{true};
  Receiver receiver([&](const Received&, int) {
    Answer a = Status(200);
    if (hold) a.delay = 3000ms;
    return a;
  });
  const Json dest = CreateDestination({{"url", receiver.url()}});
  std::set<std::string> event_ids;
  std::vector<std::string> delivery_ids;
  for (int i = 0; i < 20; ++i) {
    const Json event = PostEvent("order.created", {{"i", i}});
    event_ids.insert(event["id"].get<std::string>());
    delivery_ids.push_back(event["deliveries"][0]["id"]);
  }
  ASSERT_EQ(event_ids.size(), 20u);

  auto worker = std::make_unique<WebhookdProcess>(db_.url(), "worker", env);
  // Kill it while every request is held, before the attempt timeout could end one.
  ASSERT_TRUE(receiver.WaitFor(20, 10s)) << receiver.count();
  worker->process().Signal(SIGKILL);
  EXPECT_EQ(worker->process().Wait(5s), 128 + SIGKILL);
  hold = false;
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'succeeded'"), "0");

  // The leases run out; a new worker sends them all again.
  WebhookdProcess second(db_.url(), "worker", env);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'succeeded'") == "20";
      },
      30s))
      << db_.Scalar("SELECT string_agg(status::text, ',') FROM delivery_rows");
  for (const std::string& id : delivery_ids) {
    EXPECT_EQ(Get("/v1/deliveries/" + id)["status"], "succeeded") << id;
  }

  // Every event arrived at least twice (once to the killed worker), always with its own
  // webhook-id and the same body bytes.
  std::map<std::string, std::vector<std::string>> bodies;
  for (const Received& r : receiver.requests()) {
    ExpectSignedRequest(r, dest["secret"], r.header("webhook-id"));
    bodies[r.header("webhook-id")].push_back(r.body);
  }
  EXPECT_EQ(bodies.size(), 20u);
  for (const auto& [id, seen] : bodies) {
    EXPECT_TRUE(event_ids.contains(id)) << id;
    EXPECT_GE(seen.size(), 2u) << id;
    for (const std::string& body : seen) EXPECT_EQ(body, seen.front()) << id;
  }
}

TEST_F(DeliveryE2eTest, SigtermDrainsInFlightAndReleasesTheRest) {
  const std::map<std::string, std::string> env = {{"WEBHOOKD_RETRY_SCHEDULE", "1s,1s,1s,1s"},
                                                  {"WEBHOOKD_LEASE", "30s"},
                                                  {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                                                  {"WEBHOOKD_WORKER_CONCURRENCY", "4"}};
  webhookd_ = std::make_unique<WebhookdProcess>(db_.url(), "server", env);
  Receiver receiver([](const Received&, int) {
    Answer a = Status(200);
    a.delay = 1000ms;
    return a;
  });
  CreateDestination({{"url", receiver.url()}});
  for (int i = 0; i < 10; ++i) PostEvent("order.created", {{"i", i}});

  auto worker = std::make_unique<WebhookdProcess>(db_.url(), "worker", env);
  ASSERT_TRUE(receiver.WaitFor(4, 10s));
  const auto signalled = std::chrono::steady_clock::now();
  worker->process().Signal(SIGTERM);
  // The attempt timeout and a margin for a sanitized build's exit (its leak check) on a
  // loaded machine.
  const auto code = worker->process().Wait(2000ms + 6000ms);
  ASSERT_TRUE(code.has_value()) << "the worker did not stop within the attempt timeout + 6 s";
  EXPECT_EQ(*code, 0) << ReadFile(worker->log_path());
  EXPECT_LE(std::chrono::steady_clock::now() - signalled, 8s);

  // The held requests finished and were recorded; nothing is left claimed (the lease of
  // 30 s would keep a lost claim in_flight far beyond this test).
  const size_t sent = receiver.count();
  EXPECT_GE(sent, 4u);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'in_flight'"), "0");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'succeeded'"),
            std::to_string(sent));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'pending' AND "
                       "attempt_count = 0 AND next_attempt_at <= now()"),
            std::to_string(10 - sent));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM attempts"), std::to_string(sent));

  // What was handed back is sent by the next worker at once.
  WebhookdProcess second(db_.url(), "worker", env);
  EXPECT_TRUE(WaitUntil(
      [&] {
        return db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'succeeded'") == "10";
      },
      20s));
  EXPECT_EQ(receiver.count(), 10u);
}

TEST_F(DeliveryE2eTest, ThePerDestinationCapBoundsConcurrency) {
  Start();
  std::atomic<int> now_in{0};
  std::atomic<int> most{0};
  Receiver receiver([&](const Received&, int) {
    const int n = ++now_in;
    for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
    }
    std::this_thread::sleep_for(500ms);
    --now_in;
    return Status(200);
  });
  const Json dest = CreateDestination(
      {{"url", receiver.url()}, {"max_in_flight", 2}, {"event_types", {"order.*"}}});
  Receiver other;  // another destination without the cap is not held back by it
  CreateDestination({{"url", other.url()}, {"event_types", {"other.*"}}});
  for (int i = 0; i < 10; ++i) {
    auto res = W().Call(
        "POST", "/v1/events",
        {{"type", "order.created"}, {"payload", {{"i", i}}}, {"destination_id", dest["id"]}});
    ASSERT_EQ(res.status, 202) << res.body;
  }
  for (int i = 0; i < 4; ++i) PostEvent("other.thing", {{"i", i}});
  EXPECT_TRUE(other.WaitFor(4, 2s)) << "a capped destination held back another one";

  ASSERT_TRUE(receiver.WaitFor(10, 20s));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return db_.Scalar("SELECT count(*) FROM delivery_rows WHERE status = 'succeeded'") == "14";
      },
      10s));
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(most.load(), 2) << "the cap of 2 was never used in full";
}

}  // namespace
}  // namespace webhookd::testing::delivery_e2e_test
