#include "store/pg/reconnect_backoff.h"

#include <gtest/gtest.h>

namespace webhookd::pg::reconnect_backoff_test {
namespace {

using namespace std::chrono_literals;
using TimePoint = ReconnectBackoff::TimePoint;

TEST(ReconnectBackoffTest, TriesAtOnceUntilAFailure) {
  ReconnectBackoff backoff(100ms, 1s);
  EXPECT_TRUE(backoff.MayTry(TimePoint{}));
  EXPECT_TRUE(backoff.MayTry(TimePoint{} + 1h));
}

TEST(ReconnectBackoffTest, WaitsDoublingFromFirstUpToMax) {
  ReconnectBackoff backoff(100ms, 1s);
  const TimePoint t0{10s};
  backoff.Failed(t0);
  EXPECT_FALSE(backoff.MayTry(t0 + 99ms));
  EXPECT_TRUE(backoff.MayTry(t0 + 100ms));
  backoff.Failed(t0 + 100ms);
  EXPECT_FALSE(backoff.MayTry(t0 + 299ms));
  EXPECT_TRUE(backoff.MayTry(t0 + 300ms));
  backoff.Failed(t0 + 300ms);  // 400 ms
  backoff.Failed(t0 + 700ms);  // 800 ms
  EXPECT_EQ(backoff.delay(), 800ms);
  backoff.Failed(t0 + 1500ms);  // capped
  EXPECT_EQ(backoff.delay(), 1s);
  backoff.Failed(t0 + 2500ms);
  EXPECT_EQ(backoff.delay(), 1s);
  EXPECT_FALSE(backoff.MayTry(t0 + 3499ms));
  EXPECT_TRUE(backoff.MayTry(t0 + 3500ms));
}

TEST(ReconnectBackoffTest, ASuccessStartsOver) {
  ReconnectBackoff backoff(100ms, 1s);
  const TimePoint t0{10s};
  backoff.Failed(t0);
  backoff.Failed(t0 + 100ms);
  backoff.Succeeded();
  EXPECT_TRUE(backoff.MayTry(t0 + 100ms));
  backoff.Failed(t0 + 200ms);
  EXPECT_EQ(backoff.delay(), 100ms);
}

}  // namespace
}  // namespace webhookd::pg::reconnect_backoff_test
