#include "base/duration.h"

#include <gtest/gtest.h>

namespace webhookd::duration_test {
namespace {

using namespace std::chrono_literals;

TEST(DurationTest, ParsesEveryUnit) {
  EXPECT_EQ(ParseDuration("250ms").value(), 250ms);
  EXPECT_EQ(ParseDuration("30s").value(), 30s);
  EXPECT_EQ(ParseDuration("2m").value(), 2min);
  EXPECT_EQ(ParseDuration("1h").value(), 1h);
  EXPECT_EQ(ParseDuration("0s").value(), 0s);
  EXPECT_EQ(ParseDuration("007s").value(), 7s);
}

TEST(DurationTest, RefusesAnythingButDigitsAndAUnit) {
  for (const char* bad : {"", "30", "s", "1.5s", "-1s", "+1s", "1w", "1 s", " 1s", "1s ", "1S",
                          "1sec", "1hh", "1m1s", "0x10s", "1us", "ms", "1e3ms"}) {
    const Result<Duration> d = ParseDuration(bad);
    ASSERT_FALSE(d.has_value()) << bad;
    EXPECT_EQ(d.error().kind, ErrorKind::kInvalid) << bad;
  }
}

TEST(DurationTest, RefusesOverflow) {
  EXPECT_FALSE(ParseDuration("99999999999999999h").has_value());
  EXPECT_FALSE(ParseDuration("9223372036854775808ms").has_value());
  EXPECT_FALSE(ParseDuration("99999999999999999999999999s").has_value());
  // The largest whole number of hours a microsecond count can hold still parses.
  EXPECT_EQ(ParseDuration("2562047788h").value(), 2562047788h);
  EXPECT_FALSE(ParseDuration("2562047789h").has_value());
}

TEST(DurationTest, FormatsWithTheLargestExactUnit) {
  EXPECT_EQ(FormatDuration(30s), "30s");
  EXPECT_EQ(FormatDuration(2min), "2m");
  EXPECT_EQ(FormatDuration(1h), "1h");
  EXPECT_EQ(FormatDuration(90min), "90m");
  EXPECT_EQ(FormatDuration(1500ms), "1500ms");
  EXPECT_EQ(FormatDuration(61s), "61s");
  EXPECT_EQ(FormatDuration(0s), "0s");
  EXPECT_EQ(FormatDuration(-30s), "-30s");
}

TEST(DurationTest, FormatRoundTripsThroughParse) {
  for (Duration d :
       {Duration(250ms), Duration(30s), Duration(2min), Duration(3h), Duration(1001ms)}) {
    EXPECT_EQ(ParseDuration(FormatDuration(d)).value(), d) << FormatDuration(d);
  }
}

TEST(DurationTest, DaysAreTwentyFourHours) {
  EXPECT_EQ(*ParseDuration("1d"), std::chrono::hours(24));
  EXPECT_EQ(*ParseDuration("30d"), std::chrono::hours(24 * 30));
  EXPECT_EQ(*ParseDuration("0d"), Duration::zero());
  EXPECT_FALSE(ParseDuration("1.5d"));
  EXPECT_FALSE(ParseDuration("d"));
  EXPECT_FALSE(ParseDuration("1D"));
  // Shown in hours, as before: 24h, not 1d.
  EXPECT_EQ(FormatDuration(*ParseDuration("2d")), "48h");
}

}  // namespace
}  // namespace webhookd::duration_test
