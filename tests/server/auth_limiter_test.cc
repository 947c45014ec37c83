// The failed-authentication bucket, with an injected clock: every refusal and every
// refill is checked exactly.
#include "server/auth_limiter.h"

#include <gtest/gtest.h>

#include "server/client_address.h"
#include "tests/testing/fakes.h"

namespace webhookd::auth_limiter_test {
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

TEST(FailedAuthLimiterTest, AnIpv6ClientIsItsSlash64AndAMappedIpv4AddressIsThatAddress) {
  EXPECT_EQ(ClientOf("198.51.100.7"), "198.51.100.7");
  EXPECT_EQ(ClientOf("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  EXPECT_EQ(ClientOf("2001:db8:1:2:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
  EXPECT_EQ(ClientOf("::ffff:198.51.100.7"), "198.51.100.7");
  EXPECT_EQ(ClientOf("not an address"), "not an address");

  testing::FakeClock clock;
  FailedAuthLimiter limiter(clock, /*per_minute=*/3);
  // A host that takes a new address of its /64 for every guess is still one client.
  for (int i = 0; i < 3; ++i) limiter.Failed("2001:db8:1:2::" + std::to_string(i + 1));
  EXPECT_EQ(limiter.RetryAfter("2001:db8:1:2:dead:beef:0:1"), 20);
  EXPECT_EQ(limiter.RetryAfter("2001:db8:1:3::1"), 0);  // the next /64 is another client
  for (int i = 0; i < 3; ++i) limiter.Failed("::ffff:203.0.113.9");
  EXPECT_EQ(limiter.RetryAfter("203.0.113.9"), 20);
  EXPECT_EQ(limiter.RetryAfter("203.0.113.10"), 0);  // IPv4 stays exact
}

TEST(FailedAuthLimiterTest, AFullTableEvictsTheLeastRecentlySeenClientOnly) {
  testing::FakeClock clock;
  FailedAuthLimiter limiter(clock, 2, /*max_clients=*/100);
  // The client guessing keys against a victim, out of tokens.
  limiter.Failed("198.51.100.7");
  limiter.Failed("198.51.100.7");
  ASSERT_GT(limiter.RetryAfter("198.51.100.7"), 0);
  // A flood of new addresses, the guesser still guessing in between: its count stays.
  for (int i = 0; i < 1000; ++i) {
    const std::string address = "10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256);
    limiter.Failed(address);
    limiter.Failed(address);
    if (i % 50 == 0) limiter.Failed("198.51.100.7");
    clock.Advance(std::chrono::milliseconds(1));
  }
  EXPECT_GT(limiter.RetryAfter("198.51.100.7"), 0);
  // The newest addresses are all still held to their limit (nothing was cleared at once).
  for (int i = 901; i < 1000; ++i) {
    const std::string address = "10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256);
    EXPECT_GT(limiter.RetryAfter(address), 0) << address;
  }
  // The oldest was evicted: the table stays bounded.
  EXPECT_EQ(limiter.RetryAfter("10.0.0.0"), 0);
}

}  // namespace
}  // namespace webhookd::auth_limiter_test
