// One tenant must not hurt another by filling the database: destinations per tenant are
// bounded (WEBHOOKD_MAX_DESTINATIONS_PER_TENANT), also against concurrent creations.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::quota_security_test {
namespace {

using Json = nlohmann::json;

TEST(QuotaSecurityTest, ATenantsDestinationsAreBoundedEvenWhenCreatedAtOnce) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_MAX_DESTINATIONS_PER_TENANT", "5"}});
  const auto tenant_key = [&](const std::string& tenant) {
    std::string key =
        WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", tenant});
    EXPECT_FALSE(key.empty());
    return key;
  };
  const std::string acme = tenant_key("acme");
  const Json dest = {{"url", "http://127.0.0.1:9/hook"}};

  // Twenty at once from one tenant: exactly five are made, the rest are 409s.
  std::atomic<int> created{0}, conflicts{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i) {
    threads.emplace_back([&] {
      auto r = webhookd.Call("POST", "/v1/destinations", dest, acme);
      if (r.status == 201) {
        ++created;
      } else if (r.status == 409 &&
                 r.get_header_value("Content-Type") == "application/problem+json") {
        ++conflicts;
      } else {
        ++other;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 5);
  EXPECT_EQ(conflicts.load(), 15);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations WHERE tenant_id = 'acme'"), "5");

  // Another tenant, and the no-tenant space, have their own five.
  const std::string beta = tenant_key("beta");
  EXPECT_EQ(webhookd.Call("POST", "/v1/destinations", dest, beta).status, 201);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(webhookd.Call("POST", "/v1/destinations", dest).status, 201);
  EXPECT_EQ(webhookd.Call("POST", "/v1/destinations", dest).status, 409);

  // A deleted destination no longer counts.
  auto list = webhookd.Call("GET", "/v1/destinations", nullptr, acme);
  const std::string id = Json::parse(list.body)["data"][0]["id"];
  EXPECT_EQ(webhookd.Call("DELETE", "/v1/destinations/" + id, nullptr, acme).status, 204);
  EXPECT_EQ(webhookd.Call("POST", "/v1/destinations", dest, acme).status, 201);
  EXPECT_EQ(webhookd.Call("POST", "/v1/destinations", dest, acme).status, 409);
}

}  // namespace
}  // namespace webhookd::testing::quota_security_test
