// The private-address rule as a DNS oracle: a tenant key holder creates destinations and
// reads the 422s. Each refusal named the private address the host resolved to, so a
// tenant could map a network's internal names. Now every refusal reads the same, and the
// address is in the operator's log alone. A name that did not resolve still read "host
// does not resolve", at creation and in an attempt's error: beside "not allowed" for a
// name that resolves inside the network, that told the tenant which internal names exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/testing/dns_server.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::address_oracle_security_test {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

TEST(AddressOracleSecurityTest, EveryRefusedAddressGetsTheSameAnswer) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "false"}});
  const std::string tenant_key =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "acme"});
  ASSERT_FALSE(tenant_key.empty());

  std::set<std::string> bodies;
  for (const std::string host : {"127.0.0.1", "10.1.2.3", "192.168.0.10", "169.254.169.254",
                                 "[::1]", "[fd00::1]", "localhost", "db.localhost", "0x7f.1"}) {
    const std::string url = "https://" + host + "/hook";
    auto r = webhookd.Call("POST", "/v1/destinations", {{"url", url}}, tenant_key);
    ASSERT_EQ(r.status, 422) << url << ": " << r.body;
    const Json body = Json::parse(r.body);
    ASSERT_EQ(body["errors"].size(), 1u) << r.body;
    EXPECT_EQ(body["errors"][0]["field"], "url");
    EXPECT_EQ(body["errors"][0]["message"], "destination address not allowed") << r.body;
    EXPECT_EQ(r.body.find(host), std::string::npos) << r.body;
    bodies.insert(r.body);
  }
  EXPECT_EQ(bodies.size(), 1u) << "the answers tell the addresses apart";
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "0");
  // The operator still learns which address it was.
  EXPECT_NE(ReadFile(webhookd.log_path()).find("169.254.169.254"), std::string::npos);
}

TEST(AddressOracleSecurityTest, ANameThatDoesNotResolveGetsTheSameAnswerAsAPrivateOne) {
  // Names only this test's name server knows: one inside the network, the rest NXDOMAIN.
  DnsServer dns("127.0.48.53", {{"intranet.example.test", "10.0.0.7"}}, {});
  if (!dns.bound()) GTEST_SKIP() << "needs root: binding 127.0.48.53:53 failed";
  const std::string dir = TestLogDir() + "/address-oracle";
  std::filesystem::create_directories(dir);
  const std::string resolv_conf = dns.WriteResolvConf(dir);
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all",
                           {{"WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS", "false"},
                            {"WEBHOOKD_RETRY_SCHEDULE", "1h"},
                            {"WEBHOOKD_RETRY_JITTER", "0"}},
                           DnsServer::WithResolvConf(resolv_conf));
  const std::string tenant_key =
      WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", "acme"});
  ASSERT_FALSE(tenant_key.empty());

  std::set<std::string> bodies;
  for (const std::string host : {"intranet.example.test", "nowhere.example.test"}) {
    const std::string url = "https://" + host + "/hook";
    auto r = webhookd.Call("POST", "/v1/destinations", {{"url", url}}, tenant_key);
    ASSERT_EQ(r.status, 422) << url << ": " << r.body;
    const Json body = Json::parse(r.body);
    ASSERT_EQ(body["errors"].size(), 1u) << r.body;
    EXPECT_EQ(body["errors"][0]["message"], "destination address not allowed") << r.body;
    bodies.insert(r.body);
  }
  EXPECT_EQ(bodies.size(), 1u) << "the answers tell the names apart";
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "0");

  // Each name as an earlier, answering DNS would have let it in: the attempts' errors.
  for (const std::string host : {"intranet.example.test", "nowhere.example.test"}) {
    db.Exec("INSERT INTO destinations (url, secret, event_types, tenant_id) VALUES ('http://" +
            host + "/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{a.*}', 'acme')");
  }
  ASSERT_EQ(webhookd
                .Call("POST", "/v1/events",
                      {{"type", "a.b"}, {"tenant_id", "acme"}, {"payload", Json::object()}})
                .status,
            202);
  ASSERT_TRUE(WaitUntil([&] { return db.Scalar("SELECT count(*) FROM attempts") == "2"; }, 30s));
  const Json deliveries =
      Json::parse(webhookd.Call("GET", "/v1/deliveries", nullptr, tenant_key).body)["data"];
  ASSERT_EQ(deliveries.size(), 2u) << deliveries.dump();
  std::set<std::string> errors;
  for (const Json& d : deliveries) {
    const std::string id = d["id"];
    const Json attempts =
        Json::parse(webhookd.Call("GET", "/v1/deliveries/" + id + "/attempts", nullptr, tenant_key)
                        .body)["data"];
    ASSERT_EQ(attempts.size(), 1u) << attempts.dump();
    EXPECT_EQ(attempts[0]["error"], "destination address not allowed") << attempts.dump();
    errors.insert(attempts[0]["error"].dump());
  }
  EXPECT_EQ(errors.size(), 1u);
  const std::string log = ReadFile(webhookd.log_path());
  EXPECT_NE(log.find("nowhere.example.test"), std::string::npos) << "the operator learns it";
}

}  // namespace
}  // namespace webhookd::testing::address_oracle_security_test
