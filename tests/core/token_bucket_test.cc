#include "core/token_bucket.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tests/testing/fakes.h"

namespace webhookd {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;

TEST(TokenBucketTest, StartsFullAndGivesAtMostWhatItHolds) {
  FakeClock clock;
  TokenBucket bucket(5);
  EXPECT_EQ(bucket.Take(clock.Now(), 3), 3);
  EXPECT_EQ(bucket.Take(clock.Now(), 10), 2);
  EXPECT_EQ(bucket.Take(clock.Now(), 10), 0);
  EXPECT_EQ(bucket.Take(clock.Now(), 0), 0);
}

TEST(TokenBucketTest, RefillsAtTheRateUpToTheRate) {
  FakeClock clock;
  TokenBucket bucket(5);
  ASSERT_EQ(bucket.Take(clock.Now(), 5), 5);
  clock.Advance(199ms);
  EXPECT_EQ(bucket.Take(clock.Now(), 5), 0);  // 0.995 of a token
  clock.Advance(1ms);
  EXPECT_EQ(bucket.Take(clock.Now(), 5), 1);
  clock.Advance(1h);
  EXPECT_DOUBLE_EQ(bucket.Available(clock.Now()), 5.0);
  EXPECT_EQ(bucket.Take(clock.Now(), 100), 5);
}

TEST(TokenBucketTest, FractionsCarryOver) {
  FakeClock clock;
  TokenBucket bucket(1, 0.0, clock.Now());
  int taken = 0;
  for (int i = 0; i < 40; ++i) {
    clock.Advance(250ms);
    taken += bucket.Take(clock.Now(), 1);
  }
  EXPECT_EQ(taken, 10);
}

TEST(TokenBucketTest, TimeGoingBackwardsRefillsNothing) {
  FakeClock clock;
  TokenBucket bucket(2);
  ASSERT_EQ(bucket.Take(clock.Now(), 2), 2);
  EXPECT_EQ(bucket.Take(clock.Now() - 10s, 2), 0);
  EXPECT_EQ(bucket.Take(clock.Now(), 2), 0);
}

// The contract's bound, checked over every window of a long random run: claims at random
// moments asking for random numbers of starts.
TEST(TokenBucketTest, AnyWindowOfTSecondsHoldsAtMostRateTimesTPlusOneStarts) {
  for (int rate : {1, 3, 50}) {
    FakeClock clock;
    TokenBucket bucket(rate);
    std::mt19937 gen(rate);
    std::uniform_int_distribution<int> gap_us(0, 400'000), want(0, 2 * rate);
    std::vector<Timestamp> starts;
    for (int i = 0; i < 3000; ++i) {
      clock.Advance(Duration(gap_us(gen)));
      const int taken = bucket.Take(clock.Now(), want(gen));
      for (int k = 0; k < taken; ++k) starts.push_back(clock.Now());
    }
    ASSERT_GT(starts.size(), 100u);
    for (size_t i = 0; i < starts.size(); ++i) {
      for (size_t j = i; j < starts.size() && j < i + 40 * static_cast<size_t>(rate); ++j) {
        const double window = Seconds(starts[j] - starts[i]);
        const double count = static_cast<double>(j - i + 1);
        ASSERT_LE(count, rate * (window + 1) + 1e-9) << "rate " << rate << " from " << i;
      }
    }
    // And it is not merely slow: a greedy claimer gets close to the rate.
    const double span = Seconds(starts.back() - starts.front());
    EXPECT_GT(static_cast<double>(starts.size()), 0.5 * rate * span);
  }
}

}  // namespace
}  // namespace webhookd
