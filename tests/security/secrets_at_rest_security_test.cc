// Attacks on the credentials at rest: a reader of the database (a dump, a replica, a
// backup) used to find every signing secret and custom header value in the clear, and an
// API response echoed header values such as Authorization.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/process.h"
#include "tests/testing/receiver.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::secrets_at_rest_security_test {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

// base64 of 32 bytes each; the key id is the first 8 hex digits of SHA-256 of the bytes.
const std::string kKey =
    Base64(reinterpret_cast<const unsigned char*>(std::string(32, 'K').data()), 32);
const std::string kNextKey =
    Base64(reinterpret_cast<const unsigned char*>(std::string(32, 'N').data()), 32);
const std::string kToken = "Bearer tok_live_CREDENTIAL_MARKER";

std::string StoredCredentials(TestDatabase& db) {
  return db.Scalar(
      "SELECT coalesce(string_agg(v, ' '), '') FROM (SELECT secret FROM destinations UNION ALL "
      "SELECT secret FROM destination_secrets UNION ALL SELECT value FROM destinations, "
      "jsonb_each_text(headers)) AS c(v)");
}

TEST(SecretsAtRestSecurityTest, ADatabaseReaderFindsNoCredentialAndDeliveryStillWorks) {
  TestDatabase db;
  Receiver receiver;
  std::string secret;
  {
    WebhookdProcess webhookd(db.url(), "all", {{"WEBHOOKD_ENCRYPTION_KEY", kKey}});
    auto created = webhookd.Call(
        "POST", "/v1/destinations",
        {{"url", receiver.url()}, {"headers", {{"Authorization", kToken}, {"X-Team", "pay"}}}});
    ASSERT_EQ(created.status, 201) << created.body;
    const Json d = Json::parse(created.body);
    secret = d["secret"];
    // Write-only values: the name and "set", in the 201, a GET and a listing alike.
    EXPECT_EQ(d["headers"], Json({{"Authorization", "set"}, {"X-Team", "set"}}));
    const std::string id = d["id"];
    EXPECT_EQ(Json::parse(webhookd.Call("GET", "/v1/destinations/" + id).body)["headers"],
              Json({{"Authorization", "set"}, {"X-Team", "set"}}));
    const std::string listed = webhookd.Call("GET", "/v1/destinations").body;
    EXPECT_EQ(listed.find("tok_live"), std::string::npos) << listed;

    const std::string stored = StoredCredentials(db);
    EXPECT_EQ(stored.find("whsec_"), std::string::npos) << stored;
    EXPECT_EQ(stored.find("tok_live"), std::string::npos) << stored;

    ASSERT_EQ(
        webhookd.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}}).status,
        202);
    ASSERT_TRUE(receiver.WaitFor(1, 10s));
    const Received got = receiver.requests().at(0);
    EXPECT_EQ(got.header("Authorization"), kToken);
    EXPECT_EQ(got.header("X-Team"), "pay");
    EXPECT_EQ(got.header("webhook-signature"),
              ExpectedSignature(secret, got.header("webhook-id"), got.header("webhook-timestamp"),
                                got.body));
    EXPECT_EQ(ReadFile(webhookd.log_path()).find("tok_live"), std::string::npos);
  }

  // Started with another key: it refuses, naming the key id it lacks, never a key.
  const std::string log = TestLogDir() + "/secrets-at-rest-wrong-key.log";
  Process wrong({WebhookdBinary(), "worker"},
                {{"DATABASE_URL", db.url()},
                 {"WEBHOOKD_WORKER_ADDR", ""},
                 {"WEBHOOKD_ENCRYPTION_KEY", kNextKey}},
                log);
  EXPECT_EQ(wrong.Wait(10s), 1);
  const std::string said = ReadFile(log);
  EXPECT_NE(said.find("3 stored credentials are encrypted with key "), std::string::npos) << said;
  EXPECT_EQ(said.find(kNextKey), std::string::npos);
  EXPECT_EQ(said.find(kKey), std::string::npos);

  // The key change: both keys, reencrypt, then the new key alone delivers.
  const std::map<std::string, std::string> both = {{"DATABASE_URL", db.url()},
                                                   {"WEBHOOKD_ENCRYPTION_KEY", kNextKey},
                                                   {"WEBHOOKD_ENCRYPTION_KEY_PREVIOUS", kKey}};
  auto [code, out] = WebhookdProcess::RunCommand({"secrets", "reencrypt"}, both);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("re-encrypted 3 stored credentials under key "), std::string::npos) << out;
  EXPECT_NE(out.find("3 key "), std::string::npos) << out;
  EXPECT_NE(out.find("(WEBHOOKD_ENCRYPTION_KEY)"), std::string::npos) << out;
  EXPECT_EQ(out.find(kNextKey), std::string::npos);

  WebhookdProcess after(db.url(), "all", {{"WEBHOOKD_ENCRYPTION_KEY", kNextKey}});
  ASSERT_EQ(after.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}}).status,
            202);
  ASSERT_TRUE(receiver.WaitFor(2, 10s));
  const Received again = receiver.requests().at(1);
  EXPECT_EQ(again.header("Authorization"), kToken);
  EXPECT_EQ(again.header("webhook-signature"),
            ExpectedSignature(secret, again.header("webhook-id"), again.header("webhook-timestamp"),
                              again.body));
}

// A tenant stored a header value reading like sealed data while no key was set; at the
// next start webhookd took it for a credential under key deadbeef and refused to start,
// for everyone. Now it is stored as the client's own bytes, key or no key.
TEST(SecretsAtRestSecurityTest, AValueThatLooksSealedCannotStopAStart) {
  TestDatabase db;
  Receiver receiver;
  const std::map<std::string, std::string> forged = {
      {"X-Forged", "wse1:deadbeef:AAAA"},
      {"X-Forged-Well", "wse1:deadbeef:" + std::string(60, 'A')},
      {"X-Escaped", "wsp1:abc"}};
  const std::string tenant_key =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "acme"});
  ASSERT_FALSE(tenant_key.empty());
  const auto deliver_and_check = [&](const WebhookdProcess& webhookd, size_t n) {
    ASSERT_EQ(webhookd
                  .Call("POST", "/v1/events",
                        {{"type", "a.b"}, {"tenant_id", "acme"}, {"payload", Json::object()}})
                  .status,
              202);
    ASSERT_TRUE(receiver.WaitFor(n, 10s));
    const Received got = receiver.requests().at(n - 1);
    for (const auto& [name, value] : forged) EXPECT_EQ(got.header(name), value) << name;
  };
  {
    WebhookdProcess webhookd(db.url(), "all");  // no WEBHOOKD_ENCRYPTION_KEY
    auto created = webhookd.Call("POST", "/v1/destinations",
                                 {{"url", receiver.url()}, {"headers", forged}}, tenant_key);
    ASSERT_EQ(created.status, 201) << created.body;
    deliver_and_check(webhookd, 1);
  }
  {
    // The restart that failed: it starts, and delivers the client's bytes.
    WebhookdProcess again(db.url(), "all");
    deliver_and_check(again, 2);
  }
  {
    // A key set later: the values still open as given, and one stored now is sealed.
    WebhookdProcess keyed(db.url(), "all", {{"WEBHOOKD_ENCRYPTION_KEY", kKey}});
    deliver_and_check(keyed, 3);
  }
  auto [code, out] = WebhookdProcess::RunCommand(
      {"secrets", "reencrypt"}, {{"DATABASE_URL", db.url()}, {"WEBHOOKD_ENCRYPTION_KEY", kKey}});
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(StoredCredentials(db).find("deadbeef"), std::string::npos);
  WebhookdProcess resealed(db.url(), "all", {{"WEBHOOKD_ENCRYPTION_KEY", kKey}});
  deliver_and_check(resealed, 4);
}

TEST(SecretsAtRestSecurityTest, WithoutAKeyItWarnsAtStartUp) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  EXPECT_TRUE(WaitUntil(
      [&] {
        return ReadFile(webhookd.log_path()).find("WEBHOOKD_ENCRYPTION_KEY is unset") !=
               std::string::npos;
      },
      5s));
  auto [code, out] =
      WebhookdProcess::RunCommand({"secrets", "reencrypt"}, {{"DATABASE_URL", db.url()}});
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("WEBHOOKD_ENCRYPTION_KEY is unset"), std::string::npos) << out;
}

}  // namespace
}  // namespace webhookd::testing::secrets_at_rest_security_test
