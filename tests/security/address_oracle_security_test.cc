// The private-address rule as a DNS oracle: a tenant key holder creates destinations and
// reads the 422s. Each refusal named the private address the host resolved to, so a
// tenant could map a network's internal names. Now every refusal reads the same, and the
// address is in the operator's log alone.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing {
namespace {

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

}  // namespace
}  // namespace webhookd::testing
