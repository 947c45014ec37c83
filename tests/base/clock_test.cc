#include "base/clock.h"

#include <gtest/gtest.h>

namespace webhookd::clock_test {
namespace {

using namespace std::chrono_literals;

TEST(ClockTest, FormatsUtcWithMicroseconds) {
  EXPECT_EQ(FormatRfc3339(Timestamp(0s)), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(FormatRfc3339(Timestamp(784111777s + 789012us)), "1994-11-06T08:49:37.789012Z");
  EXPECT_EQ(FormatRfc3339(Timestamp(1'709'208'000s)), "2024-02-29T12:00:00.000000Z");
  EXPECT_EQ(FormatRfc3339(Timestamp(-1s)), "1969-12-31T23:59:59.000000Z");
}

TEST(ClockTest, ParsesWhatItFormats) {
  for (Timestamp t : {Timestamp(0s), Timestamp(1'700'000'000s + 123456us), Timestamp(-1s),
                      Timestamp(4'102'444'800s)}) {
    EXPECT_EQ(ParseRfc3339(FormatRfc3339(t)), t) << FormatRfc3339(t);
  }
}

TEST(ClockTest, ParsesOffsetsAndFractions) {
  const Timestamp noon = Timestamp(1'709'208'000s);  // 2024-02-29T12:00:00Z
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:00:00Z"), noon);
  EXPECT_EQ(ParseRfc3339("2024-02-29t12:00:00z"), noon);
  EXPECT_EQ(ParseRfc3339("2024-02-29T14:00:00+02:00"), noon);
  EXPECT_EQ(ParseRfc3339("2024-02-29T06:30:00-05:30"), noon);
  EXPECT_EQ(ParseRfc3339("2024-03-01T01:00:00+13:00"), noon);
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:00:00.5Z"), noon + 500ms);
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:00:00.123456789Z"), noon + 123456us);
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:00:00.000001Z"), noon + 1us);
}

TEST(ClockTest, RefusesGarbage) {
  for (const char* bad : {"",
                          "2024-02-29",
                          "2024-02-29T12:00:00",
                          "2024-13-01T00:00:00Z",
                          "2024-00-01T00:00:00Z",
                          "2023-02-29T00:00:00Z",
                          "2024-02-30T00:00:00Z",
                          "2024-04-31T00:00:00Z",
                          "2024-01-01T24:00:00Z",
                          "2024-01-01T23:60:00Z",
                          "2024-01-01T23:59:60Z",
                          "2024-01-01T00:00:00.Z",
                          "2024-01-01T00:00:00.1234567890Z",
                          "2024-01-01T00:00:00+2:00",
                          "2024-01-01T00:00:00+0200",
                          "2024-01-01T00:00:00+24:00",
                          "2024-01-01 00:00:00Z",
                          "2024-1-01T00:00:00Z",
                          "2024-01-01T00:00:00Zjunk",
                          " 2024-01-01T00:00:00Z",
                          "yesterday"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

TEST(ClockTest, HelpersConvert) {
  EXPECT_EQ(UnixSeconds(Timestamp(1'614'265'330s + 999ms)), 1'614'265'330);
  EXPECT_DOUBLE_EQ(Seconds(1500ms), 1.5);
  SystemClock clock;
  EXPECT_GT(UnixSeconds(clock.Now()), 1'700'000'000);
}

}  // namespace
}  // namespace webhookd::clock_test
