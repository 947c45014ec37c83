// Statements bound by name: every statement with many parameters names each one in its
// file, the names agree with the parameters its text uses, and a binder that leaves one
// out, names one the statement lacks, or binds one twice fails instead of shifting the
// rest.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "store/pg/pg_values.h"
#include "store/pg/statements.h"

namespace webhookd::pg::named_params_test {
namespace {

// Past this many, counting dollars by hand is where mistakes come from.
constexpr int kMostPositional = 6;

TEST(NamedParamsTest, EveryStatementWithManyParametersNamesThemAll) {
  for (const Query& q : sql::kPrepared) {
    std::vector<std::string> names;
    ASSERT_NO_THROW(names = ParamNames(q)) << q.name;
    const int count = HighestParam(q.sql);
    if (count > kMostPositional) {
      EXPECT_EQ(std::ssize(names), count) << q.name << " must name its parameters (@param)";
    }
  }
}

TEST(NamedParamsTest, TheKnownLongStatementsAreNamed) {
  EXPECT_EQ(ParamNames(sql::kUpdateDestination).size(), 34U);
  EXPECT_EQ(ParamNames(sql::kRecordOutcomes).size(), 22U);
  EXPECT_EQ(ParamNames(sql::kCreateDestination).size(), 23U);
  EXPECT_EQ(ParamNames(sql::kRewriteCredentials).size(), 7U);
}

constexpr Query kTwo{"two",
                     "-- @param $1 id the row\n"
                     "-- @param $2 name\n"
                     "SELECT $1::bigint, $2::text -- $3 in a comment is not a parameter\n"};

TEST(NamedParamsTest, BindsInTheStatementsOrderWhateverTheCallsOrder) {
  NamedParams p(kTwo);
  p.Set("name", "x").Set("id", int64_t{7});
  EXPECT_NO_THROW(p.Positional());
}

TEST(NamedParamsTest, AnUnboundNameFails) {
  NamedParams p(kTwo);
  p.Set("id", 1);
  EXPECT_THROW(p.Positional(), std::logic_error);
}

TEST(NamedParamsTest, AnUnknownNameFails) {
  NamedParams p(kTwo);
  p.Set("id", 1).Set("name", "x").Set("nmae", "y");
  EXPECT_THROW(p.Positional(), std::logic_error);
}

TEST(NamedParamsTest, ANameBoundTwiceFails) {
  NamedParams p(kTwo);
  p.Set("id", 1).Set("name", "x").SetNull("id");
  EXPECT_THROW(p.Positional(), std::logic_error);
}

TEST(NamedParamsTest, ACountThatDisagreesWithTheTextFails) {
  // One parameter more in the text than named, one named but unused, a number skipped.
  constexpr Query kMore{"more", "-- @param $1 id\nSELECT $1, $2\n"};
  constexpr Query kUnused{"unused", "-- @param $1 id\n-- @param $2 name\nSELECT $1\n"};
  constexpr Query kSkipped{"skipped", "-- @param $1 id\n-- @param $3 name\nSELECT $1, $3\n"};
  // A name must end at a space, or a caller would have to spell "id:" to bind it.
  constexpr Query kPunctuated{"punctuated", "-- @param $1 id: the row\nSELECT $1\n"};
  for (const Query& q : {kMore, kUnused, kSkipped, kPunctuated}) {
    EXPECT_THROW(ParamNames(q), std::logic_error) << q.name;
    NamedParams p(q);  // never throws itself: Exec's Positional() does, inside RunOn
    p.Set("id", 1);
    EXPECT_THROW(p.Positional(), std::logic_error) << q.name;
  }
}

TEST(NamedParamsTest, AStatementWithoutNamesCannotBeBoundByName) {
  constexpr Query kPlain{"plain", "SELECT $1\n"};
  EXPECT_TRUE(ParamNames(kPlain).empty());
  EXPECT_EQ(HighestParam(kPlain.sql), 1);
  EXPECT_THROW(NamedParams(kPlain).Positional(), std::logic_error);
}

}  // namespace
}  // namespace webhookd::pg::named_params_test
