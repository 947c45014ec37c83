// OAuth 2.0 client credentials end to end (docs/egress.md): a token server fixture issues
// tokens and a receiver takes only the current one. One token request serves 200
// deliveries; a 401 fetches a new token and sends the same attempt again at once (one
// attempt recorded); a failing token endpoint makes retryable attempts that send nothing;
// the client secret is write-only.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "base/encoding.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::oauth_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(OauthE2eTest, TokensAreFetchedOnceRefetchedAfterA401AndAFailingEndpointSendsNothing) {
  std::mutex mu;
  std::string current;  // the token the receiver takes
  std::atomic<int> issued{0};
  std::atomic<int> token_status{200};
  std::atomic<bool> bad_basic{false};
  Receiver token_server([&](const Received& r, int) {
    if (r.header("Authorization") != "Basic " + Base64Encode("hooks:s3cret") ||
        r.body != "grant_type=client_credentials&scope=webhooks") {
      bad_basic = true;
    }
    Answer a;
    a.status = token_status.load();
    if (a.status != 200) return a;
    std::lock_guard lock(mu);
    current = "tok-" + std::to_string(++issued);
    a.body = R"({"access_token":")" + current + R"(","token_type":"Bearer","expires_in":3600})";
    return a;
  });
  std::atomic<int> refused{0};
  std::atomic<bool> revoke{false};
  Receiver receiver([&](const Received& r, int) {
    std::lock_guard lock(mu);
    Answer a;
    if (revoke.exchange(false)) current = "revoked";  // the next one presented is refused
    a.status = r.header("Authorization") == "Bearer " + current ? 200 : 401;
    if (a.status == 401) ++refused;
    return a;
  });
  TestDatabase db;
  WebhookdProcess webhookd(
      db.url(), "all",
      // Attempts for 3 s: a delivery outlives the token endpoint's failure and the checks
      // made while it fails, however slow the machine.
      {{"WEBHOOKD_RETRY_SCHEDULE", RetrySchedule("200ms", 15)},
       {"WEBHOOKD_RETRY_JITTER", "0"},
       {"WEBHOOKD_ENCRYPTION_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}});
  const Json auth = {{"type", "oauth2_client_credentials"},
                     {"token_url", token_server.url()},
                     {"client_id", "hooks"},
                     {"client_secret", "s3cret"},
                     {"scope", "webhooks"}};
  // A custom Authorization header gives way to the token (the receiver reads the first).
  auto created = webhookd.Call(
      "POST", "/v1/destinations",
      {{"url", receiver.url()}, {"auth", auth}, {"headers", {{"Authorization", "Basic eDp5"}}}});
  ASSERT_EQ(created.status, 201) << created.body;
  const Json dst = Json::parse(created.body);
  EXPECT_EQ(dst["auth"]["client_secret"], "set");
  EXPECT_EQ(created.body.find("s3cret"), std::string::npos);
  EXPECT_EQ(db.Scalar("SELECT left(auth_client_secret, 5) FROM webhookd.destinations"), "wse1:");

  // 200 deliveries, one token request.
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(
        webhookd.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"n", i}}}}).status,
        202);
  }
  ASSERT_TRUE(receiver.WaitFor(200, 30s));
  EXPECT_EQ(issued.load(), 1);
  EXPECT_EQ(refused.load(), 0);
  EXPECT_FALSE(bad_basic.load());

  // The receiver stops taking the token: one 401, a new token, the same attempt again.
  revoke = true;
  const Json event = Json::parse(
      webhookd.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"n", 200}}}}).body);
  const std::string delivery = "/v1/deliveries/" + event["deliveries"][0]["id"].get<std::string>();
  ASSERT_TRUE(WaitUntil(
      [&] { return Json::parse(webhookd.Call("GET", delivery).body)["status"] == "succeeded"; },
      20s));
  EXPECT_EQ(refused.load(), 1);
  EXPECT_EQ(issued.load(), 2);
  EXPECT_EQ(Json::parse(webhookd.Call("GET", delivery + "/attempts").body)["data"].size(), 1u);

  // The token endpoint fails (and the cached token is refused): retryable attempts with the
  // endpoint's status, and nothing more reaches the receiver.
  token_status = 503;
  revoke = true;
  const size_t before = receiver.count();
  const Json failing = Json::parse(
      webhookd.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"n", 201}}}}).body);
  const std::string attempts =
      "/v1/deliveries/" + failing["deliveries"][0]["id"].get<std::string>() + "/attempts";
  ASSERT_TRUE(WaitUntil(
      [&] { return Json::parse(webhookd.Call("GET", attempts).body)["data"].size() >= 2; }, 20s));
  const Json recorded = Json::parse(webhookd.Call("GET", attempts).body);
  EXPECT_EQ(recorded["data"][1]["error"], "token request failed: 503") << recorded;
  EXPECT_EQ(recorded["data"][1]["outcome"], "retryable");
  EXPECT_EQ(receiver.count(), before + 1);  // only the refused first try of the first attempt

  // Back: delivered.
  token_status = 200;
  ASSERT_TRUE(receiver.WaitFor(before + 2, 20s));
  // "set" keeps the stored secret for the same token URL, never for another one.
  const std::string path = "/v1/destinations/" + dst["id"].get<std::string>();
  Json kept = auth;
  kept["client_secret"] = "set";
  EXPECT_EQ(webhookd.Call("PATCH", path, {{"auth", kept}}).status, 200);
  kept["token_url"] = "http://127.0.0.1:1/elsewhere";
  auto moved = webhookd.Call("PATCH", path, {{"auth", kept}});
  EXPECT_EQ(moved.status, 422) << moved.body;
  EXPECT_EQ(Json::parse(moved.body)["errors"][0]["field"], "auth.client_secret");
  for (const std::string& read :
       {"/v1/destinations/" + dst["id"].get<std::string>(), std::string("/v1/destinations")}) {
    EXPECT_EQ(webhookd.Call("GET", read).body.find("s3cret"), std::string::npos);
  }
}

TEST(OauthE2eTest, BadAuthSettingsAre422sNamingTheField) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  const Json good = {{"type", "oauth2_client_credentials"},
                     {"token_url", "https://auth.example.com/token"},
                     {"client_id", "hooks"},
                     {"client_secret", "s3cret"}};
  const auto field_of = [&](Json auth) {
    auto res = webhookd.Call("POST", "/v1/destinations",
                             {{"url", "https://hooks.example.com/h"}, {"auth", auth}});
    EXPECT_EQ(res.status, 422) << res.body;
    EXPECT_EQ(res.body.find("s3cret"), std::string::npos);
    return Json::parse(res.body)["errors"][0]["field"].get<std::string>();
  };
  Json bad = good;
  bad["type"] = "password";
  EXPECT_EQ(field_of(bad), "auth.type");
  bad = good;
  bad.erase("client_id");
  EXPECT_EQ(field_of(bad), "auth.client_id");
  bad = good;
  bad["token_url"] = "ftp://auth.example.com/token";
  EXPECT_EQ(field_of(bad), "auth.token_url");
  bad = good;
  bad["client_secret"] = "set";
  EXPECT_EQ(field_of(bad), "auth.client_secret");
  EXPECT_EQ(field_of("basic"), "auth");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.destinations"), "0");
}

}  // namespace
}  // namespace webhookd::testing::oauth_e2e_test
