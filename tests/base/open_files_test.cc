// The open-file limit webhookd raises at start, and the connections that leaves room for.
#include "base/open_files.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace webhookd::open_files_test {
namespace {

TEST(OpenFilesTest, TheSoftLimitIsRaisedToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit lowered = before;
  lowered.rlim_cur = std::min<rlim_t>(before.rlim_max, 256);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);

  const Result<int64_t> raised = RaiseOpenFileLimit();
  ASSERT_TRUE(raised.has_value()) << raised.error().message;
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  if (before.rlim_max != RLIM_INFINITY) {
    EXPECT_EQ(*raised, static_cast<int64_t>(before.rlim_max));
  }
}

TEST(OpenFilesTest, TheBudgetLeavesTheReserveFree) {
  EXPECT_EQ(ConnectionBudget(1024, 300, 10000), 724);
  EXPECT_EQ(ConnectionBudget(1'048'576, 300, 10000), 10000);  // the configured cap rules
  EXPECT_EQ(ConnectionBudget(200, 300, 10000), 64);           // a low limit still serves
  EXPECT_EQ(ConnectionBudget(200, 300, 10), 10);
}

}  // namespace
}  // namespace webhookd::open_files_test
