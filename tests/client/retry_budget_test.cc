#include "client/retry_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/testing/fakes.h"

namespace webhookd::client::retry_budget_test {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;
using testing::FakeClock;

void Requests(RetryBudget& budget, int n) {
  for (int i = 0; i < n; ++i) budget.RecordRequest();
}

int Retries(RetryBudget& budget, int tries) {
  int allowed = 0;
  for (int i = 0; i < tries; ++i) allowed += budget.TryRetry() ? 1 : 0;
  return allowed;
}

TEST(RetryBudgetTest, EveryRetryIsAllowedBeforeTenRequests) {
  FakeClock clock;
  RetryBudget budget(clock);
  budget.RecordRequest();
  EXPECT_EQ(Retries(budget, 5), 5);  // a lone event keeps all its attempts
  Requests(budget, 8);
  EXPECT_EQ(Retries(budget, 20), 20);
}

TEST(RetryBudgetTest, RetriesStayWithinTwentyPercentOfRequests) {
  FakeClock clock;
  RetryBudget budget(clock);
  Requests(budget, 10);
  EXPECT_TRUE(budget.TryRetry());
  EXPECT_TRUE(budget.TryRetry());
  EXPECT_FALSE(budget.TryRetry());  // a third would be 30 %
  Requests(budget, 4);
  EXPECT_FALSE(budget.TryRetry());  // 3 of 14 is still over 20 %
  budget.RecordRequest();
  EXPECT_TRUE(budget.TryRetry());  // 3 of 15
  EXPECT_FALSE(budget.TryRetry());
}

TEST(RetryBudgetTest, OpensAndClosesAsTheTenSecondWindowSlides) {
  FakeClock clock;
  RetryBudget budget(clock);
  Requests(budget, 50);
  EXPECT_EQ(Retries(budget, 20), 10);  // closed at 10 of 50

  clock.Advance(seconds(5));
  EXPECT_FALSE(budget.TryRetry());
  Requests(budget, 50);
  EXPECT_EQ(Retries(budget, 20), 10);  // 20 of 100

  clock.Advance(seconds(5));        // exactly 10 s after the first 50: they leave the window
  EXPECT_FALSE(budget.TryRetry());  // 10 retries of 50 requests remain
  Requests(budget, 5);
  EXPECT_EQ(Retries(budget, 5), 1);  // 11 of 55

  // The second 50 leave too; the 5 requests left are fewer than 10: open again.
  clock.Advance(seconds(5) + microseconds(1));
  EXPECT_TRUE(budget.TryRetry());
}

TEST(RetryBudgetTest, ConcurrentRetriesNeverOverspend) {
  FakeClock clock;
  RetryBudget budget(clock);
  Requests(budget, 8000);
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] { allowed += Retries(budget, 500); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 1600);
}

}  // namespace
}  // namespace webhookd::client::retry_budget_test
