// Broker destinations end to end (docs/brokers.md), through the API to a real redis-server
// the test starts on loopback: a signed entry per event with its headers as fields, fifo
// order per key, a broker stopped mid-drain (retryable attempts in the broker's words,
// nothing lost), refused credentials, the write-only credentials and the 422s.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/testing/nats_server.h"
#include "tests/testing/rabbitmq_server.h"
#include "tests/testing/redis_server.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::broker_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

using Entry = std::vector<std::pair<std::string, std::string>>;

std::string Field(const Entry& entry, const std::string& name) {
  for (const auto& [k, v] : entry) {
    if (k == name) return v;
  }
  return "<none>";
}

class BrokerE2eTest : public ::testing::Test {
 protected:
  BrokerE2eTest()
      : redis_({"--requirepass", "s3cret-pw"}),
        webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", RetrySchedule("200ms", 20)},
                   {"WEBHOOKD_RETRY_JITTER", "0"},
                   {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                   {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"},
                   {"WEBHOOKD_ENCRYPTION_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return !res.body.empty() ? Json::parse(res.body) : Json::object();
  }

  // The fields of a 422's errors; none when the answer is not a 422.
  std::vector<std::string> Refused(const std::string& method, const std::string& path,
                                   const Json& body) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, 422) << res.body;
    std::vector<std::string> fields;
    if (res.status != 422) return fields;
    const Json problem = Json::parse(res.body);
    for (const auto& e : problem["errors"]) fields.push_back(e["field"]);
    return fields;
  }

  Json CreateRedis(const std::string& stream, const Json& more = Json::object()) {
    Json body = {{"url", redis_.url()},
                 {"broker", {{"stream", stream}, {"password", "s3cret-pw"}}},
                 {"headers", {{"X-Tenant-Env", "prod"}}}};
    body.update(more);
    return Call("POST", "/v1/destinations", body, 201);
  }

  TestDatabase db_;
  RedisServer redis_;
  WebhookdProcess webhookd_;
};

TEST_F(BrokerE2eTest, AnEventIsOneSignedEntryWithItsHeadersAsFields) {
  const Json dst = CreateRedis("orders");
  EXPECT_EQ(dst["broker"], (Json{{"stream", "orders"}, {"password", "set"}})) << dst;
  const std::string secret = dst["secret"];
  const Json event =
      Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"n", 1}}}}, 202);
  const std::string delivery = "/v1/deliveries/" + event["deliveries"][0]["id"].get<std::string>();
  ASSERT_TRUE(WaitUntil([&] { return Call("GET", delivery)["status"] == "succeeded"; }, 30s));
  const auto entries = redis_.Entries("orders", "s3cret-pw");
  ASSERT_EQ(entries.size(), 1u);
  const Entry& e = entries[0];
  EXPECT_EQ(e[0].first, "body");
  const std::string body = Field(e, "body");
  EXPECT_EQ(Json::parse(body)["data"], (Json{{"n", 1}}));
  EXPECT_EQ(Field(e, "webhook-id"), event["id"]);
  EXPECT_EQ(Field(e, "content-type"), "application/json");
  EXPECT_EQ(Field(e, "x-tenant-env"), "prod");
  EXPECT_EQ(Field(e, "traceparent").size(), 55u);
  EXPECT_EQ(Field(e, "webhook-signature"),
            ExpectedSignature(secret, Field(e, "webhook-id"), Field(e, "webhook-timestamp"), body));
  // The attempt is a success without a status code.
  const Json attempts = Call("GET", delivery + "/attempts");
  ASSERT_EQ(attempts["data"].size(), 1u);
  EXPECT_EQ(attempts["data"][0]["outcome"], "success");
  EXPECT_TRUE(attempts["data"][0]["status_code"].is_null()) << attempts;
  // The password is never shown.
  for (const std::string& read :
       {"/v1/destinations/" + dst["id"].get<std::string>(), std::string("/v1/destinations")}) {
    EXPECT_EQ(webhookd_.Call("GET", read).body.find("s3cret-pw"), std::string::npos);
  }
}

TEST_F(BrokerE2eTest, AFifoDestinationsEntriesKeepEachKeysOrderAndNameTheKey) {
  CreateRedis("ordered", {{"ordering", "fifo"}});
  constexpr int kKeys = 3;
  constexpr int kPerKey = 8;
  for (int seq = 0; seq < kPerKey; ++seq) {
    for (int k = 0; k < kKeys; ++k) {
      Call("POST", "/v1/events",
           {{"type", "order.updated"},
            {"ordering_key", "key-" + std::to_string(k)},
            {"payload", {{"k", k}, {"seq", seq}}}},
           202);
    }
  }
  ASSERT_TRUE(WaitUntil(
      [&] { return redis_.Entries("ordered", "s3cret-pw").size() == size_t{kKeys * kPerKey}; },
      60s));
  std::map<std::string, std::vector<int>> seen;
  for (const Entry& e : redis_.Entries("ordered", "s3cret-pw")) {
    const Json data = Json::parse(Field(e, "body"))["data"];
    const std::string key = Field(e, "webhook-ordering-key");
    EXPECT_EQ(key, "key-" + std::to_string(data["k"].get<int>()));
    seen[key].push_back(data["seq"]);
  }
  for (int k = 0; k < kKeys; ++k) {
    std::vector<int> want;
    for (int seq = 0; seq < kPerKey; ++seq) want.push_back(seq);
    EXPECT_EQ(seen["key-" + std::to_string(k)], want);
  }
}

TEST_F(BrokerE2eTest, ABrokerStoppedMidDrainGetsEverythingOnceItIsBack) {
  CreateRedis("drain");
  constexpr int kEvents = 20;
  for (int i = 0; i < kEvents / 2; ++i) {
    Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"i", i}}}}, 202);
  }
  ASSERT_TRUE(WaitUntil(
      [&] { return redis_.Entries("drain", "s3cret-pw").size() == size_t{kEvents / 2}; }, 30s));
  redis_.Stop();
  std::string delivery;
  for (int i = kEvents / 2; i < kEvents; ++i) {
    delivery =
        "/v1/deliveries/" + Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"i", i}}}},
                                 202)["deliveries"][0]["id"]
                                .get<std::string>();
  }
  // Retryable attempts, each in the broker's (or the connection's) own words.
  ASSERT_TRUE(
      WaitUntil([&] { return Call("GET", delivery + "/attempts")["data"].size() >= 2; }, 30s));
  const Json failed = Call("GET", delivery + "/attempts")["data"][0];
  EXPECT_EQ(failed["outcome"], "retryable") << failed;
  EXPECT_TRUE(failed["status_code"].is_null());
  EXPECT_NE(failed["error"].get<std::string>().find("redis"), std::string::npos) << failed;
  redis_.Start();  // empty again: without persistence the first half is gone with it
  ASSERT_TRUE(WaitUntil(
      [&] { return redis_.Entries("drain", "s3cret-pw").size() == size_t{kEvents / 2}; }, 60s));
  std::vector<int> got;
  for (const Entry& e : redis_.Entries("drain", "s3cret-pw")) {
    got.push_back(Json::parse(Field(e, "body"))["data"]["i"]);
  }
  std::sort(got.begin(), got.end());
  for (int i = 0; i < kEvents / 2; ++i) EXPECT_EQ(got[i], kEvents / 2 + i);
}

TEST_F(BrokerE2eTest, RefusedCredentialsAreARetryableAttemptInTheBrokersWords) {
  const Json dst = Call(
      "POST", "/v1/destinations",
      {{"url", redis_.url()}, {"broker", {{"stream", "s"}, {"password", "wrong-password"}}}}, 201);
  const Json event =
      Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}}, 202);
  const std::string attempts =
      "/v1/deliveries/" + event["deliveries"][0]["id"].get<std::string>() + "/attempts";
  ASSERT_TRUE(WaitUntil([&] { return !Call("GET", attempts)["data"].empty(); }, 30s));
  const Json a = Call("GET", attempts)["data"][0];
  EXPECT_EQ(a["outcome"], "retryable") << a;
  EXPECT_NE(a["error"].get<std::string>().find("AUTH"), std::string::npos) << a;
  EXPECT_EQ(a["error"].get<std::string>().find("wrong-password"), std::string::npos) << a;
  // The right password ("set" would keep the wrong one): delivered.
  Call("PATCH", "/v1/destinations/" + dst["id"].get<std::string>(),
       {{"broker", {{"stream", "s"}, {"password", "s3cret-pw"}}}});
  ASSERT_TRUE(WaitUntil([&] { return redis_.Entries("s", "s3cret-pw").size() == 1; }, 30s));
}

TEST_F(BrokerE2eTest, SettingsThatDoNotFitTheirUrlAreRefusedNamingThem) {
  const std::string redis = redis_.url();
  using Fields = std::vector<std::string>;
  EXPECT_EQ(Refused("POST", "/v1/destinations", {{"url", redis}}), Fields{"broker.stream"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", redis}, {"broker", {{"stream", "s"}, {"topic", "t"}}}}),
            Fields{"broker.topic"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", "http://127.0.0.1:9/hook"}, {"broker", {{"stream", "s"}}}}),
            Fields{"broker"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", redis}, {"broker", {{"stream", "s"}, {"password", "set"}}}}),
            Fields{"broker.password"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", redis}, {"broker", {{"stream", "s"}, {"queue", "q"}}}}),
            Fields{"broker.queue"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", redis}, {"broker", {{"stream", "s"}, {"max_len", 0}}}}),
            Fields{"broker.max_len"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", "kafka://127.0.0.1:9092"}, {"broker", {{"topic", "bad topic"}}}}),
            Fields{"broker.topic"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", "nats://127.0.0.1:4222"}, {"broker", {{"subject", "a.*"}}}}),
            Fields{"broker.subject"});
  EXPECT_EQ(Refused("POST", "/v1/destinations",
                    {{"url", "rediss://127.0.0.1:6379"}, {"broker", {{"stream", "s"}}}}),
            Fields{"url"});
  EXPECT_EQ(Refused("POST", "/v1/destinations", {{"url", "redis://user:pw@127.0.0.1:6379"}}),
            Fields{"url"});
  // None of the refused bodies was stored.
  EXPECT_TRUE(Call("GET", "/v1/destinations")["data"].empty());
  // An AMQP and a NATS destination need no settings.
  Call("POST", "/v1/destinations", {{"url", "amqp://127.0.0.1/orders"}}, 201);
  const Json nats = Call("POST", "/v1/destinations", {{"url", "nats://127.0.0.1:4222"}}, 201);
  EXPECT_TRUE(nats["broker"].is_null());

  // A patch: the settings must fit the url the destination would have.
  const Json dst = CreateRedis("p", {{"headers", Json::object()}});
  const std::string path = "/v1/destinations/" + dst["id"].get<std::string>();
  EXPECT_EQ(Refused("PATCH", path, {{"url", "http://127.0.0.1:9/hook"}}), Fields{"broker"});
  EXPECT_EQ(Refused("PATCH", path, {{"broker", {{"stream", "p"}, {"username", "set"}}}}),
            Fields{"broker.username"});
  // "set" keeps the stored password; moving to another broker must send it again.
  Call("PATCH", path, {{"broker", {{"stream", "q"}, {"password", "set"}}}});
  const std::string elsewhere = "redis://127.0.0.2:" + std::to_string(redis_.port());
  EXPECT_EQ(Refused("PATCH", path, {{"url", elsewhere}}), Fields{"broker.password"});
  EXPECT_EQ(Refused("PATCH", path,
                    {{"url", elsewhere}, {"broker", {{"stream", "q"}, {"password", "set"}}}}),
            (Fields{"broker.password"}));
  // The refused patches changed nothing.
  const Json kept = Call("GET", path);
  EXPECT_EQ(kept["url"], redis_.url());
  EXPECT_EQ(kept["broker"], (Json{{"stream", "q"}, {"password", "set"}}));
  const Json moved = Call(
      "PATCH", path, {{"url", elsewhere}, {"broker", {{"stream", "q"}, {"password", "another"}}}});
  EXPECT_EQ(moved["broker"], (Json{{"stream", "q"}, {"password", "set"}}));
  // Another database of the same server is the same broker.
  Call("PATCH", path, {{"url", elsewhere + "/3"}});
}

// The other real brokers through the API, as a consumer on each sees a delivery: the body,
// the signature over it, the ordering key; a broker restarted mid-drain loses nothing
// webhookd was told was stored; a name of a private address is refused.
class OtherBrokersE2eTest : public ::testing::Test {
 protected:
  OtherBrokersE2eTest()
      : webhookd_(db_.url(), "all",
                  {{"WEBHOOKD_RETRY_SCHEDULE", RetrySchedule("2s", 20)},
                   {"WEBHOOKD_RETRY_JITTER", "0"},
                   {"WEBHOOKD_ATTEMPT_TIMEOUT", "2s"},
                   {"WEBHOOKD_CIRCUIT_THRESHOLD", "1000"}}) {}

  Json Call(const std::string& method, const std::string& path, const Json& body = nullptr,
            int want = 200) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return !res.body.empty() ? Json::parse(res.body) : Json::object();
  }

  std::string Publish(int n, const std::string& key = "") {
    Json body = {{"type", "order.created"}, {"payload", {{"n", n}}}};
    if (!key.empty()) body["ordering_key"] = key;
    return Call("POST", "/v1/events", body, 202)["deliveries"][0]["id"];
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(OtherBrokersE2eTest, RabbitMqGetsSignedMessagesAndLosesNoneToARestart) {
  RabbitMqServer rabbit;
  rabbit.DeclareQueue("orders");
  const Json dst =
      Call("POST", "/v1/destinations",
           {{"url", rabbit.url() + "/"}, {"broker", {{"routing_key", "orders"}}}}, 201);
  const std::string secret = dst["secret"];
  const std::string first = Publish(1, "acct-7");
  ASSERT_TRUE(WaitUntil(
      [&] { return Call("GET", "/v1/deliveries/" + first)["status"] == "succeeded"; }, 60s));
  auto m = rabbit.Get("orders");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(Json::parse(m->body)["data"], (Json{{"n", 1}}));
  EXPECT_EQ(m->headers["webhook-ordering-key"], "acct-7");
  EXPECT_EQ(m->message_id, m->headers["webhook-id"]);
  EXPECT_EQ(m->headers["webhook-signature"],
            ExpectedSignature(secret, m->headers["webhook-id"], m->headers["webhook-timestamp"],
                              m->body));
  // Stopped, then back: what was published meanwhile arrives once the node is up.
  rabbit.Stop();
  std::vector<std::string> later;
  for (int n = 2; n <= 6; ++n) later.push_back(Publish(n));
  ASSERT_TRUE(WaitUntil(
      [&] { return !Call("GET", "/v1/deliveries/" + later[0] + "/attempts")["data"].empty(); },
      30s));
  ASSERT_TRUE(rabbit.Start());
  rabbit.DeclareQueue("orders");  // the queue is durable, but declaring it is harmless
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const std::string& d : later) {
          if (Call("GET", "/v1/deliveries/" + d)["status"] != "succeeded") return false;
        }
        return true;
      },
      90s));
  std::vector<int> got;
  while (auto next = rabbit.Get("orders")) got.push_back(Json::parse(next->body)["data"]["n"]);
  std::sort(got.begin(), got.end());
  got.erase(std::unique(got.begin(), got.end()), got.end());
  EXPECT_EQ(got, (std::vector<int>{2, 3, 4, 5, 6}));
}

TEST_F(OtherBrokersE2eTest, NatsJetStreamStoresSignedMessagesOnceAndNoStreamIsRetried) {
  NatsServer nats;
  const Json dst = Call("POST", "/v1/destinations", {{"url", nats.url()}}, 201);
  const std::string secret = dst["secret"];
  // No stream yet: retryable attempts, in the broker's words.
  const std::string first = Publish(1);
  ASSERT_TRUE(WaitUntil(
      [&] { return !Call("GET", "/v1/deliveries/" + first + "/attempts")["data"].empty(); }, 30s));
  const Json failed = Call("GET", "/v1/deliveries/" + first + "/attempts")["data"][0];
  EXPECT_EQ(failed["outcome"], "retryable") << failed;
  EXPECT_NE(failed["error"].get<std::string>().find("no stream"), std::string::npos) << failed;
  ASSERT_TRUE(nats.AddStream("WEBHOOKS", {"webhooks.>"}));
  ASSERT_TRUE(WaitUntil(
      [&] { return Call("GET", "/v1/deliveries/" + first)["status"] == "succeeded"; }, 30s));
  const auto stored = nats.Messages("WEBHOOKS");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].subject, "webhooks.order.created");
  const auto header = [&](const std::string& name) {
    auto it = stored[0].headers.find(name);
    return it == stored[0].headers.end() ? std::string("<none>") : it->second;
  };
  EXPECT_EQ(header("Nats-Msg-Id"), header("webhook-id"));
  EXPECT_EQ(
      header("webhook-signature"),
      ExpectedSignature(secret, header("webhook-id"), header("webhook-timestamp"), stored[0].data));
}

// Every host of a broker url is vetted: a Kafka cluster's second bootstrap host too.
TEST(BrokerAddressE2eTest, ABrokerHostOfAPrivateAddressIsRefusedWhenPrivateOnesAreNot) {
  TestDatabase db;
  WebhookdProcess strict(db.url(), "server", {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "false"}});
  for (const std::string url : {"amqp://127.0.0.1/", "nats://10.0.0.1:4222", "redis://[::1]:6379",
                                "kafka://8.8.8.8:9092,127.0.0.1:9092"}) {
    Json body = {{"url", url}};
    if (url.starts_with("redis")) body["broker"] = {{"stream", "s"}};
    if (url.starts_with("kafka")) body["broker"] = {{"topic", "t"}};
    auto res = strict.Call("POST", "/v1/destinations", body);
    EXPECT_EQ(res.status, 422) << url << ": " << res.body;
    EXPECT_EQ(Json::parse(res.body)["errors"][0]["field"], "url") << res.body;
  }
}

}  // namespace
}  // namespace webhookd::testing::broker_e2e_test
