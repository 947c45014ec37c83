// The fan-out's type rule (store/pg/schema/event_type_matches.sql) restated on keys must
// answer as its first definition (migration 0004, in the git history before the baseline) did, for
// every pattern against every type of a table of cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/test_database.h"

namespace webhookd::event_type_rule_pgtest {
namespace {

using testing::TestDatabase;

TEST(EventTypeRuleTest, TheKeysAnswerAsThePatternScanDid) {
  TestDatabase db;
  const std::vector<std::string> types = {"order.created",
                                          "order",
                                          "orders.created",
                                          "order.x.y",
                                          "a",
                                          "a.b",
                                          ".a",
                                          "a.",
                                          "a..b",
                                          "invoice.paid",
                                          "orderXcreated",
                                          "x.order.created",
                                          "webhookd.destination.disabled"};
  const std::vector<std::string> patterns = {
      "order.created", "order.*", "order",     "*",          ".*",           "a.*",    "a.b.*",
      "a..*",          "x.*",     "order.x.*", "webhookd.*", "invoice.paid", "orde.*", "a.b"};
  std::string values;
  for (const std::string& t : types) {
    for (const std::string& p : patterns) {
      values += std::string(values.empty() ? "" : ",") + "('" + p + "','" + t + "')";
    }
  }
  // Every pattern alone (182), every pair of them (1,183), and the empty list ("every
  // type", 182).
  const std::string cases =
      "WITH c(p, t) AS (VALUES " + values +
      "), "
      "lists(ps, t) AS (SELECT ARRAY[p], t FROM c UNION ALL "
      "  SELECT ARRAY[a.p, b.p], a.t FROM c a JOIN c b ON a.t = b.t AND a.p < b.p UNION ALL "
      "  SELECT '{}'::text[], t FROM c) ";
  const std::string old_rule =
      "(cardinality(ps) = 0 OR EXISTS (SELECT 1 FROM unnest(ps) p WHERE p = t OR "
      "(right(p, 2) = '.*' AND starts_with(t, left(p, -1)))))";
  EXPECT_EQ(db.Scalar(cases + "SELECT count(*) FROM lists"), "1547");
  EXPECT_EQ(db.Scalar(cases + "SELECT count(*) FROM lists WHERE " + old_rule +
                      " IS DISTINCT FROM event_type_matches(ps, t)"),
            "0");
  EXPECT_EQ(db.Scalar(cases + "SELECT count(*) FROM lists WHERE " + old_rule +
                      " IS DISTINCT FROM (cardinality(ps) = 0 OR ps && event_type_keys(t))"),
            "0");
  // Both kinds of answer occur, so the comparison means something.
  EXPECT_NE(db.Scalar(cases + "SELECT count(*) FROM lists WHERE event_type_matches(ps, t)"), "0");
  EXPECT_NE(db.Scalar(cases + "SELECT count(*) FROM lists WHERE NOT event_type_matches(ps, t)"),
            "0");
}

}  // namespace
}  // namespace webhookd::event_type_rule_pgtest
