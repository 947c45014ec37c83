#include "core/retry_after.h"

#include <gtest/gtest.h>

namespace webhookd::retry_after_test {
namespace {

using namespace std::chrono_literals;

// Sun, 06 Nov 1994 08:49:37 GMT
const Timestamp kDate = Timestamp(784111777s);

TEST(RetryAfterTest, DeltaSeconds) {
  EXPECT_EQ(ParseRetryAfter("0", kDate), 0s);
  EXPECT_EQ(ParseRetryAfter("120", kDate), 120s);
  EXPECT_EQ(ParseRetryAfter(" 120 ", kDate), 120s);
  EXPECT_EQ(ParseRetryAfter("0003", kDate), 3s);
}

TEST(RetryAfterTest, HugeDeltaSecondsAreCappedNotOverflowed) {
  const std::optional<Duration> d = ParseRetryAfter("99999999999999999999999999999999", kDate);
  ASSERT_TRUE(d.has_value());
  EXPECT_GT(*d, 24h * 365 * 10);
  EXPECT_GT(*d, Duration::zero());
}

TEST(RetryAfterTest, HttpDatesInEveryForm) {
  const Timestamp now = kDate - 90s;
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now), 90s);
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now), 90s);
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:49:37 1994", now), 90s);
  EXPECT_EQ(ParseRetryAfter("Sun Nov 16 08:49:37 1994", now), 90s + 240h);
}

TEST(RetryAfterTest, DatesInThePastAreAZeroWait) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kDate + 1h), 0s);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kDate), 0s);
}

TEST(RetryAfterTest, TwoDigitYearsAreNotMoreThanFiftyYearsAhead) {
  // Seen in 2026: "30" is 2030, "94" is 1994 (in the past, so zero).
  const Timestamp now =
      Timestamp(std::chrono::sys_days(std::chrono::year(2026) / std::chrono::January / 1));
  const std::optional<Duration> d = ParseRetryAfter("Tuesday, 01-Jan-30 00:00:00 GMT", now);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::days>(*d).count(), 365 * 4 + 1);
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now), 0s);
}

TEST(RetryAfterTest, JunkIsNotAWait) {
  for (const char* bad : {"", "  ", "-1", "+5", "1.5", "5s", "soon", "12 34", "0x10",
                          "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37",
                          "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT",
                          "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
                          "Sun, 06 Nov 1994 08:49:37 GMT junk", "Sunday, 06-Nov-1994 08:49:37 GMT",
                          "Sun Nov 6 08:49:37 1994", "Xyz, 06 Nov 1994 08:49:37 GMT"}) {
    EXPECT_FALSE(ParseRetryAfter(bad, kDate).has_value()) << bad;
  }
}

}  // namespace
}  // namespace webhookd::retry_after_test
