#include "server/inbound_request_log.h"

#include <gtest/gtest.h>

#include <chrono>

namespace webhookd::inbound_request_log_test {
namespace {

using Outcome = Metrics::InboundOutcome;

InboundRequestLog::Entry At(int64_t source, int second, Outcome outcome) {
  InboundRequestLog::Entry e;
  e.source_id = source;
  e.at = Timestamp{} + std::chrono::seconds(second);
  e.outcome = outcome;
  e.status = outcome == Outcome::kUnverified ? 401 : 200;
  return e;
}

TEST(InboundRequestLogTest, OneSourcesLatestNewestFirstUpToTheLimit) {
  InboundRequestLog log(100);
  log.Record(At(1, 1, Outcome::kAccepted));
  log.Record(At(2, 2, Outcome::kAccepted));
  log.Record(At(1, 3, Outcome::kDuplicate));
  log.Record(At(1, 4, Outcome::kUnverified));
  const auto latest = log.Latest(1, 2);
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[0].outcome, Outcome::kUnverified);
  EXPECT_EQ(latest[1].outcome, Outcome::kDuplicate);
  EXPECT_EQ(log.Latest(1, 10).size(), 3u);
  EXPECT_EQ(log.Latest(2, 10).size(), 1u);
  EXPECT_TRUE(log.Latest(3, 10).empty());
}

// A flood pushes the oldest out, whichever source it was for: the memory is the ring's.
TEST(InboundRequestLogTest, AFullRingDropsTheOldestAndKeepsTheOrder) {
  InboundRequestLog log(3);
  for (int s = 1; s <= 7; ++s) log.Record(At(1, s, Outcome::kAccepted));
  const auto latest = log.Latest(1, 10);
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0].at, Timestamp{} + std::chrono::seconds(7));
  EXPECT_EQ(latest[1].at, Timestamp{} + std::chrono::seconds(6));
  EXPECT_EQ(latest[2].at, Timestamp{} + std::chrono::seconds(5));
  log.Record(At(2, 8, Outcome::kUnverified));
  EXPECT_EQ(log.Latest(1, 10).size(), 2u);
  EXPECT_EQ(log.Latest(2, 10).size(), 1u);
}

}  // namespace
}  // namespace webhookd::inbound_request_log_test
