#include "core/destination_stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace webhookd::destination_stats_test {
namespace {

using namespace std::chrono_literals;

Timestamp At(int64_t seconds) { return Timestamp(std::chrono::seconds(seconds)); }

TEST(DestinationStatsTest, ABinHoldsTheDurationsOfItsHalfOctave) {
  // Each bin's first whole millisecond is the first d with 2^(i/2) <= d + 1.
  for (int i = 1; i < kLatencyBins; ++i) {
    EXPECT_EQ(kLatencyBinFloor[i], static_cast<int64_t>(std::ceil(std::exp2(i / 2.0))) - 1) << i;
  }
  EXPECT_EQ(LatencyBin(-5), 0);
  EXPECT_EQ(LatencyBin(0), 0);
  EXPECT_EQ(LatencyBin(1), 2);  // bin 1 holds no whole millisecond
  EXPECT_EQ(LatencyBin(2), 3);
  EXPECT_EQ(LatencyBin(89), 12);
  EXPECT_EQ(LatencyBin(90), 13);
  EXPECT_EQ(LatencyBin(46339), 30);
  EXPECT_EQ(LatencyBin(46340), 31);
  EXPECT_EQ(LatencyBin(10'000'000), 31);
  // Every duration up to two minutes falls where its definition says.
  for (int64_t d = 0; d < 120'000; ++d) {
    const int bin = LatencyBin(d);
    ASSERT_LE(std::exp2(bin / 2.0), static_cast<double>(d + 1)) << d;
    if (bin + 1 < kLatencyBins) {
      ASSERT_GT(std::exp2((bin + 1) / 2.0), static_cast<double>(d + 1)) << d;
    }
  }
}

TEST(DestinationStatsTest, AQuantileIsTheMiddleOfItsBinWithinAFactorOfTwoToTheQuarter) {
  EXPECT_EQ(LatencyQuantile(LatencyCounts{}, 0.5), std::nullopt);
  // Small durations are exact.
  for (int64_t d : {0, 1, 2}) {
    LatencyCounts one{};
    ++one[LatencyBin(d)];
    EXPECT_EQ(LatencyQuantile(one, 0.5), d);
  }
  for (int64_t d = 0; d < 70'000; d += 7) {
    LatencyCounts one{};
    ++one[LatencyBin(d)];
    const double got = static_cast<double>(*LatencyQuantile(one, 0.99) + 1);
    const double want = static_cast<double>(d + 1);
    // Whole milliseconds at a bin's edge add a little to the factor; 2 ms for the small.
    if (d < 46340 && std::abs(got - want) > 2) {
      EXPECT_NEAR(std::log2(got / want), 0, 0.26) << d;
    }
  }
  // 90 in bin 2 (1 ms), 9 in bin 13 (90-126 ms), 1 in bin 20 (1023-1447 ms).
  LatencyCounts mix{};
  mix[2] = 90;
  mix[13] = 9;
  mix[20] = 1;
  EXPECT_EQ(LatencyQuantile(mix, 0.5), 1);
  EXPECT_EQ(LatencyQuantile(mix, 0.9), 1);
  EXPECT_EQ(LatencyQuantile(mix, 0.91), 107);
  EXPECT_EQ(LatencyQuantile(mix, 0.95), 107);
  EXPECT_EQ(LatencyQuantile(mix, 1.0), 1217);
  // The rank is rounded up: the median of three is the second.
  LatencyCounts three{};
  three[2] = three[13] = three[20] = 1;
  EXPECT_EQ(LatencyQuantile(three, 0.5), 107);
  EXPECT_EQ(LatencyQuantile(three, 0.34), 107);
  EXPECT_EQ(LatencyQuantile(three, 0.33), 1);
}

TEST(DestinationStatsTest, StepsWindowsAndTheirBuckets) {
  EXPECT_EQ(ParseStatsStep("1m"), Duration(1min));
  EXPECT_EQ(ParseStatsStep("5m"), Duration(5min));
  EXPECT_EQ(ParseStatsStep("1h"), Duration(1h));
  EXPECT_EQ(ParseStatsStep("1d"), Duration(24h));
  for (const char* bad : {"", "7m", "1M", "60s", "1 m", "1w", "2h"}) {
    EXPECT_EQ(ParseStatsStep(bad), std::nullopt) << bad;
  }
  // Buckets count from the epoch: a day's from midnight UTC.
  EXPECT_EQ(StatsBucketStart(At(86400 * 3 + 5000), 24h), At(86400 * 3));
  EXPECT_EQ(StatsBucketStart(At(650), 5min), At(600));
  EXPECT_EQ(StatsBucketStart(At(-30), 1min), At(-60));
  EXPECT_EQ(StatsBucketCount(At(0), At(3600), 1min), 60);
  EXPECT_EQ(StatsBucketCount(At(30), At(3601), 1min), 61);
  EXPECT_EQ(StatsBucketCount(At(120), At(120), 1min), 0);
  EXPECT_EQ(StatsBucketCount(At(100), At(100), 1min), 1);  // from the minute's start
  // The default is the smallest step that fits in 1,000 buckets.
  EXPECT_EQ(DefaultStatsStep(At(0), At(3600)), Duration(1min));
  EXPECT_EQ(DefaultStatsStep(At(0), At(86400)), Duration(5min));
  EXPECT_EQ(DefaultStatsStep(At(0), At(86400 * 30)), Duration(1h));
  EXPECT_EQ(DefaultStatsStep(At(0), At(86400 * 365)), Duration(24h));
  EXPECT_EQ(DefaultStatsStep(At(0), At(86400 * 5000)), Duration(24h));
}

TEST(DestinationStatsTest, WholeHoursFromAWholeHourAreReadFromTheHours) {
  EXPECT_TRUE(UsesHourRollups({At(3600 * 5), At(3600 * 9), 1h}));
  EXPECT_TRUE(UsesHourRollups({At(86400), At(86400 * 2 + 1234), 24h}));  // until mid-hour
  EXPECT_FALSE(UsesHourRollups({At(3600 * 5), At(3600 * 9), 5min}));
  EXPECT_FALSE(UsesHourRollups({At(3600 * 5), At(3600 * 9), 1min}));
  EXPECT_FALSE(UsesHourRollups({At(3600 * 5 + 60), At(3600 * 9), 1h}));  // since mid-hour
  EXPECT_FALSE(UsesHourRollups({At(3600 * 5), At(3600 * 9), 90min}));
}

}  // namespace
}  // namespace webhookd::destination_stats_test
