#include "core/ids.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace webhookd::ids_test {
namespace {

TEST(IdsTest, FormatIsThePrefixAndTheKey) {
  EXPECT_EQ(FormatId(kEventPrefix, 42), "evt_42");
  EXPECT_EQ(FormatId(kDestinationPrefix, 1), "dst_1");
  EXPECT_EQ(FormatId(kDeliveryPrefix, std::numeric_limits<int64_t>::max()),
            "dlv_9223372036854775807");
}

TEST(IdsTest, ParseRoundTripsEveryKind) {
  for (auto prefix :
       {kDestinationPrefix, kEventPrefix, kDeliveryPrefix, kDeadLetterPrefix, kApiKeyPrefix}) {
    for (int64_t id : {int64_t{1}, int64_t{42}, std::numeric_limits<int64_t>::max()}) {
      EXPECT_EQ(ParseId(prefix, FormatId(prefix, id)), id) << prefix << id;
    }
  }
}

TEST(IdsTest, AnIdOfAnotherKindIsNotAnId) {
  EXPECT_EQ(ParseId(kEventPrefix, "dst_42"), std::nullopt);
  EXPECT_EQ(ParseId(kDeliveryPrefix, "dlq_42"), std::nullopt);
}

TEST(IdsTest, OnlyAPositiveDecimalWithoutLeadingZerosThatFits) {
  for (const char* bad :
       {"evt_", "evt_0", "evt_007", "evt_-1", "evt_+1", "evt_1a", "evt_ 1", "evt_1 ",
        "evt_9223372036854775808", "evt_99999999999999999999", "EVT_1", "evt1", "", "42"}) {
    EXPECT_EQ(ParseId(kEventPrefix, bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseId(kEventPrefix, "evt_10"), 10);
}

}  // namespace
}  // namespace webhookd::ids_test
