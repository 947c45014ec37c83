// Feeds end to end (docs/feeds.md): a destination whose url is feed: holds its deliveries
// for its consumer, who reads them signed exactly as a push would carry them, acks and
// nacks them; an unacked lease is a failed attempt until the schedule dead-letters it;
// tenants read their own feeds alone; bad input is a problem, never a 5xx; a read with a
// wait answers when a message arrives and holds no database connection meanwhile.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::feeds_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

class FeedsE2eTest : public ::testing::Test {
 protected:
  FeedsE2eTest()
      : webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms"},
                   {"WEBHOOKD_RETRY_JITTER", "0"}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200, const std::string& key = "") {
    auto res = webhookd_.Call(method, path, body, key);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return !res.body.empty() ? Json::parse(res.body, nullptr, false) : Json::object();
  }

  std::string CreateFeed(const Json& extra = Json::object()) {
    Json body = {{"url", "feed:"}, {"secret", kSecret}};
    body.update(extra);
    return Call("POST", "/v1/destinations", body, 201)["id"];
  }

  std::string Publish(int n, const Json& extra = Json::object()) {
    Json body = {{"type", "order.created"}, {"payload", {{"n", n}}}};
    body.update(extra);
    return Call("POST", "/v1/events", body, 202)["id"];
  }

  // Reads until `want` messages came or 10 s passed (what waits comes back after its
  // retry's time); the last answer.
  Json ReadUntil(const std::string& feed, size_t want, const std::string& query = "") {
    Json got;
    for (int i = 0; i < 100; ++i) {
      got = Call("GET", "/v1/destinations/" + feed + "/messages" + query);
      if (got["data"].size() >= want) break;
      std::this_thread::sleep_for(100ms);
    }
    return got;
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(FeedsE2eTest, AConsumerReadsVerifiesAcksAndNacks) {
  const std::string feed = CreateFeed();
  const std::string first = Publish(1);
  const std::string second = Publish(2);

  const Json read = Call("GET", "/v1/destinations/" + feed + "/messages?limit=1&lease=60s");
  ASSERT_EQ(read["data"].size(), 1u) << read;
  EXPECT_TRUE(read["lease_until"].is_string());
  const Json& m = read["data"][0];
  EXPECT_EQ(m["id"], first);
  EXPECT_EQ(m["event_id"], first);
  EXPECT_EQ(m["type"], "order.created");
  EXPECT_EQ(m["attempt"], 1);
  EXPECT_FALSE(m.contains("ordering_key"));
  const std::string body = m["body"];
  EXPECT_EQ(Json::parse(body)["data"], Json({{"n", 1}}));
  EXPECT_EQ(Json::parse(body)["timestamp"], m["timestamp"]);
  // Any Standard Webhooks verifier checks it: the signature recomputed with OpenSSL alone.
  const Json& h = m["headers"];
  EXPECT_EQ(h["webhook-id"], first);
  EXPECT_EQ(h["webhook-signature"],
            ExpectedSignature(kSecret, first, h["webhook-timestamp"], body));

  // Leased: the next read gets the second alone.
  const Json next = Call("GET", "/v1/destinations/" + feed + "/messages");
  ASSERT_EQ(next["data"].size(), 1u) << next;
  EXPECT_EQ(next["data"][0]["id"], second);

  const Json acked = Call("POST", "/v1/destinations/" + feed + "/messages/ack", {{"ids", {first}}});
  EXPECT_EQ(acked, Json({{"acked", 1}, {"expired", Json::array()}}));
  EXPECT_EQ(Call("GET", "/v1/deliveries/" + std::string(m["delivery_id"]))["status"], "succeeded");
  // The ack is counted; the gauge shows the second message, leased.
  const std::string metrics = webhookd_.Call("GET", "/metrics").body;
  EXPECT_NE(metrics.find("webhookd_feed_acks_total 1\n"), std::string::npos) << metrics;
  EXPECT_NE(
      metrics.find("webhookd_feed_messages{destination_id=\"" + feed + "\",state=\"leased\"} 1\n"),
      std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("webhookd_feed_messages{destination_id=\"" + feed + "\",state=\"waiting\"} 0\n"),
      std::string::npos)
      << metrics;
  // Twice is harmless.
  EXPECT_EQ(Call("POST", "/v1/destinations/" + feed + "/messages/ack", {{"ids", {first}}}),
            Json({{"acked", 0}, {"expired", Json::array()}}));

  const Json nacked = Call("POST", "/v1/destinations/" + feed + "/messages/nack",
                           {{"ids", {second}}, {"retry_in", "0s"}});
  EXPECT_EQ(nacked, Json({{"nacked", 1}, {"expired", Json::array()}}));
  const Json again = ReadUntil(feed, 1);
  ASSERT_EQ(again["data"].size(), 1u) << again;
  EXPECT_EQ(again["data"][0]["id"], second);
  EXPECT_EQ(again["data"][0]["attempt"], 2);
  const Json attempts =
      Call("GET", "/v1/deliveries/" + std::string(again["data"][0]["delivery_id"]) + "/attempts");
  ASSERT_EQ(attempts["data"].size(), 1u) << attempts;
  EXPECT_EQ(attempts["data"][0]["error"], "nacked");
}

TEST_F(FeedsE2eTest, AnUnackedLeaseIsAFailedAttemptUntilTheScheduleDeadLettersIt) {
  const std::string feed = CreateFeed({{"event_types", {"order.created"}}});
  const std::string unread = CreateFeed({{"event_types", {"order.shipped"}}});
  Publish(1);
  Call("POST", "/v1/events", {{"type", "order.shipped"}, {"payload", Json::object()}}, 202);
  std::string delivery;
  // Five attempts (the schedule's four waits + 1), each a lease of a second that ends.
  for (int attempt = 1; attempt <= 5; ++attempt) {
    const Json read = ReadUntil(feed, 1, "?lease=1s");
    ASSERT_EQ(read["data"].size(), 1u) << "attempt " << attempt << ": " << read;
    EXPECT_EQ(read["data"][0]["attempt"], attempt);
    delivery = read["data"][0]["delivery_id"];
  }
  std::string status;
  for (int i = 0; i < 100 && status != "dead_lettered"; ++i) {
    status = Call("GET", "/v1/deliveries/" + delivery)["status"];
    if (status != "dead_lettered") std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(status, "dead_lettered");
  const Json attempts = Call("GET", "/v1/deliveries/" + delivery + "/attempts");
  ASSERT_EQ(attempts["data"].size(), 5u) << attempts;
  for (const Json& a : attempts["data"]) EXPECT_EQ(a["error"], "lease expired");
  // The feed nobody read waits, unattempted, for as long as that took.
  const Json waiting = Call("GET", "/v1/deliveries?destination_id=" + unread);
  ASSERT_EQ(waiting["data"].size(), 1u) << waiting;
  EXPECT_EQ(waiting["data"][0]["status"], "pending");
  EXPECT_EQ(waiting["data"][0]["attempt_count"], 0);
}

TEST_F(FeedsE2eTest, TheDestinationsTenantReadsItAndAnotherTenantFindsNothing) {
  const std::string t_key =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "t", "--role", "tenant", "--tenant", "T"});
  const std::string u_key =
      WebhookdProcess::CreateKey(db_.url(), {"--name", "u", "--role", "tenant", "--tenant", "U"});
  ASSERT_FALSE(t_key.empty());
  ASSERT_FALSE(u_key.empty());
  const std::string feed = CreateFeed({{"tenant_id", "T"}});
  const std::string event = Publish(1, {{"tenant_id", "T"}});
  const std::string path = "/v1/destinations/" + feed + "/messages";

  auto unknown = webhookd_.Call("GET", "/v1/destinations/dst_999999999/messages", nullptr, u_key);
  auto other = webhookd_.Call("GET", path, nullptr, u_key);
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(other.body, unknown.body);
  auto other_ack = webhookd_.Call("POST", path + "/ack", {{"ids", {event}}}, u_key);
  EXPECT_EQ(other_ack.status, 404) << other_ack.body;
  auto other_counts = webhookd_.Call("GET", path + "/counts", nullptr, u_key);
  EXPECT_EQ(other_counts.status, 404);
  EXPECT_EQ(
      other_counts.body,
      webhookd_.Call("GET", "/v1/destinations/dst_999999999/messages/counts", nullptr, u_key).body);
  const Json before = Call("GET", path + "/counts", nullptr, 200, t_key);
  EXPECT_EQ(before, Json({{"waiting", 1}, {"leased", 0}}));

  const Json read = Call("GET", path, nullptr, 200, t_key);
  EXPECT_EQ(Call("GET", path + "/counts", nullptr, 200, t_key),
            Json({{"waiting", 0}, {"leased", 1}}));
  ASSERT_EQ(read["data"].size(), 1u) << read;
  EXPECT_EQ(Call("POST", path + "/ack", {{"ids", {event}}}, 200, t_key)["acked"], 1);

  // A destination that is pushed to has no messages to read.
  const std::string hook =
      Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/hook"}, {"tenant_id", "T"}},
           201)["id"];
  auto pushed = webhookd_.Call("GET", "/v1/destinations/" + hook + "/messages", nullptr, t_key);
  EXPECT_EQ(pushed.status, 409) << pushed.body;
  EXPECT_NE(pushed.get_header_value("Content-Type").find("application/problem+json"),
            std::string::npos);
}

TEST_F(FeedsE2eTest, BadInputIsAProblemNeverAServerError) {
  const std::string feed = CreateFeed();
  const std::string path = "/v1/destinations/" + feed + "/messages";
  for (const std::string query :
       {"?limit=0", "?limit=1001", "?limit=x", "?lease=0s", "?lease=13h", "?lease=30"}) {
    auto res = webhookd_.Call("GET", path + query);
    EXPECT_EQ(res.status, 422) << query << ": " << res.body;
    EXPECT_NE(res.get_header_value("Content-Type").find("application/problem+json"),
              std::string::npos);
  }
  for (const Json& body : {Json{{"ids", "evt_1"}}, Json::object(), Json{{"ids", Json::array()}},
                           Json{{"ids", {"dst_1"}}}, Json{{"ids", {1}}},
                           Json{{"ids", {"evt_1"}}, {"idz", 1}}, Json::array()}) {
    auto res = webhookd_.Call("POST", path + "/ack", body);
    EXPECT_EQ(res.status, 422) << body << ": " << res.body;
  }
  auto retry = webhookd_.Call("POST", path + "/nack", {{"ids", {"evt_1"}}, {"retry_in", "soon"}});
  EXPECT_EQ(retry.status, 422) << retry.body;
  auto malformed = webhookd_.Client()->Post(path + "/ack", "{\"ids\": [", "application/json");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  // A feed's url is exactly feed:.
  for (const std::string url : {"feed:x", "feed://host", "FEED:x"}) {
    auto res = webhookd_.Call("POST", "/v1/destinations", {{"url", url}});
    EXPECT_EQ(res.status, 422) << url << ": " << res.body;
  }
  // An id of no message of this feed is neither acked nor expired.
  EXPECT_EQ(Call("POST", path + "/ack", {{"ids", {"evt_999999"}}}),
            Json({{"acked", 0}, {"expired", Json::array()}}));
}

// A read that waits answers when a message arrives, well before its wait ends.
TEST_F(FeedsE2eTest, AWaitingReadAnswersWhenAMessageArrives) {
  const std::string feed = CreateFeed();
  const auto started = std::chrono::steady_clock::now();
  auto read = std::async(std::launch::async, [&] {
    return webhookd_.Call("GET", "/v1/destinations/" + feed + "/messages?wait=10");
  });
  std::this_thread::sleep_for(1s);
  const std::string event = Publish(1);
  ASSERT_EQ(read.wait_for(8s), std::future_status::ready) << "still waiting 9 s in";
  const auto res = read.get();
  ASSERT_EQ(res.status, 200) << res.body;
  const Json got = Json::parse(res.body);
  ASSERT_EQ(got["data"].size(), 1u) << got;
  EXPECT_EQ(got["data"][0]["id"], event);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 9s);
}

TEST_F(FeedsE2eTest, AWaitingReadWithNothingAnswersEmptyWhenItsWaitEnds) {
  const std::string feed = CreateFeed();
  const auto started = std::chrono::steady_clock::now();
  const Json got = Call("GET", "/v1/destinations/" + feed + "/messages?wait=1");
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(got["data"], Json::array()) << got;
  EXPECT_TRUE(got["lease_until"].is_string());
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 5s);
  // A message another feed gets wakes the read, which finds nothing and waits on.
  const std::string other = CreateFeed({{"event_types", {"order.shipped"}}});
  CreateFeed({{"event_types", {"order.created"}}});
  auto read = std::async(std::launch::async, [&] {
    return webhookd_.Call("GET", "/v1/destinations/" + other + "/messages?wait=2s");
  });
  std::this_thread::sleep_for(500ms);
  Publish(2);
  const auto res = read.get();
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Json::parse(res.body)["data"], Json::array());
  EXPECT_GE(std::chrono::steady_clock::now() - started - took, 1900ms);
}

TEST_F(FeedsE2eTest, AWaitOutsideZeroToThirtySecondsIsAProblem) {
  const std::string feed = CreateFeed();
  const std::string path = "/v1/destinations/" + feed + "/messages";
  for (const std::string query : {"?wait=31", "?wait=31s", "?wait=-1", "?wait=x", "?wait=1.5"}) {
    auto res = webhookd_.Call("GET", path + query);
    EXPECT_EQ(res.status, 422) << query << ": " << res.body;
    EXPECT_NE(res.get_header_value("Content-Type").find("application/problem+json"),
              std::string::npos);
    EXPECT_NE(res.body.find("wait"), std::string::npos) << res.body;
  }
  // wait=0 answers at once, as no wait does.
  EXPECT_EQ(Call("GET", path + "?wait=0")["data"], Json::array());
}

// Twenty reads wait at once; the process holds no more database connections than before
// they came, and its other requests are answered meanwhile.
TEST_F(FeedsE2eTest, WaitingReadsHoldNoDatabaseConnection) {
  const std::string feed = CreateFeed();
  const std::string path = "/v1/destinations/" + feed + "/messages";
  const std::string others =
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid()";
  Call("GET", path);
  const int baseline = std::stoi(db_.Scalar(others));
  std::vector<std::future<httplib::Response>> reads;
  for (int i = 0; i < 20; ++i) {
    reads.push_back(
        std::async(std::launch::async, [&] { return webhookd_.Call("GET", path + "?wait=6"); }));
    std::this_thread::sleep_for(50ms);  // one lease at a time: the pool need not grow
  }
  std::this_thread::sleep_for(1s);
  for (auto& r : reads) ASSERT_EQ(r.wait_for(0s), std::future_status::timeout) << "answered early";
  EXPECT_LE(std::stoi(db_.Scalar(others)), baseline);
  Call("GET", "/v1/destinations?limit=1");
  for (auto& r : reads) {
    const auto res = r.get();
    EXPECT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(Json::parse(res.body)["data"], Json::array());
  }
}

// A stop answers the reads that wait (an empty list) rather than keep them to their end.
TEST_F(FeedsE2eTest, AStopAnswersTheWaitingReads) {
  const std::string feed = CreateFeed();
  const auto started = std::chrono::steady_clock::now();
  auto read = std::async(std::launch::async, [&] {
    return webhookd_.Call("GET", "/v1/destinations/" + feed + "/messages?wait=30");
  });
  std::this_thread::sleep_for(1s);
  webhookd_.process().Signal(SIGTERM);
  const auto res = read.get();
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Json::parse(res.body, nullptr, false)["data"], Json::array()) << res.body;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_EQ(webhookd_.process().Wait(10s), 0);
}

}  // namespace
}  // namespace webhookd::testing::feeds_e2e_test
