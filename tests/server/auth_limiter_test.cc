// The failed-authentication bucket, with an injected clock: every refusal and every
// refill is checked exactly.
#include "server/auth_limiter.h"

#include <gtest/gtest.h>

#include "tests/testing/fakes.h"

namespace webhookd {
namespace {

using std::chrono::seconds;

TEST(FailedAuthLimiterTest, AnAddressMayFailItsBurstThenOncePerRefill) {
  testing::FakeClock clock;
  FailedAuthLimiter limiter(clock, /*per_minute=*/6);  // a burst of 6, then one per 10 s
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 0);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 0) << i;
    limiter.Failed("198.51.100.7");
  }
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 10);
  // Another address is not held back by the first.
  EXPECT_EQ(limiter.RetryAfter("203.0.113.9"), 0);
  clock.Advance(seconds(4));
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 6);
  clock.Advance(seconds(6));
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 0);  // one token back
  limiter.Failed("198.51.100.7");
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 10);
  clock.Advance(seconds(3600));  // refilled to the burst, never beyond
  for (int i = 0; i < 6; ++i) limiter.Failed("198.51.100.7");
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 10);
}

TEST(FailedAuthLimiterTest, ZeroTurnsItOff) {
  testing::FakeClock clock;
  FailedAuthLimiter limiter(clock, 0);
  for (int i = 0; i < 1000; ++i) limiter.Failed("198.51.100.7");
  EXPECT_EQ(limiter.RetryAfter("198.51.100.7"), 0);
}

TEST(FailedAuthLimiterTest, TheTableOfAddressesIsBounded) {
  testing::FakeClock clock;
  FailedAuthLimiter limiter(clock, 2, /*max_addresses=*/100);
  for (int i = 0; i < 1000; ++i) {
    const std::string address = "10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256);
    limiter.Failed(address);
    limiter.Failed(address);
  }
  // The newest address is still held to its limit.
  EXPECT_GT(limiter.RetryAfter("10.0.3.231"), 0);
}

}  // namespace
}  // namespace webhookd
