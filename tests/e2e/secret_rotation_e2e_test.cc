// Rotating a secret without dropping a delivery: during the grace period every attempt
// carries one signature per valid secret, newest first, so a receiver still verifying
// with the old secret and one already on the new both accept it; after the grace the old
// secret no longer verifies. Checked with an OpenSSL-only verifier.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/signature_check.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::secret_rotation_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kOld = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr const char* kNew = "whsec_dGhlIG5ldyBzZWNyZXQgb2YgdGhlIGRlc3RpbmF0aW9u";

// A receiver's check: some `v1,` signature of the header verifies with `secret`.
bool Verifies(const Received& r, const std::string& secret) {
  const std::string expected =
      ExpectedSignature(secret, r.header("webhook-id"), r.header("webhook-timestamp"), r.body);
  std::istringstream signatures(r.header("webhook-signature"));
  for (std::string s; signatures >> s;) {
    if (s == expected) return true;
  }
  return false;
}

TEST(SecretRotationE2eTest, BothSecretsVerifyDuringTheGraceAndOnlyTheNewAfter) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  Receiver receiver;
  auto created =
      webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"secret", kOld}});
  ASSERT_EQ(created.status, 201);
  const std::string id = Json::parse(created.body)["id"];

  auto rotated = webhookd.Call("POST", "/v1/destinations/" + id + "/secret/rotate",
                               {{"secret", kNew}, {"grace_period", "4s"}});
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  EXPECT_EQ(Json::parse(rotated.body)["secret"], kNew);
  EXPECT_TRUE(Json::parse(rotated.body)["previous_valid_until"].is_string());
  // The new secret is the one shown; the old one is never shown again.
  EXPECT_EQ(Json::parse(webhookd.Call("GET", "/v1/destinations/" + id + "/secret").body)["secret"],
            kNew);

  ASSERT_EQ(
      webhookd.Call("POST", "/v1/events", {{"type", "t"}, {"payload", Json::object()}}).status,
      202);
  ASSERT_TRUE(receiver.WaitFor(1, 10s));
  const Received during = receiver.requests()[0];
  EXPECT_TRUE(Verifies(during, kOld)) << during.header("webhook-signature");
  EXPECT_TRUE(Verifies(during, kNew)) << during.header("webhook-signature");
  // Newest first, one space between.
  const std::string header = during.header("webhook-signature");
  EXPECT_EQ(header.substr(0, header.find(' ')),
            ExpectedSignature(kNew, during.header("webhook-id"), during.header("webhook-timestamp"),
                              during.body));

  std::this_thread::sleep_for(4500ms);
  ASSERT_EQ(
      webhookd.Call("POST", "/v1/events", {{"type", "t"}, {"payload", Json::object()}}).status,
      202);
  ASSERT_TRUE(receiver.WaitFor(2, 10s));
  const Received after = receiver.requests()[1];
  EXPECT_FALSE(Verifies(after, kOld)) << after.header("webhook-signature");
  EXPECT_TRUE(Verifies(after, kNew));
  EXPECT_EQ(after.header("webhook-signature").find(' '), std::string::npos);
}

TEST(SecretRotationE2eTest, BadRotationsAreRefusedAndChangeNothing) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  auto created = webhookd.Call("POST", "/v1/destinations",
                               {{"url", "http://127.0.0.1:9/x"}, {"secret", kOld}});
  const std::string id = Json::parse(created.body)["id"];
  const std::string path = "/v1/destinations/" + id + "/secret/rotate";
  EXPECT_EQ(webhookd.Call("POST", path, {{"grace_period", "8d"}}).status, 422);
  EXPECT_EQ(webhookd.Call("POST", path, {{"grace_period", "soon"}}).status, 422);
  EXPECT_EQ(webhookd.Call("POST", path, {{"secret", "whsec_short"}}).status, 422);
  EXPECT_EQ(
      webhookd.Call("POST", "/v1/destinations/dst_999999/secret/rotate", Json::object()).status,
      404);
  EXPECT_EQ(Json::parse(webhookd.Call("GET", "/v1/destinations/" + id + "/secret").body)["secret"],
            kOld);
  // Four rotations with a grace leave five valid secrets; a fifth rotation would make six.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(webhookd.Call("POST", path, {{"grace_period", "1h"}}).status, 200) << i;
  }
  EXPECT_EQ(webhookd.Call("POST", path, {{"grace_period", "1h"}}).status, 409);
  // A rotation with an empty body generates the secret and uses the default grace.
  auto fresh = webhookd.Call("POST", path, {{"grace_period", "0"}});
  ASSERT_EQ(fresh.status, 200) << fresh.body;
  EXPECT_EQ(Json::parse(fresh.body)["secret"].get<std::string>().rfind("whsec_", 0), 0u);
}

}  // namespace
}  // namespace webhookd::testing::secret_rotation_e2e_test
