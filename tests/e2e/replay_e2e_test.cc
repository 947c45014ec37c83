// Dead letters and replay end to end (docs/api.md "Dead letters and replay", §4): a
// replayed delivery keeps its webhook-id, is signed afresh, continues the attempt log,
// and only admins may list or replay.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::replay_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;

class ReplayE2eTest : public ::testing::Test {
 protected:
  ReplayE2eTest()
      : webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms"},
                   {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                   {"WEBHOOKD_LEASE", "5s"},
                   // These tests count every attempt: the breaker (protection_e2e_test)
                   // would turn the replayed ones into skips.
                   {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return res.status == want && !res.body.empty() ? Json::parse(res.body) : Json::object();
  }

  Json DeadLetters(const std::string& destination_id) {
    return Call("GET", "/v1/admin/dead-letters?destination_id=" + destination_id)["data"];
  }

  // Waits until the destination has `n` dead letters not yet replayed.
  Json WaitForDeadLetters(const std::string& destination_id, size_t n) {
    Json open = Json::array();
    WaitUntil(
        [&] {
          open = Json::array();
          for (const Json& d : DeadLetters(destination_id))
            if (d["replayed_at"].is_null()) open.push_back(d);
          return open.size() >= n;
        },
        20s);
    return open;
  }

  std::string DeliveryStatus(const std::string& id) {
    return Call("GET", "/v1/deliveries/" + id).value("status", "");
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(ReplayE2eTest, ReplayKeepsTheIdSignsAfreshAndContinuesTheAttemptLog) {
  std::atomic<bool> fixed{false};
  Receiver receiver([&](const Received&, int) { return Status(fixed ? 200 : 500); });
  const Json dest = Call("POST", "/v1/destinations", {{"url", receiver.url()}}, 201);
  const std::string dest_id = dest["id"];
  const std::string secret = dest["secret"];
  const Json event =
      Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"n", 1}}}}, 202);
  const std::string event_id = event["id"];
  const std::string delivery_id = event["deliveries"][0]["id"];

  const Json dead = WaitForDeadLetters(dest_id, 1);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]["reason"], "exhausted");
  EXPECT_EQ(dead[0]["delivery_id"], delivery_id);
  EXPECT_EQ(dead[0]["event_id"], event_id);
  EXPECT_EQ(dead[0]["attempt_count"], 5);
  EXPECT_TRUE(dead[0]["replayed_at"].is_null());
  ASSERT_EQ(receiver.count(), 5u);
  EXPECT_EQ(DeliveryStatus(delivery_id), "dead_lettered");
  const std::string first_timestamp = receiver.requests().back().header("webhook-timestamp");

  // Signatures carry whole seconds: make sure the replay's second is a new one.
  std::this_thread::sleep_for(1100ms);
  fixed = true;
  const std::string dl_id = dead[0]["id"];
  const Json replayed = Call("POST", "/v1/admin/dead-letters/" + dl_id + "/replay", nullptr, 202);
  EXPECT_EQ(replayed["delivery_id"], delivery_id);

  ASSERT_TRUE(receiver.WaitFor(6, 10s));
  ASSERT_TRUE(WaitUntil([&] { return DeliveryStatus(delivery_id) == "succeeded"; }, 10s));
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 6u);
  const Received& r = requests[5];
  EXPECT_EQ(r.header("webhook-id"), event_id);
  EXPECT_EQ(r.body, requests[0].body);
  const std::string ts = r.header("webhook-timestamp");
  EXPECT_NE(ts, first_timestamp);
  EXPECT_GT(std::stoll(ts), std::stoll(first_timestamp));
  EXPECT_EQ(r.header("webhook-signature"), ExpectedSignature(secret, event_id, ts, r.body));
  EXPECT_NE(r.header("webhook-signature"), requests[4].header("webhook-signature"));

  const Json attempts = Call("GET", "/v1/deliveries/" + delivery_id + "/attempts")["data"];
  ASSERT_EQ(attempts.size(), 6u) << attempts.dump();
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(attempts[i]["attempt_number"], i + 1);
  EXPECT_EQ(attempts[4]["outcome"], "retryable");
  EXPECT_EQ(attempts[5]["outcome"], "success");
  EXPECT_EQ(Call("GET", "/v1/deliveries/" + delivery_id)["attempt_count"], 6);

  const Json after = DeadLetters(dest_id);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(after[0]["replayed_at"].is_string()) << after.dump();

  // Once is enough: a second replay of the same dead letter is a conflict.
  auto again = webhookd_.Call("POST", "/v1/admin/dead-letters/" + dl_id + "/replay");
  EXPECT_EQ(again.status, 409) << again.body;
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(receiver.count(), 6u);
  // ...and the bulk replay skips what was replayed.
  EXPECT_EQ(Call("POST", "/v1/admin/dead-letters/replay", {{"destination_id", dest_id}}, 202),
            Json({{"replayed", 0}, {"more", false}}));
}

TEST_F(ReplayE2eTest, BulkReplayTakesEveryOpenDeadLetterOfTheDestination) {
  std::atomic<bool> fixed{false};
  Receiver failing([&](const Received&, int) { return Status(fixed ? 200 : 503); });
  Receiver other([](const Received&, int) { return Status(400); });
  const std::string dest_id = Call("POST", "/v1/destinations", {{"url", failing.url()}}, 201)["id"];
  const std::string other_id = Call("POST", "/v1/destinations", {{"url", other.url()}}, 201)["id"];
  std::vector<std::string> deliveries;
  for (int i = 0; i < 3; ++i) {
    const Json event = Call(
        "POST", "/v1/events",
        {{"type", "order.created"}, {"payload", {{"i", i}}}, {"destination_id", dest_id}}, 202);
    deliveries.push_back(event["deliveries"][0]["id"]);
  }
  Call("POST", "/v1/events",
       {{"type", "order.created"}, {"payload", {{"x", 1}}}, {"destination_id", other_id}}, 202);
  ASSERT_EQ(WaitForDeadLetters(dest_id, 3).size(), 3u);
  ASSERT_EQ(WaitForDeadLetters(other_id, 1).size(), 1u);
  EXPECT_EQ(DeadLetters(other_id)[0]["reason"], "permanent_failure");

  fixed = true;
  EXPECT_EQ(Call("POST", "/v1/admin/dead-letters/replay", {{"destination_id", dest_id}}, 202),
            Json({{"replayed", 3}, {"more", false}}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const auto& id : deliveries)
          if (DeliveryStatus(id) != "succeeded") return false;
        return true;
      },
      15s));
  EXPECT_EQ(failing.count(), 3u * 5u + 3u);
  // The other destination's dead letter was not touched.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(other.count(), 1u);
  EXPECT_TRUE(DeadLetters(other_id)[0]["replayed_at"].is_null());
  EXPECT_EQ(Call("POST", "/v1/admin/dead-letters/replay", {{"destination_id", dest_id}}, 202),
            Json({{"replayed", 0}, {"more", false}}));
}

TEST_F(ReplayE2eTest, APublisherKeyMayNotSeeOrReplayDeadLetters) {
  auto [code, output] = WebhookdProcess::RunCommand({"keys", "create", "--role", "publisher"},
                                                    {{"DATABASE_URL", db_.url()}});
  ASSERT_EQ(code, 0) << output;
  std::string line, key;
  std::istringstream lines(output);
  while (std::getline(lines, line))
    if (!line.empty()) key = line;
  ASSERT_FALSE(key.empty());

  Receiver receiver([](const Received&, int) { return Status(404); });
  const std::string dest_id = Call("POST", "/v1/destinations",
                                   {{"url", receiver.url()}, {"event_types", {"a.b"}}}, 201)["id"];
  Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}}, 202);
  const Json dead = WaitForDeadLetters(dest_id, 1);
  ASSERT_EQ(dead.size(), 1u);
  const std::string dl_id = dead[0]["id"];

  // The key itself works: it may publish (to no destination).
  EXPECT_EQ(
      webhookd_.Call("POST", "/v1/events", {{"type", "z.c"}, {"payload", Json::object()}}, key)
          .status,
      202);
  EXPECT_EQ(webhookd_.Call("GET", "/v1/admin/dead-letters", nullptr, key).status, 403);
  EXPECT_EQ(
      webhookd_.Call("POST", "/v1/admin/dead-letters/" + dl_id + "/replay", nullptr, key).status,
      403);
  EXPECT_EQ(
      webhookd_.Call("POST", "/v1/admin/dead-letters/replay", {{"destination_id", dest_id}}, key)
          .status,
      403);
  // Nothing was replayed behind the 403s.
  EXPECT_TRUE(DeadLetters(dest_id)[0]["replayed_at"].is_null());
  EXPECT_EQ(
      Call("POST", "/v1/admin/dead-letters/" + dl_id + "/replay", nullptr, 202)["delivery_id"],
      dead[0]["delivery_id"]);
}

}  // namespace
}  // namespace webhookd::testing::replay_e2e_test
