// Requests signed by the providers' own SDKs (tests/inbound/make_vectors.mjs: Stripe's,
// GitHub's, Shopify's, Slack's, Twilio's, Standard Webhooks' and Svix's, and the generic
// HMAC by its formula), signed now and sent to the ingest addresses of a running webhookd:
// each becomes exactly one event of the type its provider names, its redelivery none, and
// each event is delivered to the destination subscribed to every type.
//
// Needs node and `npm ci` in tests/inbound (scripts/test runs it); skipped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"
#include "tests/trace/node_tools.h"

namespace webhookd::testing::inbound_sdk_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kInboundDir = std::string(WEBHOOKD_SOURCE_DIR) + "/tests/inbound";

// The SDKs' requests, signed at `now`.
Json SignedNow(const std::string& node) {
  const std::string stem = TestLogDir() + "/inbound-sdk-" + std::to_string(::getpid());
  Process make({node, kInboundDir + "/make_vectors.mjs", stem + ".json"},
               {{"VECTORS_NOW", std::to_string(std::time(nullptr))}}, stem + ".log");
  if (make.Wait(60s).value_or(-1) != 0) return nullptr;
  std::ifstream in(stem + ".json");
  return Json::parse(in, nullptr, false);
}

httplib::Response Send(const WebhookdProcess& webhookd, const std::string& source,
                       const Json& vector) {
  httplib::Client client("127.0.0.1", webhookd.port());
  client.set_read_timeout(10, 0);
  httplib::Headers headers;
  std::string content_type = "application/json";
  for (const Json& h : vector["headers"]) {
    if (h[0] == "Content-Type") {
      content_type = h[1];
    } else {
      headers.emplace(h[0], h[1]);
    }
  }
  const std::string query = vector["query"];
  auto res = client.Post("/in/" + source + (query.empty() ? "" : "?" + query), headers,
                         vector["body"].get<std::string>(), content_type);
  if (!res) return httplib::Response{};
  return *res;
}

TEST(InboundSdkE2eTest, EachSdksRequestIsOneEventDeliveredAndItsRedeliveryNone) {
  const std::string node = trace::node::FindNode();
  if (node.empty()) GTEST_SKIP() << "needs node on PATH";
  if (::access((kInboundDir + "/node_modules/stripe").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "needs `npm ci` in tests/inbound";
  }
  const Json vectors = SignedNow(node);
  ASSERT_TRUE(vectors.is_array() && !vectors.empty()) << "make_vectors.mjs failed";

  TestDatabase db;
  Receiver receiver;
  WebhookdProcess webhookd(db.url(), "all");
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}}).status, 201);

  size_t events = 0;
  for (const Json& v : vectors) {
    SCOPED_TRACE(v["name"].get<std::string>());
    Json create = v["settings"];
    const Json& secrets = v["secrets"];
    create["secret"] = secrets[0];
    auto created = webhookd.Call("POST", "/v1/sources", create);
    ASSERT_EQ(created.status, 201) << created.body;
    const std::string id = Json::parse(created.body)["id"];
    // A rotation's vectors are signed with the newest secret, the older still accepted.
    for (size_t i = 1; i < secrets.size(); ++i) {
      auto rotated = webhookd.Call("POST", "/v1/sources/" + id + "/secret/rotate",
                                   {{"secret", secrets[i]}, {"grace_period", "1h"}});
      ASSERT_EQ(rotated.status, 200) << rotated.body;
    }
    const Json& expect = v["expect"];
    auto first = Send(webhookd, id, v);
    ASSERT_EQ(first.status, 200) << first.body;
    const Json answer = Json::parse(first.body, nullptr, false);
    if (expect.contains("challenge")) {
      EXPECT_EQ(answer["challenge"], expect["challenge"]);
      continue;
    }
    const std::string event_id = answer.value("event_id", "");
    ASSERT_FALSE(event_id.empty()) << first.body;
    ++events;
    auto again = Send(webhookd, id, v);
    EXPECT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(Json::parse(again.body, nullptr, false).value("event_id", ""), event_id);
    const Json event = Json::parse(webhookd.Call("GET", "/v1/events/" + event_id).body);
    EXPECT_EQ(event["type"], expect["event_type"]);
    EXPECT_EQ(event["source"]["id"], id);
    EXPECT_EQ(event["source"]["dedupe_key"], expect["dedupe_key"]);
  }
  EXPECT_GE(events, 12u);
  EXPECT_TRUE(WaitUntil([&] { return receiver.count() >= events; }, 20s, 50ms))
      << receiver.count() << " of " << events;
  std::this_thread::sleep_for(300ms);  // and no more
  EXPECT_EQ(receiver.count(), events);
}

}  // namespace
}  // namespace webhookd::testing::inbound_sdk_e2e_test
