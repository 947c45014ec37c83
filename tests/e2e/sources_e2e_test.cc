// Inbound sources (docs/inbound.md) through the real binary and a real PostgreSQL: the
// routes that manage them, tenant by tenant, and the address each provider sends to,
// signed by each provider's formula (OpenSSL HMAC); a verified request becomes one event,
// a provider's retry of it none more, and the event is delivered like a published one.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/encoding.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::sources_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSecret = "s3cret-of-the-provider";
// Standard Webhooks' secrets are whsec_ and the base64 of the key (here 32 bytes).
constexpr const char* kSwSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=";

Json Body(const httplib::Response& res) { return Json::parse(res.body, nullptr, false); }

std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(md, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}
std::string HexSha256(std::string_view key, std::string_view data) {
  return HexEncode(Hmac(EVP_sha256(), key, data));
}
std::string Sha256Hex(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
  return HexEncode(std::string(reinterpret_cast<const char*>(out), len));
}
std::string Now() { return std::to_string(std::time(nullptr)); }

// One request to a source's address.
struct Inbound {
  std::string body;
  httplib::Headers headers;
  std::string content_type = "application/json";
};

httplib::Response Send(const WebhookdProcess& webhookd, const std::string& source,
                       const Inbound& in, const std::string& query = "") {
  httplib::Client client("127.0.0.1", webhookd.port());
  client.set_read_timeout(10, 0);
  auto res = client.Post("/in/" + source + query, in.headers, in.body, in.content_type);
  if (!res) return httplib::Response{};
  return *res;
}

std::string CreateSource(const WebhookdProcess& webhookd, const Json& body,
                         const std::string& key = "") {
  auto res = webhookd.Call("POST", "/v1/sources", body, key);
  EXPECT_EQ(res.status, 201) << res.body;
  return Body(res).value("id", "");
}

Inbound Stripe(const std::string& secret, const std::string& id, std::string t = Now()) {
  Inbound in;
  in.body = R"({"id": ")" + id + R"(", "type": "charge.succeeded", "amount": 12.50})";
  in.headers = {{"Stripe-Signature", "t=" + t + ",v1=" + HexSha256(secret, t + "." + in.body)}};
  return in;
}

Inbound Github(const std::string& delivery) {
  Inbound in;
  in.body = R"({"action":"opened","number":7})";
  in.headers = {{"X-Hub-Signature-256", "sha256=" + HexSha256(kSecret, in.body)},
                {"X-GitHub-Delivery", delivery},
                {"X-GitHub-Event", "pull_request"}};
  return in;
}

Inbound Shopify(const std::string& webhook_id) {
  Inbound in;
  in.body = R"({"order":1})";
  in.headers = {{"X-Shopify-Hmac-Sha256", Base64Encode(Hmac(EVP_sha256(), kSecret, in.body))},
                {"X-Shopify-Webhook-Id", webhook_id},
                {"X-Shopify-Topic", "orders/create"}};
  return in;
}

Inbound Slack(const std::string& event_id) {
  Inbound in;
  const std::string t = Now();
  in.body = R"({"type":"event_callback","event_id":")" + event_id +
            R"(","event":{"type":"app_mention"}})";
  in.headers = {{"X-Slack-Request-Timestamp", t},
                {"X-Slack-Signature", "v0=" + HexSha256(kSecret, "v0:" + t + ":" + in.body)}};
  return in;
}

constexpr const char* kTwilioUrl = "https://hooks.example.com/twilio";

Inbound Twilio(const std::string& token) {
  Inbound in;
  in.body = "MessageSid=SM1&EventType=message.delivered&To=%2B15550001";
  // The URL, then each parameter's name and value, sorted by name.
  const std::string signed_text =
      std::string(kTwilioUrl) + "EventTypemessage.deliveredMessageSidSM1To+15550001";
  in.headers = {{"X-Twilio-Signature", Base64Encode(Hmac(EVP_sha1(), kSecret, signed_text))},
                {"I-Twilio-Idempotency-Token", token}};
  in.content_type = "application/x-www-form-urlencoded";
  return in;
}

Inbound StandardWebhooks(const std::string& id) {
  Inbound in;
  const std::string t = Now();
  in.body = R"({"type":"invoice.paid","data":{}})";
  const std::string key = *Base64Decode(std::string_view(kSwSecret).substr(6));
  in.headers = {{"webhook-id", id},
                {"webhook-timestamp", t},
                {"webhook-signature",
                 "v1," + Base64Encode(Hmac(EVP_sha256(), key, id + "." + t + "." + in.body))}};
  return in;
}

Inbound HmacSigned(const std::string& delivery) {
  Inbound in;
  in.body = R"({"partner":"p"})";
  in.headers = {{"X-Signature", "sha256=" + HexSha256(kSecret, in.body)}, {"X-Delivery", delivery}};
  return in;
}

class SourcesE2eTest : public ::testing::Test {
 protected:
  TestDatabase db_;
  WebhookdProcess webhookd_{db_.url(), "all"};
};

TEST_F(SourcesE2eTest, CreateReadListPatchDeleteAndTheirRefusals) {
  auto created = webhookd_.Call("POST", "/v1/sources",
                                {{"provider", "stripe"},
                                 {"secret", "whsec_abc"},
                                 {"description", "live account"},
                                 {"tolerance", "2m"}});
  ASSERT_EQ(created.status, 201) << created.body;
  const Json view = Body(created);
  const std::string id = view["id"];
  EXPECT_TRUE(id.starts_with("src_")) << id;
  EXPECT_EQ(view["secret"], "set");
  EXPECT_EQ(view["provider"], "stripe");
  EXPECT_EQ(view["type_prefix"], "stripe");
  EXPECT_EQ(view["tolerance"], "2m");
  EXPECT_EQ(view["ingest_url"],
            "http://127.0.0.1:" + std::to_string(webhookd_.port()) + "/in/" + id);
  EXPECT_TRUE(view["created_at"].is_string());
  EXPECT_EQ(created.body.find("whsec_abc"), std::string::npos);

  auto got = webhookd_.Call("GET", "/v1/sources/" + id);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(Body(got)["description"], "live account");
  auto list = webhookd_.Call("GET", "/v1/sources?limit=1");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(Body(list)["data"][0]["id"], id);

  // Each refusal names its field; nothing is created.
  for (const auto& [body, field] : std::vector<std::pair<Json, std::string>>{
           {{{"provider", "stripe"}, {"secret", "x"}, {"secrte", "x"}}, "secrte"},
           {{{"provider", "stripe"}}, "secret"},
           {{{"secret", "x"}}, "provider"},
           {{{"provider", "paypal"}, {"secret", "x"}}, "provider"},
           {{{"provider", "stripe"}, {"secret", "x"}, {"url", "https://a.example/"}}, "url"},
           {{{"provider", "twilio"}, {"secret", "x"}}, "url"},
           {{{"provider", "hmac"}, {"secret", "x"}, {"hmac", {{"header", "X-S"}}}}, "event_type"},
           {{{"provider", "stripe"}, {"secret", "x"}, {"tolerance", "2h"}}, "tolerance"},
           {{{"provider", "standard-webhooks"}, {"secret", "short"}}, "secret"},
           {{{"provider", "github"}, {"secret", "set"}}, "secret"},
       }) {
    auto refused = webhookd_.Call("POST", "/v1/sources", body);
    EXPECT_EQ(refused.status, 422) << body.dump() << " " << refused.body;
    EXPECT_NE(refused.body.find("\"" + field + "\""), std::string::npos)
        << body.dump() << " " << refused.body;
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM sources"), "1");

  auto patched = webhookd_.Call("PATCH", "/v1/sources/" + id,
                                {{"description", "test account"}, {"secret", "set"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Body(patched)["description"], "test account");
  // A view sent back as it came patches nothing.
  EXPECT_EQ(webhookd_.Call("PATCH", "/v1/sources/" + id, Body(patched)).status, 200);
  for (const Json& body : {Json{{"provider", "github"}}, Json{{"secret", "new"}},
                           Json{{"tenant_id", "acme"}}, Json{{"descriptoin", "x"}}}) {
    EXPECT_EQ(webhookd_.Call("PATCH", "/v1/sources/" + id, body).status, 422) << body.dump();
  }

  EXPECT_EQ(webhookd_.Call("DELETE", "/v1/sources/" + id).status, 204);
  EXPECT_EQ(webhookd_.Call("GET", "/v1/sources/" + id).status, 404);
  EXPECT_EQ(webhookd_.Call("DELETE", "/v1/sources/" + id).status, 404);
  EXPECT_EQ(webhookd_.Call("GET", "/v1/sources/dst_1").status, 404);
}

TEST_F(SourcesE2eTest, ATenantKeySeesItsOwnSourcesAloneAndOthersAsUnknown) {
  const std::string t_key =
      WebhookdProcess::CreateKey(db_.url(), {"--role", "tenant", "--tenant", "T"});
  ASSERT_FALSE(t_key.empty());
  const std::string of_u =
      CreateSource(webhookd_, {{"provider", "github"}, {"secret", kSecret}, {"tenant_id", "U"}});
  const std::string of_none =
      CreateSource(webhookd_, {{"provider", "github"}, {"secret", kSecret}});
  // A tenant key's source is its tenant's, whatever the body says.
  const std::string of_t = CreateSource(
      webhookd_, {{"provider", "github"}, {"secret", kSecret}, {"tenant_id", "U"}}, t_key);
  EXPECT_EQ(Body(webhookd_.Call("GET", "/v1/sources/" + of_t))["tenant_id"], "T");

  const auto unknown = webhookd_.Call("GET", "/v1/sources/src_999999", nullptr, t_key);
  ASSERT_EQ(unknown.status, 404);
  for (const std::string& other : {of_u, of_none}) {
    for (const auto& [method, path, body] : std::vector<std::tuple<std::string, std::string, Json>>{
             {"GET", "/v1/sources/" + other, nullptr},
             {"PATCH", "/v1/sources/" + other, {{"description", "x"}}},
             {"POST", "/v1/sources/" + other + "/secret/rotate", {{"secret", "other"}}},
             {"GET", "/v1/sources/" + other + "/requests", nullptr},
             {"DELETE", "/v1/sources/" + other, nullptr}}) {
      auto res = webhookd_.Call(method, path, body, t_key);
      EXPECT_EQ(res.status, 404) << method << " " << path;
      EXPECT_EQ(res.body, unknown.body) << method << " " << path;
    }
  }
  EXPECT_EQ(webhookd_.Call("GET", "/v1/sources/" + of_t, nullptr, t_key).status, 200);
  auto own = Body(webhookd_.Call("GET", "/v1/sources", nullptr, t_key))["data"];
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0]["id"], of_t);
  // The admin key sees all, and filters by tenant.
  EXPECT_EQ(Body(webhookd_.Call("GET", "/v1/sources"))["data"].size(), 3u);
  auto of_tenant_u = Body(webhookd_.Call("GET", "/v1/sources?tenant_id=U"))["data"];
  ASSERT_EQ(of_tenant_u.size(), 1u);
  EXPECT_EQ(of_tenant_u[0]["id"], of_u);
  EXPECT_EQ(webhookd_.Call("GET", "/v1/sources?tenant_id=bad/one").status, 422);
  // The other tenant's source was left as it was.
  EXPECT_EQ(Body(webhookd_.Call("GET", "/v1/sources/" + of_u))["description"], "");
}

TEST_F(SourcesE2eTest, EachProviderIsAcceptedOnceAndItsRetryAnswersTheSameEvent) {
  struct Case {
    Json source;
    std::function<Inbound(const std::string&)> make;
    std::string type;
  };
  const std::vector<Case> cases = {
      {{{"provider", "stripe"}, {"secret", kSecret}},
       [](const std::string& k) { return Stripe(kSecret, k); },
       "stripe.charge.succeeded"},
      {{{"provider", "github"}, {"secret", kSecret}}, Github, "github.pull_request.opened"},
      {{{"provider", "shopify"}, {"secret", kSecret}}, Shopify, "shopify.orders.create"},
      {{{"provider", "slack"}, {"secret", kSecret}}, Slack, "slack.app_mention"},
      {{{"provider", "twilio"}, {"secret", kSecret}, {"url", kTwilioUrl}},
       Twilio,
       "twilio.message.delivered"},
      {{{"provider", "standard-webhooks"}, {"secret", kSwSecret}, {"type_prefix", "billing"}},
       StandardWebhooks,
       "billing.invoice.paid"},
      {{{"provider", "hmac"},
        {"secret", kSecret},
        {"hmac", {{"header", "X-Signature"}, {"prefix", "sha256="}}},
        {"event_type", "partner.update"},
        {"dedupe_header", "X-Delivery"}},
       HmacSigned,
       "hmac.partner.update"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.source.dump());
    const std::string source = CreateSource(webhookd_, c.source);
    const Inbound first = c.make("key-1");
    auto accepted = Send(webhookd_, source, first);
    ASSERT_EQ(accepted.status, 200) << accepted.body;
    const std::string event = Body(accepted)["event_id"];
    ASSERT_TRUE(event.starts_with("evt_")) << accepted.body;
    auto again = Send(webhookd_, source, c.make("key-1"));
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(Body(again)["event_id"], event);
    auto other = Send(webhookd_, source, c.make("key-2"));
    ASSERT_EQ(other.status, 200) << other.body;
    EXPECT_NE(Body(other)["event_id"], event);

    auto read = webhookd_.Call("GET", "/v1/events/" + event);
    ASSERT_EQ(read.status, 200) << read.body;
    const Json e = Body(read);
    EXPECT_EQ(e["type"], c.type);
    EXPECT_EQ(e["source"]["id"], source);
    EXPECT_EQ(e["source"]["provider"], c.source["provider"]);
    EXPECT_EQ(e["source"]["dedupe_key"], "key-1");
    if (c.source["provider"] == "twilio") {
      EXPECT_EQ(
          e["payload"],
          (Json{{"MessageSid", "SM1"}, {"EventType", "message.delivered"}, {"To", "+15550001"}}));
    } else {
      // The payload is the body's own bytes.
      EXPECT_NE(read.body.find(R"("payload":)" + first.body), std::string::npos) << read.body;
    }
    auto listed = Body(webhookd_.Call("GET", "/v1/events?source_id=" + source))["data"];
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[1]["source"]["id"], source);
    EXPECT_EQ(listed[1]["id"], event);
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "14");
  // A published event names no source.
  auto published =
      webhookd_.Call("POST", "/v1/events", {{"type", "t"}, {"payload", Json::object()}});
  ASSERT_EQ(published.status, 202);
  EXPECT_FALSE(Body(webhookd_.Call("GET", "/v1/events/" + std::string(Body(published)["id"])))
                   .contains("source"));
  const std::string metrics = webhookd_.Call("GET", "/metrics").body;
  EXPECT_NE(
      metrics.find(R"(webhookd_inbound_requests_total{provider="github",outcome="duplicate"} 1)"),
      std::string::npos);
  EXPECT_NE(
      metrics.find(R"(webhookd_inbound_requests_total{provider="stripe",outcome="accepted"} 2)"),
      std::string::npos);
}

TEST_F(SourcesE2eTest, EveryUnverifiedRequestGetsOneBodyAndUnknownOrDeletedSourcesAre404) {
  const std::string source = CreateSource(webhookd_, {{"provider", "stripe"}, {"secret", kSecret}});
  Inbound unsigned_request = Stripe(kSecret, "evt_1");
  unsigned_request.headers.clear();
  Inbound wrong = Stripe("another secret", "evt_1");
  Inbound stale = Stripe(kSecret, "evt_1", std::to_string(std::time(nullptr) - 3600));
  Inbound tampered = Stripe(kSecret, "evt_1");
  tampered.body[tampered.body.size() - 2] = '9';
  std::vector<std::string> bodies;
  for (const Inbound& in : {unsigned_request, wrong, stale, tampered}) {
    auto res = Send(webhookd_, source, in);
    EXPECT_EQ(res.status, 401) << res.body;
    bodies.push_back(res.body);
  }
  for (const std::string& b : bodies) EXPECT_EQ(b, bodies[0]);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");

  // Verified but not Stripe's: no type.
  Inbound malformed;
  malformed.body = R"({"id":"evt_2"})";
  const std::string t = Now();
  malformed.headers = {
      {"Stripe-Signature", "t=" + t + ",v1=" + HexSha256(kSecret, t + "." + malformed.body)}};
  EXPECT_EQ(Send(webhookd_, source, malformed).status, 400);

  EXPECT_EQ(Send(webhookd_, "src_999999", Stripe(kSecret, "evt_1")).status, 404);
  EXPECT_EQ(Send(webhookd_, "nonsense", Stripe(kSecret, "evt_1")).status, 404);
  ASSERT_EQ(Send(webhookd_, source, Stripe(kSecret, "evt_1")).status, 200);
  ASSERT_EQ(webhookd_.Call("DELETE", "/v1/sources/" + source).status, 204);
  EXPECT_EQ(Send(webhookd_, source, Stripe(kSecret, "evt_3")).status, 404);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "1");
}

// What the console shows per source: the latest requests, verified or not, newest first,
// with what each became; kept in the server's memory, never in the database.
TEST_F(SourcesE2eTest, TheLatestRequestsOfASourceListWhatEachBecame) {
  const std::string src = CreateSource(webhookd_, {{"provider", "github"}, {"secret", kSecret}});
  const std::string other = CreateSource(webhookd_, {{"provider", "github"}, {"secret", kSecret}});
  auto empty = webhookd_.Call("GET", "/v1/sources/" + src + "/requests");
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_TRUE(Body(empty)["data"].empty());

  auto first = Send(webhookd_, src, Github("req-1"));
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_EQ(Send(webhookd_, src, Github("req-1")).status, 200);
  Inbound forged = Github("req-2");
  forged.headers.erase("X-Hub-Signature-256");
  forged.headers.emplace("X-Hub-Signature-256",
                         "sha256=" + HexSha256("not-the-secret", forged.body));
  ASSERT_EQ(Send(webhookd_, src, forged).status, 401);
  ASSERT_EQ(Send(webhookd_, other, Github("req-3")).status, 200);

  auto res = webhookd_.Call("GET", "/v1/sources/" + src + "/requests");
  ASSERT_EQ(res.status, 200) << res.body;
  const Json data = Body(res)["data"];
  ASSERT_EQ(data.size(), 3u) << res.body;
  EXPECT_EQ(data[0]["outcome"], "unverified");
  EXPECT_EQ(data[0]["status"], 401);
  EXPECT_FALSE(data[0].contains("event_id"));
  EXPECT_EQ(data[1]["outcome"], "duplicate");
  EXPECT_EQ(data[2]["outcome"], "accepted");
  EXPECT_EQ(data[1]["event_id"], Body(first)["event_id"]);
  EXPECT_EQ(data[2]["event_id"], Body(first)["event_id"]);
  EXPECT_EQ(data[2]["status"], 200);
  EXPECT_TRUE(data[2].contains("received_at"));
  EXPECT_EQ(webhookd_.Call("GET", "/v1/sources/src_999999/requests").status, 404);
}

TEST_F(SourcesE2eTest, ARotatedSecretVerifiesBesideTheNewOneUntilItsGraceEnds) {
  const std::string source = CreateSource(webhookd_, {{"provider", "stripe"}, {"secret", "old"}});
  EXPECT_EQ(
      webhookd_.Call("POST", "/v1/sources/" + source + "/secret/rotate", Json::object()).status,
      422);
  auto rotated = webhookd_.Call("POST", "/v1/sources/" + source + "/secret/rotate",
                                {{"secret", "new"}, {"grace_period", "3s"}});
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  EXPECT_EQ(Body(rotated)["secret"], "set");
  EXPECT_TRUE(Body(rotated)["previous_valid_until"].is_string());
  EXPECT_EQ(Send(webhookd_, source, Stripe("new", "evt_a")).status, 200);
  EXPECT_EQ(Send(webhookd_, source, Stripe("old", "evt_b")).status, 200);
  std::this_thread::sleep_for(3500ms);
  EXPECT_EQ(Send(webhookd_, source, Stripe("old", "evt_c")).status, 401);
  EXPECT_EQ(Send(webhookd_, source, Stripe("new", "evt_d")).status, 200);
  // Grace 0: the old secret ends at once.
  ASSERT_EQ(webhookd_
                .Call("POST", "/v1/sources/" + source + "/secret/rotate",
                      {{"secret", "newer"}, {"grace_period", "0"}})
                .status,
            200);
  EXPECT_EQ(Send(webhookd_, source, Stripe("new", "evt_e")).status, 401);
  EXPECT_EQ(Send(webhookd_, source, Stripe("newer", "evt_f")).status, 200);
}

TEST_F(SourcesE2eTest, AnInboundEventIsDeliveredToTheSourceTenantsDestinations) {
  Receiver receiver;
  auto dst = webhookd_.Call(
      "POST", "/v1/destinations",
      {{"url", receiver.url()}, {"tenant_id", "acme"}, {"event_types", {"github.*"}}});
  ASSERT_EQ(dst.status, 201) << dst.body;
  // Another tenant's destination gets nothing.
  Receiver other;
  ASSERT_EQ(webhookd_.Call("POST", "/v1/destinations", {{"url", other.url()}}).status, 201);
  const std::string source =
      CreateSource(webhookd_, {{"provider", "github"}, {"secret", kSecret}, {"tenant_id", "acme"}});
  const Inbound in = Github("d-1");
  auto accepted = Send(webhookd_, source, in);
  ASSERT_EQ(accepted.status, 200) << accepted.body;
  ASSERT_TRUE(receiver.WaitFor(1, 20s));
  const Received got = receiver.requests()[0];
  EXPECT_NE(got.body.find(R"("data":)" + in.body), std::string::npos) << got.body;
  EXPECT_NE(got.body.find("github.pull_request.opened"), std::string::npos) << got.body;
  EXPECT_EQ(Body(webhookd_.Call(
                "GET", "/v1/events/" + std::string(Body(accepted)["event_id"])))["tenant_id"],
            "acme");
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(other.requests().size(), 0u);
}

TEST_F(SourcesE2eTest, ConcurrentCopiesOfOneRequestMakeOneEventAndAllAnswerItsId) {
  const std::string source = CreateSource(webhookd_, {{"provider", "github"}, {"secret", kSecret}});
  const Inbound in = Github("race-1");
  std::vector<std::future<httplib::Response>> sent;
  for (int i = 0; i < 8; ++i) {
    sent.push_back(std::async(std::launch::async, [&] { return Send(webhookd_, source, in); }));
  }
  std::set<std::string> ids;
  for (auto& f : sent) {
    auto res = f.get();
    ASSERT_EQ(res.status, 200) << res.body;
    ids.insert(Body(res)["event_id"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "1");
}

TEST_F(SourcesE2eTest, ATwilioJsonBodyIsVerifiedThroughTheQueryItWasSentWith) {
  const std::string source =
      CreateSource(webhookd_, {{"provider", "twilio"}, {"secret", kSecret}, {"url", kTwilioUrl}});
  Inbound in;
  in.body = R"({"EventType":"call.completed","CallSid":"CA1"})";
  const std::string query = "bodySHA256=" + Sha256Hex(in.body);
  in.headers = {{"X-Twilio-Signature",
                 Base64Encode(Hmac(EVP_sha1(), kSecret, std::string(kTwilioUrl) + "?" + query))},
                {"I-Twilio-Idempotency-Token", "tok-json"}};
  auto accepted = Send(webhookd_, source, in, "?" + query);
  ASSERT_EQ(accepted.status, 200) << accepted.body;
  // The same body under another query is not what Twilio signed.
  EXPECT_EQ(Send(webhookd_, source, in, "?" + query + "&x=1").status, 401);
  EXPECT_EQ(Send(webhookd_, source, in).status, 401);
}

TEST_F(SourcesE2eTest, SlackUrlVerificationIsAnsweredAndStoresNothing) {
  const std::string source = CreateSource(webhookd_, {{"provider", "slack"}, {"secret", kSecret}});
  Inbound in;
  const std::string t = Now();
  in.body = R"({"type":"url_verification","challenge":"c-42","token":"x"})";
  in.headers = {{"X-Slack-Request-Timestamp", t},
                {"X-Slack-Signature", "v0=" + HexSha256(kSecret, "v0:" + t + ":" + in.body)}};
  auto res = Send(webhookd_, source, in);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(Body(res), (Json{{"challenge", "c-42"}}));
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM events"), "0");
}

TEST_F(SourcesE2eTest, TheSourcesCommandRunsTheRoutesFromTheCommandLine) {
  const std::map<std::string, std::string> env = {{"DATABASE_URL", db_.url()}};
  auto [created_code, created] = WebhookdProcess::RunCommand(
      {"sources", "create",
       R"({"provider": "github", "secret": "s3cret-of-the-provider", "tenant_id": "acme"})"},
      env);
  ASSERT_EQ(created_code, 0) << created;
  EXPECT_EQ(created.find("s3cret"), std::string::npos) << created;
  static_assert(std::string_view(kSecret) == "s3cret-of-the-provider");
  std::smatch id;
  ASSERT_TRUE(std::regex_search(created, id, std::regex("src_[0-9]+"))) << created;
  auto [list_code, listed] =
      WebhookdProcess::RunCommand({"sources", "list", "--tenant", "acme"}, env);
  EXPECT_EQ(list_code, 0) << listed;
  EXPECT_NE(listed.find(id.str()), std::string::npos) << listed;
  // The server takes a change made by another process within a second or so.
  Inbound in = Github("cli-1");
  httplib::Response accepted;
  for (int i = 0; i < 50 && accepted.status != 200; ++i) {
    accepted = Send(webhookd_, id.str(), in);
    if (accepted.status != 200) std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(accepted.status, 200) << accepted.body;
  auto [rotate_code, rotated] = WebhookdProcess::RunCommand(
      {"sources", "rotate", id.str(), R"({"secret": "n3w", "grace_period": "0"})"}, env);
  EXPECT_EQ(rotate_code, 0) << rotated;
  EXPECT_EQ(WebhookdProcess::RunCommand({"sources", "rotate", id.str(), "{}"}, env).first, 1);
  EXPECT_EQ(WebhookdProcess::RunCommand({"sources", "delete", id.str()}, env).first, 0);
  EXPECT_EQ(WebhookdProcess::RunCommand({"sources", "get", id.str()}, env).first, 1);
  EXPECT_EQ(WebhookdProcess::RunCommand({"sources", "frobnicate"}, env).first, 2);
}

TEST(SourcesRateE2eTest, ASourceOverItsRateIsAnswered429WithRetryAfter) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all", {{"WEBHOOKD_SOURCE_RATE", "1"}});
  const std::string source = CreateSource(webhookd, {{"provider", "github"}, {"secret", kSecret}});
  // One a second: of ten sent back to back, some are refused (each is a new delivery).
  int limited = 0;
  std::string retry_after;
  for (int i = 0; i < 10; ++i) {
    auto res = Send(webhookd, source, Github("rate-" + std::to_string(i)));
    ASSERT_TRUE(res.status == 200 || res.status == 429) << res.status << " " << res.body;
    if (res.status == 429) {
      ++limited;
      retry_after = res.get_header_value("Retry-After");
    }
  }
  EXPECT_GT(limited, 0);
  EXPECT_EQ(retry_after, "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM events"), std::to_string(10 - limited));
  // An unverified request is refused 401 whatever the rate.
  Inbound forged = Github("rate-x");
  forged.headers.erase("X-Hub-Signature-256");
  EXPECT_EQ(Send(webhookd, source, forged).status, 401);
  EXPECT_NE(
      webhookd.Call("GET", "/metrics")
          .body.find(R"(webhookd_inbound_requests_total{provider="github",outcome="limited"} )" +
                     std::to_string(limited)),
      std::string::npos);
}

}  // namespace
}  // namespace webhookd::testing::sources_e2e_test
