// Attacks through the producer side. Idempotency keys were one namespace for every
// producer and publish(): a producer could collide with another tenant's key and read its
// receipt. A role named webhookd_publisher made by someone else before webhookd migrated
// (with a login and a password of theirs) was granted publish().
#include <gtest/gtest.h>

#include <pqxx/pqxx>
#include <string>

#include "tests/testing/pg_cluster.h"
#include "tests/testing/process.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::producer_security_test {
namespace {

using Json = nlohmann::json;

TEST(ProducerSecurityTest, AnIdempotencyKeyOfOneTenantNeitherCollidesWithNorRevealsAnothers) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server");
  auto client = webhookd.Client();
  const auto post = [&](const std::string& tenant, int id) {
    const Json body = {{"type", "order.paid"}, {"payload", {{"id", id}}}, {"tenant_id", tenant}};
    return client->Post("/v1/events", {{"Idempotency-Key", "order-1-paid"}}, body.dump(),
                        "application/json");
  };
  auto acme = post("acme", 1);
  auto beta = post("beta", 2);
  ASSERT_TRUE(acme && beta);
  ASSERT_EQ(acme->status, 202) << acme->body;
  // Before: 422 "already used with a different request body" (a collision), or with the
  // same body, acme's receipt.
  ASSERT_EQ(beta->status, 202) << beta->body;
  EXPECT_NE(Json::parse(acme->body)["id"], Json::parse(beta->body)["id"]);
  // Each tenant's retry still gets its own first answer.
  auto again = post("beta", 2);
  EXPECT_EQ(Json::parse(again->body)["id"], Json::parse(beta->body)["id"]);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM events"), "2");
}

TEST(ProducerSecurityTest, AForeignWebhookdPublisherRoleIsNeverGrantedPublish) {
  PgCluster cluster;
  {
    pqxx::connection admin(cluster.Url());
    pqxx::nontransaction(admin).exec(
        "CREATE ROLE webhookd_publisher LOGIN PASSWORD 'attacker-chose-this'");
    pqxx::nontransaction(admin).exec("CREATE DATABASE app");
  }
  const std::string log = TestLogDir() + "/producer-security-migrate.log";
  Process migrate({WebhookdBinary(), "migrate"}, {{"DATABASE_URL", cluster.Url("app")}}, log);
  EXPECT_NE(migrate.Wait(std::chrono::seconds(60)), 0);
  EXPECT_NE(ReadFile(log).find("role webhookd_publisher exists but was not created by webhookd"),
            std::string::npos)
      << ReadFile(log);
  pqxx::connection app(cluster.Url("app"));
  const auto granted = pqxx::nontransaction(app).exec1(
      "SELECT count(*) FROM information_schema.routine_privileges"
      " WHERE grantee = 'webhookd_publisher'");
  EXPECT_EQ(granted[0].as<int>(), 0);
}

}  // namespace
}  // namespace webhookd::testing::producer_security_test
