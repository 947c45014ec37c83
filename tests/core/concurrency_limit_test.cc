#include "core/concurrency_limit.h"

#include <gtest/gtest.h>

#include <vector>

namespace webhookd {
namespace {

TEST(ConcurrencyLimitTest, StartsAtTheMax) {
  ConcurrencyLimit limit(16);
  EXPECT_EQ(limit.effective(), 16);
  EXPECT_FALSE(limit.ramping());
  limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 16);  // never above the max
}

TEST(ConcurrencyLimitTest, EachThrottleHalvesItDownToOne) {
  ConcurrencyLimit limit(16);
  std::vector<int> seen;
  for (int i = 0; i < 6; ++i) {
    limit.OnThrottle();
    seen.push_back(limit.effective());
  }
  EXPECT_EQ(seen, (std::vector<int>{8, 4, 2, 1, 1, 1}));
  ConcurrencyLimit odd(5);
  odd.OnThrottle();
  EXPECT_EQ(odd.effective(), 2);
}

TEST(ConcurrencyLimitTest, EachRunOfEffectiveSuccessesRaisesItByOne) {
  ConcurrencyLimit limit(16, 2, 0, false);
  limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 2);
  limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 3);  // a run of 2
  for (int i = 0; i < 2; ++i) limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 3);
  limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 4);  // a run of 3
  // A throttle in the middle of a run starts the run again.
  limit.OnSuccess();
  limit.OnSuccess();
  limit.OnThrottle();
  EXPECT_EQ(limit.effective(), 2);
  EXPECT_EQ(limit.success_run(), 0);
  limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 2);
}

TEST(ConcurrencyLimitTest, ItRecoversToTheMaxAndNoFurther) {
  ConcurrencyLimit limit(4, 1, 0, false);
  int successes = 0;
  while (limit.effective() < 4 && successes < 100) {
    limit.OnSuccess();
    ++successes;
  }
  EXPECT_EQ(successes, 1 + 2 + 3);
  for (int i = 0; i < 20; ++i) limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 4);
}

TEST(ConcurrencyLimitTest, AfterRecoveryItRampsByDoublingToTheMax) {
  ConcurrencyLimit limit(10);
  limit.Restart();
  std::vector<int> seen{limit.effective()};
  EXPECT_TRUE(limit.ramping());
  for (int i = 0; i < 6; ++i) {
    limit.OnSuccess();
    seen.push_back(limit.effective());
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 4, 8, 10, 10, 10}));
  EXPECT_FALSE(limit.ramping());
}

TEST(ConcurrencyLimitTest, AThrottleEndsTheRamp) {
  ConcurrencyLimit limit(64);
  limit.Restart();
  for (int i = 0; i < 4; ++i) limit.OnSuccess();
  ASSERT_EQ(limit.effective(), 16);
  limit.OnThrottle();
  EXPECT_EQ(limit.effective(), 8);
  EXPECT_FALSE(limit.ramping());
  limit.OnSuccess();
  EXPECT_EQ(limit.effective(), 8);  // additive again: a run of 8 to reach 9
}

TEST(ConcurrencyLimitTest, AMaxOfOneNeverRamps) {
  ConcurrencyLimit limit(1);
  limit.Restart();
  EXPECT_EQ(limit.effective(), 1);
  EXPECT_FALSE(limit.ramping());
}

TEST(ConcurrencyLimitTest, StoredValuesAreClampedToTheMax) {
  ConcurrencyLimit lowered(4, 10, 3, true);  // max_in_flight was lowered since
  EXPECT_EQ(lowered.effective(), 4);
  EXPECT_FALSE(lowered.ramping());
  ConcurrencyLimit zero(4, 0, -1, false);
  EXPECT_EQ(zero.effective(), 1);
  EXPECT_EQ(zero.success_run(), 0);
}

}  // namespace
}  // namespace webhookd
