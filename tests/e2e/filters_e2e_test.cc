// Payload filters end to end (docs/filters.md): one table of (filter, payload, delivered?)
// run through REST ingest, webhookd.publish() and POST /v1/filters/test, which must agree;
// the cookbook of docs/filters.md, run as written; three filtered destinations of one
// tenant each getting exactly their events; operational events filtered too; and the
// filters that are refused, with nothing stored.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::filters_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

struct Case {
  std::string filter;
  std::string payload;  // raw JSON text, posted byte for byte
  bool delivered;
};

// Big numbers, decimal strings, missing members, arrays, like_regex, exists, starts with,
// type mismatches and run-time errors; each row's answer checked once against PostgreSQL.
const std::vector<Case> kCases = {
    {R"($.amount >= 100)", R"({"amount":100})", true},
    {R"($.amount >= 100)", R"({"amount":99.99})", false},
    {R"($.amount >= 100)", R"({})", false},                // missing
    {R"($.amount >= 100)", R"({"amount":"150"})", false},  // a string is not a number
    {R"($.amount > 18446744073709551616)", R"({"amount":18446744073709551617})", true},
    {R"($.amount > 18446744073709551616)", R"({"amount":18446744073709551616})", false},
    {R"($.id == 123456789012345678901234567890)", R"({"id":123456789012345678901234567890})", true},
    {R"($.id == 123456789012345678901234567890)", R"({"id":123456789012345678901234567891})",
     false},
    {R"($.price.double() >= 10.5)", R"({"price":"10.50"})", true},  // a decimal string
    {R"($.price.double() >= 10.5)", R"({"price":"abc"})", false},   // an error: unknown
    {R"($.price == 0.1)", R"({"price":0.1})", true},
    {R"($.items[*].sku starts with "BK-")", R"({"items":[{"sku":"X"},{"sku":"BK-1"}]})", true},
    {R"($.items[*].sku starts with "BK-")", R"({"items":[{"sku":"X"}]})", false},
    {R"($.items[*].sku starts with "BK-")", R"({"items":[]})", false},
    {R"($.items[*].sku starts with "BK-")", R"({"items":"BK-1"})", false},
    {R"(exists($.refund) || $.status == "paid")", R"({"refund":{}})", true},
    {R"(exists($.refund) || $.status == "paid")", R"({"status":"paid"})", true},
    {R"(exists($.refund) || $.status == "paid")", R"({"status":"open"})", false},
    {R"(exists($.refund))", R"({"refund":null})", true},
    {R"($.email like_regex "@example\\.com$" flag "i")", R"({"email":"A@EXAMPLE.COM"})", true},
    {R"($.email like_regex "@example\\.com$" flag "i")", R"({"email":"a@example.org"})", false},
    {R"($.tags[*] == "vip")", R"({"tags":["a","vip"]})", true},
    {R"($.tags[*] == "vip")", R"({"tags":[1,"x"]})", false},
    {R"($.tags[*] == "vip")", R"({"tags":[1,"vip"]})", true},
    {R"($.a.b.c == 1)", R"({"a":{"b":{"c":1}}})", true},
    {R"($.a.b.c == 1)", R"({"a":1})", false},
    {R"($.n / 0 > 1)", R"({"n":5})", false},    // division by zero at run time
    {R"($.s + 1 > 0)", R"({"s":"x"})", false},  // arithmetic on a string
    {R"(!($.status == "paid"))", R"({"status":"open"})", true},
    {R"(!($.status == "paid"))", R"({})", true},
    {R"(($.x == 1) is unknown)", R"({"x":"s"})", true},
    {R"($.items.size() >= 2)", R"({"items":[1,2,3]})", true},
    {R"($.created_at >= "2026-01-01")", R"({"created_at":"2026-03-01T00:00:00Z"})", true},
    {R"($.flag == true)", R"({"flag":true})", true},
    {R"($.flag == true)", R"({"flag":"true"})", false},
    {"$.name == \"Zo\xc3\xab\"", R"({"name":"Zo\u00eb"})", true},
    {R"($.v == null)", R"({"v":null})", true},
    {R"($.a == "x")", R"({"a":"x","b":"\u0000"})", false},  // jsonb cannot hold \u0000
    {R"($.n == 1e400)", R"({"n":1e400})", true},
    {R"(strict $.amount > 10)", R"({"amount":[20]})", false},
    {R"($.amount > 10)", R"({"amount":[20]})", true},  // lax unwraps the array
};

class FiltersE2eTest : public ::testing::Test {
 protected:
  FiltersE2eTest() : webhookd_(db_.url(), "server") {}

  httplib::Response Raw(const std::string& path, const std::string& body) {
    auto client = webhookd_.Client();
    auto res = client->Post(path, body, "application/json");
    return res ? *res : httplib::Response{};
  }

  Json Call(const std::string& method, const std::string& path, const Json& body, int want) {
    auto res = webhookd_.Call(method, path, body);
    EXPECT_EQ(res.status, want) << method << " " << path << ": " << res.body;
    return Json::parse(res.body, nullptr, false);
  }

  // Whether each path delivers `payload` of `type` to the destination filtering it.
  bool ByRest(const std::string& type, const std::string& payload) {
    auto res = Raw("/v1/events", R"({"type":")" + type + R"(","payload":)" + payload + "}");
    EXPECT_EQ(res.status, 202) << res.body;
    return Json::parse(res.body)["deliveries"].size() == 1;
  }
  bool ByPublish(const std::string& type, const std::string& payload) {
    pqxx::connection app(db_.url());
    pqxx::work tx(app);
    const std::string id =
        tx.exec_params1("SELECT webhookd.publish($1, $2)", type, payload)[0].c_str();
    const int64_t n = tx.exec_params1(
                            "SELECT count(*) FROM webhookd.delivery_rows WHERE event_id = "
                            "substr($1, 5)::bigint",
                            id)[0]
                          .as<int64_t>();
    tx.commit();
    return n == 1;
  }
  bool ByTest(const std::string& filter, const std::string& payload) {
    auto res = Raw("/v1/filters/test",
                   R"({"filter":)" + Json(filter).dump() + R"(,"payload":)" + payload + "}");
    EXPECT_EQ(res.status, 200) << res.body;
    return Json::parse(res.body, nullptr, false).value("matches", false);
  }

  int ByTestStatus(const std::string& filter) {
    return Raw("/v1/filters/test", R"({"filter":)" + Json(filter).dump() + R"(,"payload":{}})")
        .status;
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
};

TEST_F(FiltersE2eTest, EveryPathDecidesEachCaseAlike) {
  ASSERT_GE(kCases.size(), 30u);
  for (size_t i = 0; i < kCases.size(); ++i) {
    const Case& c = kCases[i];
    SCOPED_TRACE(c.filter + " on " + c.payload);
    const std::string type = "filter.case." + std::to_string(i);
    const Json dst = Call("POST", "/v1/destinations",
                          {{"url", "http://127.0.0.1:9/" + std::to_string(i)},
                           {"event_types", {type}},
                           {"filter", c.filter}},
                          201);
    EXPECT_EQ(dst["filter"], c.filter);
    EXPECT_EQ(ByRest(type, c.payload), c.delivered) << "POST /v1/events";
    EXPECT_EQ(ByPublish(type, c.payload), c.delivered) << "webhookd.publish()";
    EXPECT_EQ(ByTest(c.filter, c.payload), c.delivered) << "POST /v1/filters/test";
  }
}

TEST_F(FiltersE2eTest, TheCookbookOfTheDocsWorksAsWritten) {
  std::ifstream file(std::string(WEBHOOKD_SOURCE_DIR) + "/docs/filters.md");
  ASSERT_TRUE(file);
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const std::regex block("```filter-example\\n([\\s\\S]*?)```");
  const std::regex line("(filter|delivers|skips):\\s*(.*)");
  int examples = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), block); it != std::sregex_iterator();
       ++it) {
    std::map<std::string, std::string> fields;
    std::istringstream lines((*it)[1].str());
    for (std::string l; std::getline(lines, l);) {
      std::smatch m;
      if (std::regex_match(l, m, line)) fields[m[1]] = m[2];
    }
    ASSERT_EQ(fields.size(), 3u) << (*it)[0];
    SCOPED_TRACE(fields["filter"]);
    const std::string type = "cookbook." + std::to_string(examples++);
    Call("POST", "/v1/destinations",
         {{"url", "http://127.0.0.1:9/c"}, {"event_types", {type}}, {"filter", fields["filter"]}},
         201);
    EXPECT_TRUE(ByRest(type, fields["delivers"]));
    EXPECT_FALSE(ByRest(type, fields["skips"]));
    EXPECT_TRUE(ByTest(fields["filter"], fields["delivers"]));
    EXPECT_FALSE(ByTest(fields["filter"], fields["skips"]));
  }
  EXPECT_EQ(examples, 10);
}

TEST_F(FiltersE2eTest, RefusedFiltersAre422sNamingFilterAndStoreNothing) {
  const std::vector<std::string> refused = {
      "",
      "$.amount >",                                    // syntax
      "$.amount",                                      // not a predicate
      "$.items ? (@.qty > 1)",                         // not a predicate
      "$.amount > $limit",                             // a variable
      R"($.at.datetime() < "2026-01-01".datetime())",  // datetime()
      R"($.** == 1 && $.** == 2)",                     // ** twice
      R"($.items[*] ? (@.price > $.min).sku == "x")",  // $ inside ?()
      R"($.a like_regex "(a)\\1")",                    // a back-reference
      R"($.a like_regex "[a-z]{1,200}")",              // a large counted repetition
      R"($.a like_regex "a{2}b{2}c{2}")",              // three counted repetitions
      R"($.a like_regex "((")",                        // a bad regular expression
      "$.a == \"" + std::string(4100, 'x') + "\"",     // over 4,096 bytes
  };
  const std::string before = db_.Scalar("SELECT count(*) FROM webhookd.destinations");
  for (const std::string& filter : refused) {
    SCOPED_TRACE(filter.substr(0, 80));
    auto res = webhookd_.Call("POST", "/v1/destinations",
                              {{"url", "http://127.0.0.1:9/x"}, {"filter", filter}});
    ASSERT_EQ(res.status, 422) << res.body;
    const Json problem = Json::parse(res.body);
    EXPECT_EQ(problem["errors"][0]["field"], "filter") << res.body;
    EXPECT_EQ(ByTestStatus(filter), 422);
  }
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM webhookd.destinations"), before);
  // A PATCH is held to the same rule, and a refused one changes nothing.
  const Json dst = Call("POST", "/v1/destinations",
                        {{"url", "http://127.0.0.1:9/y"}, {"filter", "$.a == 1"}}, 201);
  const std::string path = "/v1/destinations/" + dst["id"].get<std::string>();
  EXPECT_EQ(webhookd_.Call("PATCH", path, {{"filter", "$.a"}}).status, 422);
  EXPECT_EQ(Call("GET", path, nullptr, 200)["filter"], "$.a == 1");
  EXPECT_EQ(Call("PATCH", path, {{"filter", nullptr}}, 200)["filter"], nullptr);
  EXPECT_EQ(Call("PATCH", path, {{"filter", "$.b == 2"}}, 200)["filter"], "$.b == 2");
}

TEST_F(FiltersE2eTest, AnEventNamingItsDestinationIgnoresTheFilter) {
  const Json dst = Call("POST", "/v1/destinations",
                        {{"url", "http://127.0.0.1:9/t"}, {"filter", "$.never == true"}}, 201);
  const Json fanned = Call("POST", "/v1/events", {{"type", "x.y"}, {"payload", {{"a", 1}}}}, 202);
  EXPECT_TRUE(fanned["deliveries"].empty());
  const Json targeted =
      Call("POST", "/v1/events",
           {{"type", "x.y"}, {"payload", {{"a", 1}}}, {"destination_id", dst["id"]}}, 202);
  EXPECT_EQ(targeted["deliveries"].size(), 1u);
}

// The costliest shapes the rule accepts, on a payload near the largest body: ingest still
// answers, each filter decided. (What they cost is measured and written in
// docs/filters.md; a test asserts no time.)
TEST_F(FiltersE2eTest, TheCostliestAcceptedFiltersOnTheLargestPayloadStillIngest) {
  const std::vector<std::pair<std::string, bool>> filters = {
      {R"($.** like_regex "^(a+)+$")", false},
      {R"($.** ? (@.tags[*] == "q").n > 1)", false},
      {R"($.items[*] ? (@.** like_regex "(x|y|z)+q").n > 1)", false},
      {R"($.items[*].sku like_regex "[a-z]{1,16}[0-9]{1,16}")", true},
      {R"($.** == "nope")", false},
      {R"(exists($.items[*] ? (@.n == 2999)))", true},
  };
  for (const auto& [filter, _] : filters) {
    Call("POST", "/v1/destinations",
         {{"url", "http://127.0.0.1:9/big"}, {"event_types", {"big.event"}}, {"filter", filter}},
         201);
  }
  std::string payload = R"({"items":[)";
  for (int i = 0; i < 3000 && payload.size() < 240000; ++i) {
    if (i > 0) payload += ',';
    payload += R"({"sku":")" + std::string(30, 'a') + std::to_string(i) + R"(","n":)" +
               std::to_string(i) + R"(,"tags":["x","y","z"]})";
  }
  payload += "]}";
  const auto start = std::chrono::steady_clock::now();
  auto res = Raw("/v1/events", R"({"type":"big.event","payload":)" + payload + "}");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(res.status, 202) << res.body.substr(0, 300);
  size_t want = 0;
  for (const auto& [_, delivers] : filters) want += delivers;
  EXPECT_EQ(Json::parse(res.body)["deliveries"].size(), want);
  std::printf(
      "a %zu-byte payload through %zu of the costliest filters: %lld ms\n", payload.size(),
      filters.size(),
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
}

// The fixture's server does not deliver; this one does, to three receivers of one tenant.
TEST(FiltersDeliveryE2eTest, EachOfThreeFilteredDestinationsGetsExactlyItsEvents) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all");
  Receiver big, eur, books;
  const auto make = [&](const Receiver& r, const std::string& filter) {
    auto res = webhookd.Call("POST", "/v1/destinations",
                             {{"url", r.url()},
                              {"tenant_id", "shop"},
                              {"event_types", {"order.created"}},
                              {"filter", filter}});
    ASSERT_EQ(res.status, 201) << res.body;
  };
  make(big, "$.amount >= 1000");
  make(eur, R"($.currency == "EUR")");
  make(books, R"($.items[*].sku starts with "BK-")");
  struct Order {
    int amount;
    std::string currency, sku;
  };
  const std::vector<Order> orders = {{5000, "EUR", "BK-1"}, {20, "EUR", "TS-1"},
                                     {2000, "USD", "TS-2"}, {10, "USD", "BK-2"},
                                     {15, "GBP", "TS-3"},   {1000, "EUR", "TS-4"}};
  int want_big = 0, want_eur = 0, want_books = 0;
  for (size_t i = 0; i < orders.size(); ++i) {
    const Order& o = orders[i];
    want_big += o.amount >= 1000;
    want_eur += o.currency == "EUR";
    want_books += o.sku.starts_with("BK-");
    auto res = webhookd.Call("POST", "/v1/events",
                             {{"type", "order.created"},
                              {"tenant_id", "shop"},
                              {"payload",
                               {{"n", i},
                                {"amount", o.amount},
                                {"currency", o.currency},
                                {"items", {{{"sku", o.sku}}}}}}});
    ASSERT_EQ(res.status, 202) << res.body;
  }
  // Another tenant's event of the same type reaches none of them.
  ASSERT_EQ(webhookd
                .Call("POST", "/v1/events",
                      {{"type", "order.created"},
                       {"tenant_id", "other"},
                       {"payload", {{"amount", 9999}, {"currency", "EUR"}}}})
                .status,
            202);
  ASSERT_TRUE(big.WaitFor(want_big, 20s));
  ASSERT_TRUE(eur.WaitFor(want_eur, 20s));
  ASSERT_TRUE(books.WaitFor(want_books, 20s));
  std::this_thread::sleep_for(1s);  // room for anything that should not come
  const auto numbers = [](Receiver& r) {
    std::set<int> n;
    for (const Received& got : r.requests())
      n.insert(Json::parse(got.body)["data"]["n"].get<int>());
    return n;
  };
  EXPECT_EQ(numbers(big), (std::set<int>{0, 2, 5}));
  EXPECT_EQ(numbers(eur), (std::set<int>{0, 1, 5}));
  EXPECT_EQ(numbers(books), (std::set<int>{0, 3}));
}

// Operational events pass through the same filters: of two destinations subscribed to
// webhookd.destination.disabled, only the one whose filter names the reason gets it.
TEST(FiltersDeliveryE2eTest, OperationalEventsAreFilteredToo) {
  TestDatabase db;
  WebhookdProcess webhookd(db.url(), "all", {{"WEBHOOKD_RETRY_SCHEDULE", "100ms"}});
  Receiver gone_watch, failing_watch;
  Receiver gone([](const Received&, int) {
    Answer a;
    a.status = 410;
    return a;
  });
  for (auto [r, reason] : {std::pair{&gone_watch, "gone"}, std::pair{&failing_watch, "failing"}}) {
    auto res = webhookd.Call("POST", "/v1/destinations",
                             {{"url", r->url()},
                              {"event_types", {"webhookd.destination.disabled"}},
                              {"filter", std::string("$.reason == \"") + reason + "\""}});
    ASSERT_EQ(res.status, 201) << res.body;
  }
  ASSERT_EQ(
      webhookd.Call("POST", "/v1/destinations", {{"url", gone.url()}, {"event_types", {"a.b"}}})
          .status,
      201);
  ASSERT_EQ(
      webhookd.Call("POST", "/v1/events", {{"type", "a.b"}, {"payload", Json::object()}}).status,
      202);
  ASSERT_TRUE(gone_watch.WaitFor(1, 20s));
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(Json::parse(gone_watch.requests()[0].body)["data"]["reason"], "gone");
  EXPECT_EQ(failing_watch.count(), 0u);
}

}  // namespace
}  // namespace webhookd::testing::filters_e2e_test
