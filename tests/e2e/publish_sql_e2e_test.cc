// webhookd.publish from the application's own transaction (docs/api.md, "Publishing from
// SQL"): what commits is delivered with its payload's exact bytes; what rolls back never
// reaches a receiver.
#include <gtest/gtest.h>

#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::publish_sql_e2e_test {
namespace {

using namespace std::chrono_literals;

TEST(PublishSqlE2eTest, ACommittedPublishIsDeliveredByteForByteAndARolledBackOneNever) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  Receiver acme;
  Receiver other;
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", acme.url()}, {"tenant_id", "acme"}})
                .status,
            201);
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", other.url()}}).status, 201);

  const std::vector<std::string> payloads = {
      "{ \"id\" : 42,\n \"total\": 99.900, \"big\": 12345678901234567890123 }",
      R"({"z":1,"a":2,"dup":1,"dup":2,"nul":"\u0000","e":1e400})",
      "{\"utf8\":\"d\xc3\xa9j\xc3\xa0 \xe2\x82\xac\"}",
  };
  pqxx::connection app(db.url());  // the application's own connection
  for (const std::string& payload : payloads) {
    pqxx::work tx(app);
    tx.exec_params("SELECT webhookd.publish('order.paid', $1, tenant_id => 'acme')", payload);
    tx.commit();
  }
  {
    pqxx::work tx(app);
    tx.exec(
        "SELECT webhookd.publish('order.refunded', '{\"rolled\": \"back\"}', "
        "tenant_id => 'acme')");
    tx.abort();
  }
  ASSERT_TRUE(acme.WaitFor(payloads.size(), 30s));
  std::this_thread::sleep_for(1s);  // room for anything that should not come
  const auto got = acme.requests();
  ASSERT_EQ(got.size(), payloads.size());
  std::vector<std::string> data;
  for (const Received& r : got) {
    // {"type":"order.paid","timestamp":"…","data":<payload>}
    const std::string marker = R"(,"data":)";
    const size_t at = r.body.find(marker);
    ASSERT_NE(at, std::string::npos) << r.body;
    data.push_back(r.body.substr(at + marker.size(), r.body.size() - at - marker.size() - 1));
    EXPECT_FALSE(r.header("webhook-signature").empty());
  }
  std::sort(data.begin(), data.end());
  std::vector<std::string> want = payloads;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(data, want);
  EXPECT_TRUE(other.requests().empty()) << "an acme event reached a destination without tenant";
}

}  // namespace
}  // namespace webhookd::testing::publish_sql_e2e_test
