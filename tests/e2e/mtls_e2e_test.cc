// A destination's `tls` end to end (docs/egress.md): kept only when its PEM parses and
// the key matches the certificate (422 naming the field otherwise), the key write-only
// ("set" in every answer, sealed at rest, kept by a PATCH that sends "set"), and the
// worker presenting the certificate to a receiver that requires it.
#include <gtest/gtest.h>

#include "tests/testing/test_database.h"
#include "tests/testing/test_pki.h"
#include "tests/testing/tls_receiver.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::mtls_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST(MtlsE2eTest, TheCertificateIsCheckedKeptWriteOnlyAndPresented) {
  TestPki pki;
  TlsReceiver receiver(pki.Path("server.pem"), pki.Path("server.key"), pki.Path("ca.pem"));
  TestDatabase db;
  WebhookdProcess webhookd(
      db.url(), "all",
      {{"WEBHOOKD_ENCRYPTION_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="}});
  const Json tls = {{"client_certificate", pki.Pem("client.pem")},
                    {"client_key", pki.Pem("client.key")},
                    {"ca_certificate", pki.Pem("ca.pem")}};

  // Refused, naming the field, and nothing kept.
  const auto refused = [&](Json bad, const std::string& field) {
    auto res = webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"tls", bad}});
    EXPECT_EQ(res.status, 422) << res.body;
    EXPECT_EQ(Json::parse(res.body)["errors"][0]["field"], field) << res.body;
    EXPECT_EQ(res.body.find("PRIVATE KEY"), std::string::npos);
  };
  Json bad = tls;
  bad["client_key"] = pki.Pem("other_client.key");
  refused(bad, "tls.client_key");  // not the certificate's key
  bad = tls;
  bad["client_certificate"] =
      "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  refused(bad, "tls.client_certificate");
  bad = tls;
  bad.erase("client_certificate");
  refused(bad, "tls.client_certificate");  // a key alone
  bad = tls;
  bad["client_key"] = "set";
  refused(bad, "tls.client_key");  // nothing stored to keep yet
  refused({{"ca_certificate", "nope"}}, "tls.ca_certificate");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.destinations"), "0");

  auto created = webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}, {"tls", tls}});
  ASSERT_EQ(created.status, 201) << created.body;
  const Json dst = Json::parse(created.body);
  EXPECT_EQ(dst["tls"]["client_key"], "set");
  EXPECT_EQ(dst["tls"]["client_certificate"], pki.Pem("client.pem"));
  EXPECT_TRUE(dst["tls"]["expires_at"].is_string()) << dst["tls"];
  const std::string path = "/v1/destinations/" + dst["id"].get<std::string>();
  for (const std::string& read : {path, std::string("/v1/destinations")}) {
    auto res = webhookd.Call("GET", read);
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(res.body.find("PRIVATE KEY"), std::string::npos) << read;
  }
  // At rest: sealed like the signing secret.
  EXPECT_EQ(db.Scalar("SELECT left(tls_client_key, 5) FROM webhookd.destinations"), "wse1:");

  const auto deliver = [&](int n) {
    auto res = webhookd.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", {{"n", n}}}});
    ASSERT_EQ(res.status, 202) << res.body;
    ASSERT_TRUE(WaitUntil([&] { return receiver.answered() == n; }, 20s)) << receiver.answered();
  };
  deliver(1);
  // The certificate's end, for an alert before it comes.
  const std::string gauge = "webhookd_destination_certificate_expiry_seconds{destination_id=\"" +
                            dst["id"].get<std::string>() + "\"} ";
  ASSERT_TRUE(WaitUntil(
      [&] { return webhookd.Client()->Get("/metrics")->body.find(gauge) != std::string::npos; },
      10s));

  // The GET body sent back: "set" keeps the stored key, which still matches.
  const Json read_back = Json::parse(webhookd.Call("GET", path).body);
  auto patched = webhookd.Call("PATCH", path, {{"tls", read_back["tls"]}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  deliver(2);
  // "set" with another certificate: the stored key does not match it.
  Json other = read_back["tls"];
  other["client_certificate"] = pki.Pem("other_client.pem");
  auto mismatched = webhookd.Call("PATCH", path, {{"tls", other}});
  EXPECT_EQ(mismatched.status, 422) << mismatched.body;
  // Without TLS settings the receiver refuses the handshake: retried, never answered.
  ASSERT_EQ(webhookd.Call("PATCH", path, {{"tls", nullptr}}).status, 200);
  EXPECT_EQ(Json::parse(webhookd.Call("GET", path).body)["tls"], nullptr);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM webhookd.destinations WHERE tls_client_key IS NULL"),
            "1");
}

}  // namespace
}  // namespace webhookd::testing::mtls_e2e_test
