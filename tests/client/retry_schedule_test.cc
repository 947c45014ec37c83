#include "client/retry_schedule.h"

#include <gtest/gtest.h>

#include "tests/testing/fakes.h"

namespace webhookd::client::retry_schedule_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClock;
using testing::FakeRandom;

TEST(RetryScheduleTest, FullJitterBoundsDoubleFrom400msAndStopAt10s) {
  const RetrySchedule schedule;
  const Duration ceilings[] = {milliseconds(400),  milliseconds(800),  milliseconds(1600),
                               milliseconds(3200), milliseconds(6400), seconds(10)};
  for (int attempt = 1; attempt <= 6; ++attempt) {
    SCOPED_TRACE(attempt);
    const Duration ceiling = ceilings[attempt - 1];
    EXPECT_EQ(schedule.Ceiling(attempt), ceiling);
    FakeRandom lowest({0.0}), highest({0.999999});
    EXPECT_EQ(schedule.Jittered(attempt, lowest), Duration(0));
    EXPECT_NEAR(Seconds(schedule.Jittered(attempt, highest)), Seconds(ceiling), 1e-5);
    EXPECT_LT(schedule.Jittered(attempt, highest), ceiling);
  }
}

TEST(RetryScheduleTest, MaxWaitCapsTheCeilingWithoutOverflow) {
  const RetrySchedule schedule(
      {.max_attempts = 6, .base = milliseconds(200), .max_wait = seconds(1)});
  EXPECT_EQ(schedule.Ceiling(2), milliseconds(800));
  EXPECT_EQ(schedule.Ceiling(3), seconds(1));
  EXPECT_EQ(schedule.Ceiling(64), seconds(1));
  EXPECT_EQ(schedule.Ceiling(1'000'000), seconds(1));
  FakeRandom highest({0.999999});
  EXPECT_LE(schedule.Jittered(10, highest), seconds(1));
}

TEST(RetryScheduleTest, NoWaitAfterTheLastAttempt) {
  const RetrySchedule schedule;  // 6 attempts
  FakeClock clock;
  FakeRandom random({0.5});
  EXPECT_EQ(schedule.WaitAfter(5, std::nullopt, clock.Now(), random), milliseconds(3200));
  EXPECT_EQ(schedule.WaitAfter(6, std::nullopt, clock.Now(), random), std::nullopt);
  const RetrySchedule once({.max_attempts = 1});
  EXPECT_EQ(once.WaitAfter(1, std::nullopt, clock.Now(), random), std::nullopt);
}

TEST(RetryScheduleTest, RetryAfterDeltaSecondsIsNeverShortened) {
  const RetrySchedule schedule;
  FakeClock clock;
  FakeRandom lowest({0.0}), highest({0.999999});
  // The jittered wait would be 0: Retry-After sets it.
  EXPECT_EQ(schedule.WaitAfter(1, "2", clock.Now(), lowest), seconds(2));
  // The jittered wait (up to 6.4 s) is longer than Retry-After: it stands.
  EXPECT_NEAR(Seconds(*schedule.WaitAfter(5, "2", clock.Now(), highest)), 6.4, 1e-5);
}

TEST(RetryScheduleTest, RetryAfterHttpDateIsReadAgainstTheClock) {
  const RetrySchedule schedule;
  FakeClock clock(Timestamp(seconds(784111774)));  // Sun, 06 Nov 1994 08:49:34 GMT
  FakeRandom lowest({0.0});
  EXPECT_EQ(schedule.WaitAfter(1, "Sun, 06 Nov 1994 08:49:37 GMT", clock.Now(), lowest),
            seconds(3));
  clock.Advance(seconds(60));  // the date is now in the past: no extra wait
  EXPECT_EQ(schedule.WaitAfter(1, "Sun, 06 Nov 1994 08:49:37 GMT", clock.Now(), lowest),
            Duration(0));
}

TEST(RetryScheduleTest, RetryAfterBeyondMaxWaitMeansNoRetry) {
  const RetrySchedule schedule;  // max_wait 10 s
  FakeClock clock;
  FakeRandom random({0.0});
  EXPECT_EQ(schedule.WaitAfter(1, "10", clock.Now(), random), seconds(10));
  EXPECT_EQ(schedule.WaitAfter(1, "11", clock.Now(), random), std::nullopt);
}

TEST(RetryScheduleTest, UnreadableRetryAfterIsIgnored) {
  const RetrySchedule schedule;
  FakeClock clock;
  FakeRandom random({0.5});
  EXPECT_EQ(schedule.WaitAfter(1, "soon", clock.Now(), random), milliseconds(200));
  EXPECT_EQ(schedule.WaitAfter(1, "", clock.Now(), random), milliseconds(200));
}

TEST(RetryScheduleTest, ClassifiesEveryStatus) {
  for (int status : {200, 201, 202, 204}) {
    EXPECT_EQ(ClassifyStatus(status), StatusClass::kAccepted) << status;
  }
  for (int status : {408, 409, 429, 500, 502, 503, 504, 599}) {
    EXPECT_EQ(ClassifyStatus(status), StatusClass::kRetry) << status;
  }
  for (int status : {400, 401, 403, 404, 405, 410, 413, 415, 422, 451, 499}) {
    EXPECT_EQ(ClassifyStatus(status), StatusClass::kRefused) << status;
  }
  for (int status : {0, 100, 199, 301, 302, 304, 399, 600}) {
    EXPECT_EQ(ClassifyStatus(status), StatusClass::kUnexpected) << status;
  }
}

}  // namespace
}  // namespace webhookd::client::retry_schedule_test
