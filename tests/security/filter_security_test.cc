// A tenant key must not make webhookd compute without bound, or hold the API's database
// connections, through payload filters; and no statement run for a request runs without
// bound. Attacks that succeeded against an earlier webhookd:
//  * `$.a[*] < $.b[*]` over two lists of 15,000 numbers that never match: 13 s of a
//    backend per POST /v1/filters/test, uninterruptible; as a destination's filter, 3.6 s
//    of an ingest that every event of the same group commit waited for;
//  * eight such tests at once held eight of the API's sixteen connections.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::filter_security_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string TenantKey(TestDatabase& db, const std::string& tenant) {
  std::string key = WebhookdProcess::CreateKey(db.url(), {"--role", "tenant", "--tenant", tenant});
  EXPECT_FALSE(key.empty());
  return key;
}

// {"a": [0, 2, 4, …], "b": [-1, -3, …]}: no element of a is below any of b.
Json TwoLists(int n) {
  Json a = Json::array(), b = Json::array();
  for (int i = 0; i < n; ++i) {
    a.push_back(2 * i);
    b.push_back(-1 - 2 * i);
  }
  return {{"a", a}, {"b", b}};
}

void ExpectRefusedNamingFilter(const httplib::Response& res) {
  ASSERT_EQ(res.status, 422) << res.body.substr(0, 300);
  EXPECT_EQ(res.get_header_value("Content-Type"), "application/problem+json");
  EXPECT_EQ(Json::parse(res.body)["errors"][0]["field"], "filter") << res.body;
}

TEST(FilterSecurityTest, FiltersWhoseCostGrowsFasterThanThePayloadAreRefused) {
  TestDatabase db;
  // Were a refused shape evaluated after all, the bound would make it a 503, not a 422.
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_STATEMENT_TIMEOUT", "3s"}});
  const std::string key = TenantKey(db, "acme");
  const Json payload = TwoLists(15000);
  const std::vector<std::string> superlinear = {
      "$.a[*] < $.b[*]",         // each item of one list with each of the other
      "$.a < $.b",               // the same: lax mode unwraps both arrays
      "strict $.a[*] < $.b[*]",  // strict, still two sequences
      "$.a[*] ? (@ == @).x == 1 && $.a[*] == $.b[*]",
      "$[0,0][0,0][0,0][0,0][0,0] == 1",  // each [0,0] doubles the items: 2^n
      "$.a[0] * $.b[0] > 1",              // numbers of the payload multiplied digit by digit
      "1 / $.a[0] > 1",                   // … or divided
      "$.a[$.b[*]] == 1",                 // $.b read once per element of $.a
  };
  for (const std::string& filter : superlinear) {
    SCOPED_TRACE(filter);
    ExpectRefusedNamingFilter(
        webhookd.Call("POST", "/v1/filters/test", {{"filter", filter}, {"payload", payload}}, key));
    ExpectRefusedNamingFilter(webhookd.Call(
        "POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/x"}, {"filter", filter}}, key));
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM destinations"), "0");
  // The same lists against a literal stay linear, and are answered.
  auto ok = webhookd.Call("POST", "/v1/filters/test",
                          {{"filter", "$.a[*] < -1"}, {"payload", payload}}, key);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Json::parse(ok.body)["matches"], false);
}

// The test's own connection holds the destination's row, so a PATCH of it waits for the
// lock: a statement of a request made slow at will.
class RowLock {
 public:
  RowLock(const std::string& url, const std::string& id)
      : conn_(TestDatabase::Connect(url)), tx_(*conn_) {
    tx_.exec("SELECT 1 FROM webhookd.destinations WHERE id = " + id + " FOR UPDATE");
  }
  void Release() { tx_.commit(); }

 private:
  std::unique_ptr<pqxx::connection> conn_;
  pqxx::work tx_;
};

TEST(FilterSecurityTest, AStatementOverTheTimeoutIs503AndWritesNothing) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_STATEMENT_TIMEOUT", "500ms"}});
  const std::string key = TenantKey(db, "acme");
  auto made = webhookd.Call("POST", "/v1/destinations",
                            {{"url", "http://127.0.0.1:9/x"}, {"description", "before"}}, key);
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string id = Json::parse(made.body)["id"];
  const std::string path = "/v1/destinations/" + id;
  const std::string row_id = db.Scalar("SELECT id FROM destinations");

  RowLock lock(db.url(), row_id);
  auto slow = webhookd.Call("PATCH", path, {{"description", "after"}}, key);
  EXPECT_EQ(slow.status, 503) << slow.body;
  EXPECT_EQ(slow.get_header_value("Content-Type"), "application/problem+json");
  EXPECT_EQ(slow.get_header_value("Retry-After"), "1");
  lock.Release();

  // Nothing of the cancelled PATCH was written, and the same PATCH now goes through.
  EXPECT_EQ(Json::parse(webhookd.Call("GET", path, nullptr, key).body)["description"], "before");
  auto again = webhookd.Call("PATCH", path, {{"description", "after"}}, key);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Json::parse(again.body)["description"], "after");
}

// Three filter tests of one key at once: two are taken, the third is 429 at once, before
// any database work. The two are kept in progress deterministically: every connection of
// the API's pool is taken by a PATCH waiting on a row the test holds, so they wait for a
// connection to look their key up (up to the pool's 2 s acquire bound, then 503) while
// holding their key's two places.
TEST(FilterSecurityTest, AKeyRunsAtMostTwoFilterTestsAtOnce) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "server", {{"WEBHOOKD_STATEMENT_TIMEOUT", "60s"}});
  const std::string key = TenantKey(db, "acme");
  const std::string other_key = TenantKey(db, "beta");
  auto made = webhookd.Call("POST", "/v1/destinations", {{"url", "http://127.0.0.1:9/x"}}, key);
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string path = "/v1/destinations/" + Json::parse(made.body)["id"].get<std::string>();

  RowLock lock(db.url(), db.Scalar("SELECT id FROM destinations"));
  constexpr int kPoolSize = 16;  // cmd/webhookd/serve.cc: the server's API connections
  std::vector<std::thread> patches;
  std::atomic<int> patched{0};
  for (int i = 0; i < kPoolSize; ++i) {
    patches.emplace_back([&, i] {
      auto r = webhookd.Call("PATCH", path, {{"description", "d" + std::to_string(i)}}, key);
      if (r.status == 200) ++patched;
    });
  }
  // Every one of them waiting on the lock (bounded: 60 s).
  std::string waiting;
  for (int i = 0; i < 600; ++i) {
    waiting = db.Scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'webhookd' "
        "AND wait_event_type = 'Lock' AND datname = current_database()");
    if (waiting == std::to_string(kPoolSize)) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(waiting, std::to_string(kPoolSize));

  const Json test = {{"filter", "$.a[*] > 1"}, {"payload", {{"a", {1, 2, 3}}}}};
  std::vector<httplib::Response> answers(3);
  std::vector<std::thread> tests;
  for (int i = 0; i < 3; ++i) {
    tests.emplace_back(
        [&, i] { answers[i] = webhookd.Call("POST", "/v1/filters/test", test, key); });
  }
  for (auto& t : tests) t.join();
  int limited = 0, unavailable = 0;
  for (const auto& r : answers) {
    if (r.status == 429) {
      ++limited;
      EXPECT_EQ(r.get_header_value("Retry-After"), "1");
      EXPECT_EQ(r.get_header_value("Content-Type"), "application/problem+json");
    } else if (r.status == 503) {
      ++unavailable;
    }
  }
  EXPECT_EQ(limited, 1);
  EXPECT_EQ(unavailable, 2);  // no connection came free within the pool's bound

  lock.Release();
  for (auto& t : patches) t.join();
  EXPECT_EQ(patched.load(), kPoolSize);
  // With the connections free, both keys are answered again.
  EXPECT_EQ(webhookd.Call("POST", "/v1/filters/test", test, key).status, 200);
  EXPECT_EQ(webhookd.Call("POST", "/v1/filters/test", test, other_key).status, 200);
}

}  // namespace
}  // namespace webhookd::testing::filter_security_test
