#include "base/random.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace webhookd::random_test {
namespace {

TEST(RandomTest, UnitIsInHalfOpenRangeAndSpread) {
  SystemRandom random;
  double low = 1, high = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = random.Unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    low = std::min(low, u);
    high = std::max(high, u);
  }
  EXPECT_LT(low, 0.01);
  EXPECT_GT(high, 0.99);
}

TEST(RandomTest, ThreadsDrawDifferentSequences) {
  double a = 0, b = 0;
  std::thread t1([&] { a = SystemRandom().Unit(); });
  std::thread t2([&] { b = SystemRandom().Unit(); });
  t1.join();
  t2.join();
  EXPECT_NE(a, b);
}

TEST(RandomTest, SecureRandomBytesHaveTheLengthAskedAndDiffer) {
  EXPECT_EQ(SecureRandomBytes(0).size(), 0u);
  EXPECT_EQ(SecureRandomBytes(32).size(), 32u);
  EXPECT_NE(SecureRandomBytes(32), SecureRandomBytes(32));
}

}  // namespace
}  // namespace webhookd::random_test
