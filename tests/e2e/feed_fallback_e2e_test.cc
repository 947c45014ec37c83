// A push destination that falls back to its feed, end to end (docs/feeds.md, "Fallback"):
// a real receiver on loopback answers 500 until the schedule is exhausted, the delivery is
// then read from the destination's feed instead of being dead-lettered, and acked there;
// the fallback round-trips through the API and is refused on a feed.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::feed_fallback_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

class FeedFallbackE2eTest : public ::testing::Test {
 protected:
  // The feed tests' short schedule; a threshold no run reaches keeps the circuit closed.
  FeedFallbackE2eTest()
      : webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms"},
                   {"WEBHOOKD_RETRY_JITTER", "0"},
                   {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return !res.body.empty() ? Json::parse(res.body, nullptr, false) : Json::object();
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(FeedFallbackE2eTest, TheFallbackRoundTripsAndIsRefusedOnAFeed) {
  Receiver receiver;
  const Json created =
      Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"fallback", "feed"}}, 201);
  EXPECT_EQ(created["fallback"], "feed");
  const std::string id = created["id"];
  EXPECT_EQ(Call("GET", "/v1/destinations/" + id)["fallback"], "feed");
  EXPECT_EQ(Call("GET", "/v1/destinations")["data"][0]["fallback"], "feed");
  EXPECT_EQ(Call("PATCH", "/v1/destinations/" + id, {{"description", "x"}})["fallback"], "feed");
  EXPECT_TRUE(
      Call("PATCH", "/v1/destinations/" + id, {{"fallback", nullptr}})["fallback"].is_null());
  // Without the fallback, a push destination's messages are not for reading.
  Call("GET", "/v1/destinations/" + id + "/messages", nullptr, 409);
  const Json plain = Call("POST", "/v1/destinations", {{"url", receiver.url("/other")}}, 201);
  EXPECT_TRUE(plain["fallback"].is_null());

  const Json bad = Call("POST", "/v1/destinations", {{"url", "feed:"}, {"fallback", "feed"}}, 422);
  EXPECT_EQ(bad["errors"][0]["field"], "fallback") << bad;
  Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"fallback", "pull"}}, 422);
  Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"fallback", 1}}, 422);
  const std::string feed = Call("POST", "/v1/destinations", {{"url", "feed:"}}, 201)["id"];
  Call("PATCH", "/v1/destinations/" + feed, {{"fallback", "feed"}}, 422);
  // A destination that falls back cannot become a feed while it does.
  Call("PATCH", "/v1/destinations/" + id, {{"fallback", "feed"}});
  Call("PATCH", "/v1/destinations/" + id, {{"url", "feed:"}}, 422);
}

TEST_F(FeedFallbackE2eTest, WhatAReceiverRefusesUntilTheScheduleEndsIsAckedFromTheFeed) {
  Receiver receiver([](const Received&, int) { return Status(500); });
  const std::string dst =
      Call("POST", "/v1/destinations",
           {{"url", receiver.url()}, {"secret", kSecret}, {"fallback", "feed"}}, 201)["id"];
  const std::string event =
      Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"n", 1}}}}, 202)["id"];
  // Five attempts, every one a 500.
  ASSERT_TRUE(receiver.WaitFor(5, 20s)) << receiver.count();
  Json read;
  ASSERT_TRUE(WaitUntil(
      [&] {
        read = Call("GET", "/v1/destinations/" + dst + "/messages?lease=60s");
        return !read["data"].empty();
      },
      20000ms, 100ms))
      << read;
  ASSERT_EQ(read["data"].size(), 1u) << read;
  const Json& m = read["data"][0];
  EXPECT_EQ(m["id"], event);
  EXPECT_EQ(m["attempt"], 6);
  const Json& h = m["headers"];
  EXPECT_EQ(h["webhook-signature"],
            ExpectedSignature(kSecret, event, h["webhook-timestamp"], std::string(m["body"])));
  const std::string delivery = m["delivery_id"];
  EXPECT_EQ(Call("GET", "/v1/deliveries/" + delivery)["status"], "in_flight");
  EXPECT_TRUE(Call("GET", "/v1/admin/dead-letters")["data"].empty());

  EXPECT_EQ(Call("POST", "/v1/destinations/" + dst + "/messages/ack", {{"ids", {event}}}),
            Json({{"acked", 1}, {"expired", Json::array()}}));
  const Json done = Call("GET", "/v1/deliveries/" + delivery);
  EXPECT_EQ(done["status"], "succeeded");
  EXPECT_EQ(done["attempt_count"], 6);
  // Finished: never pushed again, never in the feed again.
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(receiver.count(), 5u);
  EXPECT_TRUE(Call("GET", "/v1/destinations/" + dst + "/messages")["data"].empty());
  EXPECT_TRUE(Call("GET", "/v1/admin/dead-letters")["data"].empty());
}

}  // namespace
}  // namespace webhookd::testing::feed_fallback_e2e_test
