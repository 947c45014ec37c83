// webhookd.filter_problem (migrations 0019 and 0033): which filters a destination may
// have. Refused: every shape whose cost grows faster than the payload, each with a reason
// that names what to write instead; accepted: the linear shapes, the cookbook's included.
// And the costliest accepted shapes on a payload of the largest accepted size are
// measured (printed; the figure is in docs/filters.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "tests/testing/test_database.h"

namespace webhookd::testing::filter_problem_pgtest {
namespace {

class FilterProblemPgTest : public ::testing::Test {
 protected:
  // The reason filter_problem gives, or "" when it accepts the filter.
  std::string Problem(const std::string& filter) {
    pqxx::work tx(*conn_);
    const pqxx::row r = tx.exec_params1("SELECT coalesce(webhookd.filter_problem($1), '')", filter);
    return r[0].c_str();
  }

  TestDatabase db_;
  std::unique_ptr<pqxx::connection> conn_ = TestDatabase::Connect(db_.url());
};

TEST_F(FilterProblemPgTest, ShapesWhoseCostGrowsFasterThanThePayloadAreRefused) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      // Two sequences compared: each item of one with each of the other.
      {"$.a[*] < $.b[*]", "may not compare two sequences"},
      {"$.a < $.b", "may not compare two sequences"},  // lax mode unwraps arrays
      {"$.a == $.b.c", "may not compare two sequences"},
      {"strict $.a[*] == $.b[*]", "may not compare two sequences"},
      {"strict $.a.* == $.b.**", "may not compare two sequences"},
      {"strict $.a[1 to 3] == $.b[0 to 1]", "may not compare two sequences"},
      {"strict $.a.keyvalue().key == $.b[*]", "may not compare two sequences"},
      {"$.a.size() != $.b.size()", "may not compare two sequences"},
      {"-$.a[*] == $.b", "may not compare two sequences"},
      {"$.a[*] ? (@.b[*] > @.c[*]).d == 1", "may not compare two sequences"},
      {"exists($.a ? (@.x == @.y))", "may not compare two sequences"},
      {"$.a[*] starts with \"x\" && ($.b[*] >= $.c)", "may not compare two sequences"},
      // Arithmetic between numbers of the payload: cost grows with the product of lengths.
      {"$.x * $.y > 1", "may multiply only by a number literal"},
      {"($.x + 1) * ($.y - 1) > 1", "may multiply only by a number literal"},
      {"$.x / $.y > 1", "may divide only by a number literal"},
      {"3 / $.x > 1", "may divide only by a number literal"},
      {"$.x % $.y == 1", "may divide only by a number literal"},
      {"$.a * 1" + std::string(70, '0') + " > 1", "numbers longer than 64 digits"},
      {"$.a + 1e70 > 1", "numbers longer than 64 digits"},
      {"-1e70 - $.a > 1", "numbers longer than 64 digits"},
      // Subscripts read the payload once per element.
      {"$.a[$.i] == 1", "array subscripts may be numbers and last alone"},
      {"$.a[*] ? (@[@.i] == 1).x == 1", "array subscripts may be numbers and last alone"},
      // Repeated items: [0,0] doubles its input, twenty of them 2^20 times.
      {"$[0,0][0,0][0,0][0,0][0,0] == 1", "one subscript or one range per [ ]"},
      {"$.a[0 to 2, 1] == 1", "one subscript or one range per [ ]"},
      // Each part of a path may visit the whole payload once: at most 12 of them.
      {"$.a[*][*][*][*][*][*][*][*][*][*][*][*] == 1", "at most 12 path parts"},
      {"$.a.abs().abs().abs().abs().abs().abs().abs().abs().abs().abs().abs() == 1",
       "at most 12 path parts"},
      // .keyvalue() copies values: after ** it copies each subtree once per level.
      {"$.**.keyvalue().key == \"a\"", "may not use .keyvalue() with **"},
      {"$.** ? (@.keyvalue().key == \"a\").x == 1", "may not use .keyvalue() with **"},
      {"$.keyvalue().value.keyvalue().key == \"a\"", "may use .keyvalue() at most once"},
      {"$.a == 1 || $.a == 2 || $.a == 3 || $.a == 4 || $.a == 5 || $.a == 6 || $.a == 7",
       "at most 12 path parts"},
      // 0019's rules still hold.
      {"$.** == 1 && $.** == 2", "may use ** at most once"},
      {"$.items[*] ? (@.price > $.min).sku == \"x\"", "may not use $ inside a filter"},
      {"$.a > $limit", "may not use variables"},
      {"$.amount", "must be a predicate"},
  };
  for (const auto& [filter, reason] : refused) {
    SCOPED_TRACE(filter.substr(0, 100));
    EXPECT_THAT(Problem(filter), ::testing::HasSubstr(reason));
  }
}

TEST_F(FilterProblemPgTest, LinearShapesAreAccepted) {
  const std::vector<std::string> accepted = {
      // The cookbook of docs/filters.md.
      "$.amount >= 100 && $.currency == \"EUR\"", "$.items[*].sku starts with \"BK-\"",
      "exists($.refund) || $.status == \"paid\"",
      "$.status like_regex \"^(paid|refunded|disputed)$\"",
      "$.customer.email like_regex \"@example\\\\.com$\" flag \"i\"",
      "exists($.items[*] ? (@.quantity > 10))", "$.livemode == true",
      "$.customer.tags[*] == \"vip\"", "$.amount_decimal.double() >= 99.95",
      "$.account_id == 18446744073709551617 && !exists($.coupon)",
      // One side a sequence, the other one value.
      "$.a[*] < -1", "-1 > $.a[*]", "$.** == \"nope\"", "$.** ? (@.tags[*] == \"q\").n > 1",
      "$.items[*] ? (@.** like_regex \"(x|y|z)+q\").n > 1",
      "$.a[*] == $.b + 0",  // arithmetic yields one value (or an error)
      "($.a + $.b) * 2 > 10",
      "$.x * 2 > 1 && 2 * $.x > 1 && $.x / 3 > 1 && $.x % 7 == 1 && -$.x < 0",
      "$.a[last - 1] == 1 && $.a[0 to 2] == 2", "$.keyvalue().key == \"a\"",
      "($.a == 1) is unknown", "$.a.type() == \"string\" && $.a.size() > 2",
      // Strict mode: paths without widening steps are single values.
      "strict $.a == $.b", "strict $.a.b[0] < $.c.size()", "strict $.a[*] < $.b",
      "$.a * 1" + std::string(63, '0') + " > 1",
      "$.n == 1e400",  // a comparison costs the shorter number's length
  };
  for (const std::string& filter : accepted) {
    SCOPED_TRACE(filter);
    EXPECT_EQ(Problem(filter), "");
  }
}

// filter_problem answers for any text, odd or deeply nested: a reason, never an error.
TEST_F(FilterProblemPgTest, AnyTextGetsAnAnswerNotAnError) {
  const std::vector<std::string> odd = {
      std::string(2000, '(') + "$.a == 1" + std::string(2000, ')'),
      std::string(1000, '!') + "($.a == 1)",
      "$" + std::string(1300, '.') + "a == 1",
      "$.a" + std::string(2000, '-') + "1 == 1",
      "$." + std::string(4000, 'a') + " == 1",
      "",
      "$",
      "strict",
      "lax $.a == 1",
      "$.\"a\\\"b\" == \"]\"",
  };
  for (const std::string& filter : odd) {
    SCOPED_TRACE(filter.substr(0, 60));
    EXPECT_NO_THROW(Problem(filter));
  }
}

// The costliest accepted shapes on a 262,144-byte payload, each evaluated as the fan-out
// does. Printed, not asserted (a loaded machine must not fail a test); docs/filters.md
// has the figure and how to reproduce it.
TEST_F(FilterProblemPgTest, TheCostliestAcceptedShapesOnTheLargestPayload) {
  // Numbers: the most values a 256 KiB payload holds, for the paths that visit each.
  std::string numbers = "{\"a\":[";
  for (int i = 0; numbers.size() < 262144 - 16; ++i) {
    if (i > 0) numbers += ',';
    numbers += std::to_string(i % 10);
  }
  numbers += "]}";
  const std::vector<std::string> costliest = {
      "$.a.abs().floor().ceiling().abs().floor().ceiling().abs().floor().ceiling().abs() == 11",
      "$.** ? (@.* == 11 || @.* == 12 || @.* == 13 || @.* == 14).x == 1",
      "$.a == 11 || $.a == 12 || $.a == 13 || $.a == 14 || $.a == 15 || $.a == 16",
      "$.** like_regex \"^(a+)+$\" || $.a[*] like_regex \"[a-z]{1,16}[0-9]{1,16}\"",
  };
  pqxx::work tx(*conn_);
  tx.exec_params("CREATE TEMP TABLE payloads AS SELECT $1::jsonb AS p", numbers);
  for (const std::string& filter : costliest) {
    EXPECT_EQ(tx.exec_params1("SELECT coalesce(webhookd.filter_problem($1), '')", filter)[0]
                  .as<std::string>(),
              "")
        << filter;
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::chrono::steady_clock::now();
      tx.exec_params("SELECT jsonb_path_match(p, $1::jsonpath, '{}', true) FROM payloads", filter);
      best = std::min(
          best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
    }
    std::printf("%.1f ms (best of 3, %zu bytes): %s\n", best, numbers.size(),
                filter.substr(0, 80).c_str());
  }
}

}  // namespace
}  // namespace webhookd::testing::filter_problem_pgtest
