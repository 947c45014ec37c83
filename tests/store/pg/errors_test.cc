// What each database failure means to a caller: the connection-level ones make the pool
// drop the connection (so that a failover is followed), the rest are the query's own.
#include "store/pg/errors.h"

#include <gtest/gtest.h>

#include <pqxx/pqxx>

namespace webhookd::pg::errors_test {
namespace {

struct Case {
  const char* sqlstate;
  ErrorKind kind;
  bool discard;
};

class ErrorsTest : public ::testing::TestWithParam<Case> {};

TEST_P(ErrorsTest, SqlStateMapsToKindAndDiscard) {
  const Case c = GetParam();
  bool discard = !c.discard;
  const Error error = ToError(pqxx::sql_error("boom", "SELECT 1", c.sqlstate), &discard);
  EXPECT_EQ(error.kind, c.kind) << c.sqlstate;
  EXPECT_EQ(discard, c.discard) << c.sqlstate;
}

INSTANTIATE_TEST_SUITE_P(
    States, ErrorsTest,
    ::testing::Values(Case{"08006", ErrorKind::kUnavailable, true},   // connection failure
                      Case{"57P01", ErrorKind::kUnavailable, true},   // admin shutdown
                      Case{"53300", ErrorKind::kUnavailable, true},   // too many connections
                      Case{"25006", ErrorKind::kUnavailable, true},   // read-only: demoted
                      Case{"57014", ErrorKind::kUnavailable, false},  // statement timeout
                      Case{"25001", ErrorKind::kInternal, false},     // active transaction
                      Case{"23505", ErrorKind::kInternal, false},     // unique violation
                      Case{"22023", ErrorKind::kInternal, false}));   // invalid parameter

TEST(ErrorsTest, BrokenConnectionAndInDoubtCommitAreUnavailable) {
  bool discard = false;
  EXPECT_EQ(ToError(pqxx::broken_connection("gone"), &discard).kind, ErrorKind::kUnavailable);
  EXPECT_TRUE(discard);
  discard = false;
  EXPECT_EQ(ToError(pqxx::in_doubt_error("commit?"), &discard).kind, ErrorKind::kUnavailable);
  EXPECT_TRUE(discard);
}

}  // namespace
}  // namespace webhookd::pg::errors_test
