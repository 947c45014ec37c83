// Write-only values as a way out: a tenant PATCHed only the `url` of a destination whose
// Authorization header value someone else had set, and the next delivery carried that
// value to the tenant's own address. Likewise a new auth.token_url with client_secret
// "set" would have sent the stored secret there. Now moving a destination to another
// origin needs each such value sent again (or dropped), and nothing moves in the 422.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::carried_credentials_security_test {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

const std::string kToken = "Bearer tok_live_CARRIED_MARKER";

std::vector<std::string> Fields(const httplib::Response& r) {
  std::vector<std::string> out;
  const Json body = Json::parse(r.body);
  for (const auto& e : body["errors"]) out.push_back(e["field"]);
  return out;
}

TEST(CarriedCredentialsSecurityTest, AUrlMovedToAnotherOriginCarriesNoStoredValue) {
  TestDatabase db;
  Receiver owner;
  Receiver attacker;  // another port on loopback: another origin
  WebhookdProcess webhookd(db.url(), "all");
  const std::string tenant_key =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "acme"});
  ASSERT_FALSE(tenant_key.empty());

  auto created = webhookd.Call("POST", "/v1/destinations",
                               {{"url", owner.url()},
                                {"tenant_id", "acme"},
                                {"headers", {{"Authorization", kToken}, {"X-Team", "pay"}}}});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string path = "/v1/destinations/" + Json::parse(created.body)["id"].get<std::string>();

  // The attack: the url alone. Then with "set", as a GET shows the headers.
  auto moved = webhookd.Call("PATCH", path, {{"url", attacker.url()}}, tenant_key);
  ASSERT_EQ(moved.status, 422) << moved.body;
  EXPECT_EQ(Fields(moved), (std::vector<std::string>{"headers.Authorization", "headers.X-Team"}));
  EXPECT_EQ(moved.body.find("tok_live"), std::string::npos) << moved.body;
  moved = webhookd.Call("PATCH", path,
                        {{"url", attacker.url()},
                         {"description", "mine now"},
                         {"headers", {{"Authorization", "set"}, {"X-Team", "ops"}}}},
                        tenant_key);
  ASSERT_EQ(moved.status, 422) << moved.body;
  EXPECT_EQ(Fields(moved), std::vector<std::string>{"headers.Authorization"});
  // Nothing of a refused patch is written.
  const Json stored = Json::parse(webhookd.Call("GET", path, nullptr, tenant_key).body);
  EXPECT_EQ(stored["url"], owner.url());
  EXPECT_EQ(stored["description"], "");

  // Another path at the same origin is the same receiver: the values stay.
  auto same = webhookd.Call("PATCH", path, {{"url", owner.url("/other")}}, tenant_key);
  ASSERT_EQ(same.status, 200) << same.body;
  auto published = webhookd.Call(
      "POST", "/v1/events", {{"type", "a.b"}, {"tenant_id", "acme"}, {"payload", Json::object()}});
  ASSERT_EQ(published.status, 202) << published.body;
  ASSERT_TRUE(owner.WaitFor(1, 10s));
  EXPECT_EQ(owner.requests().at(0).path, "/other");
  EXPECT_EQ(owner.requests().at(0).header("Authorization"), kToken);

  // Sent again, the values are the tenant's own: the new address gets those alone.
  auto resent = webhookd.Call("PATCH", path,
                              {{"url", attacker.url()}, {"headers", {{"Authorization", "mine"}}}},
                              tenant_key);
  ASSERT_EQ(resent.status, 200) << resent.body;
  published = webhookd.Call("POST", "/v1/events",
                            {{"type", "a.b"}, {"tenant_id", "acme"}, {"payload", Json::object()}});
  ASSERT_EQ(published.status, 202) << published.body;
  ASSERT_TRUE(attacker.WaitFor(1, 10s));
  for (const Received& got : attacker.requests()) {
    EXPECT_EQ(got.header("Authorization"), "mine");
    EXPECT_EQ(got.header("X-Team"), "");
  }
  EXPECT_EQ(owner.count(), 1u);
}

TEST(CarriedCredentialsSecurityTest, TheClientSecretGoesNowhereNewUnlessSentAgain) {
  TestDatabase db;
  Receiver receiver;
  Receiver tokens([](const Received&, int) {
    return Answer{200,
                  R"({"access_token": "at_1", "token_type": "Bearer", "expires_in": 3600})",
                  {{"Content-Type", "application/json"}}};
  });
  Receiver attacker;
  WebhookdProcess webhookd(db.url(), "all");
  const std::string tenant_key =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "acme"});
  ASSERT_FALSE(tenant_key.empty());
  const Json auth = {{"type", "oauth2_client_credentials"},
                     {"token_url", tokens.url("/token")},
                     {"client_id", "webhookd-acme"},
                     {"client_secret", "cs_SECRET_MARKER"}};
  auto created = webhookd.Call("POST", "/v1/destinations",
                               {{"url", receiver.url()}, {"tenant_id", "acme"}, {"auth", auth}});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string path = "/v1/destinations/" + Json::parse(created.body)["id"].get<std::string>();

  auto moved = webhookd.Call("PATCH", path, {{"url", attacker.url()}}, tenant_key);
  ASSERT_EQ(moved.status, 422) << moved.body;
  EXPECT_EQ(Fields(moved), std::vector<std::string>{"auth.client_secret"});

  Json elsewhere = auth;
  elsewhere["token_url"] = attacker.url("/token");
  elsewhere["client_secret"] = "set";
  moved = webhookd.Call("PATCH", path, {{"auth", elsewhere}}, tenant_key);
  ASSERT_EQ(moved.status, 422) << moved.body;
  EXPECT_EQ(Fields(moved), std::vector<std::string>{"auth.client_secret"});

  ASSERT_EQ(webhookd
                .Call("POST", "/v1/events",
                      {{"type", "a.b"}, {"tenant_id", "acme"}, {"payload", Json::object()}})
                .status,
            202);
  ASSERT_TRUE(receiver.WaitFor(1, 10s));
  EXPECT_EQ(receiver.requests().at(0).header("Authorization"), "Bearer at_1");
  EXPECT_EQ(attacker.count(), 0u);
}

}  // namespace
}  // namespace webhookd::testing::carried_credentials_security_test
