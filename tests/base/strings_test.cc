#include "base/strings.h"

#include <gtest/gtest.h>

namespace webhookd::strings_test {
namespace {

TEST(StringsTest, LowerAndEqualsIgnoreCaseAreAsciiOnly) {
  EXPECT_EQ(Lower("Content-TYPE"), "content-type");
  EXPECT_EQ(Lower("\xc3\x89"), "\xc3\x89");  // É is left alone
  EXPECT_TRUE(EqualsIgnoreCase("Retry-After", "retry-after"));
  EXPECT_FALSE(EqualsIgnoreCase("retry-after", "retry-afte"));
  EXPECT_TRUE(StartsWithIgnoreCase("Retry-After: 5", "retry-after:"));
  EXPECT_TRUE(StartsWithIgnoreCase("HTTP/1.1 200", "http/"));
  EXPECT_FALSE(StartsWithIgnoreCase("Retry", "retry-after:"));
  EXPECT_FALSE(StartsWithIgnoreCase("\xC9tag", "\xE9tag"));  // ASCII only
  EXPECT_FALSE(EqualsIgnoreCase("a", "b"));
}

TEST(StringsTest, TrimTakesTheGivenBytesFromBothEnds) {
  EXPECT_EQ(Trim("  \t30s \t"), "30s");
  EXPECT_EQ(Trim("30s\n"), "30s\n");  // by default only spaces and tabs
  EXPECT_EQ(Trim("\r\n value \r\n", " \t\r\n"), "value");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("a b"), "a b");
}

TEST(StringsTest, BoundedIntsAreDigitsAloneWithinTheBounds) {
  EXPECT_EQ(ParseBoundedInt("0", 0, 10), 0);
  EXPECT_EQ(ParseBoundedInt("10", 0, 10), 10);
  EXPECT_EQ(ParseBoundedInt("007", 0, 10), 7);
  for (const char* bad :
       {"", "11", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x1", "99999999999999999999"}) {
    EXPECT_EQ(ParseBoundedInt(bad, 0, 10), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseBoundedInt("0", 1, 65535), std::nullopt);
}

}  // namespace
}  // namespace webhookd::strings_test
