#include "core/validation.h"

#include <gtest/gtest.h>

#include <string>

namespace webhookd::validation_test {
namespace {

TEST(ValidationTest, EventTypesAreOneTo255TypeCharacters) {
  EXPECT_TRUE(IsValidEventType("order.created"));
  EXPECT_TRUE(IsValidEventType("a"));
  EXPECT_TRUE(IsValidEventType("A-Z_a:z.0-9"));
  EXPECT_TRUE(IsValidEventType(std::string(255, 'x')));
  EXPECT_FALSE(IsValidEventType(std::string(256, 'x')));
  for (const char* bad : {"", "order created", "order/created", "order.*", "é", "a\n"}) {
    EXPECT_FALSE(IsValidEventType(bad)) << bad;
  }
}

TEST(ValidationTest, TenantIdsAreOneTo128TypeCharacters) {
  EXPECT_TRUE(IsValidTenantId("acme"));
  EXPECT_TRUE(IsValidTenantId(std::string(128, 't')));
  EXPECT_FALSE(IsValidTenantId(std::string(129, 't')));
  EXPECT_FALSE(IsValidTenantId(""));
  EXPECT_FALSE(IsValidTenantId("acme corp"));
}

TEST(ValidationTest, WebhookdTypesAreReserved) {
  EXPECT_TRUE(IsReservedEventType("webhookd.destination.disabled"));
  EXPECT_FALSE(IsReservedEventType("webhookd"));
  EXPECT_FALSE(IsReservedEventType("webhooks.x"));
}

TEST(ValidationTest, PatternsAreATypeOrAPrefixStar) {
  EXPECT_TRUE(IsValidEventTypePattern("order.created"));
  EXPECT_TRUE(IsValidEventTypePattern("order.*"));
  EXPECT_TRUE(IsValidEventTypePattern("a.b.*"));
  for (const char* bad : {"*", ".*", "order*", "order.**", "*.created", "order.*.x", ""}) {
    EXPECT_FALSE(IsValidEventTypePattern(bad)) << bad;
  }
  EXPECT_FALSE(IsValidEventTypePattern(std::string(254, 'x') + ".*"));
}

TEST(ValidationTest, HeaderNamesAreTokensAndValuesHaveNoLineBreaks) {
  EXPECT_TRUE(IsValidHeaderName("X-Api-Version"));
  EXPECT_FALSE(IsValidHeaderName(""));
  EXPECT_FALSE(IsValidHeaderName("X Api"));
  EXPECT_FALSE(IsValidHeaderName("X:Api"));
  EXPECT_TRUE(IsValidHeaderValue("a value\twith tab"));
  EXPECT_TRUE(IsValidHeaderValue(""));
  EXPECT_FALSE(IsValidHeaderValue("a\r\nInjected: 1"));
  EXPECT_FALSE(IsValidHeaderValue(std::string("a\0b", 3)));
  EXPECT_FALSE(IsValidHeaderValue(std::string(4097, 'v')));
}

TEST(ValidationTest, HeadersWebhookdSetsAreReservedInAnyCase) {
  for (const char* name : {"webhook-id", "Webhook-Signature", "CONTENT-TYPE", "Host", "user-agent",
                           "Transfer-Encoding", "connection"}) {
    EXPECT_TRUE(IsReservedHeader(name)) << name;
  }
  EXPECT_FALSE(IsReservedHeader("webhook"));
  EXPECT_FALSE(IsReservedHeader("x-webhook-id"));
}

TEST(ValidationTest, IdempotencyKeysAreVisibleAscii) {
  EXPECT_TRUE(IsValidIdempotencyKey("order-123-created"));
  EXPECT_TRUE(IsValidIdempotencyKey(std::string(255, 'k')));
  EXPECT_FALSE(IsValidIdempotencyKey(std::string(256, 'k')));
  EXPECT_FALSE(IsValidIdempotencyKey(""));
  EXPECT_FALSE(IsValidIdempotencyKey("has space"));
  EXPECT_FALSE(IsValidIdempotencyKey("tab\t"));
}

TEST(ValidationTest, JsonDepthSkipsStringsAndStopsPastTheLimit) {
  EXPECT_EQ(JsonDepth("{}", 64), 1);
  EXPECT_EQ(JsonDepth(R"({"a":[{"b":1}]})", 64), 3);
  EXPECT_EQ(JsonDepth(R"({"a":"[[[[{{{{"})", 64), 1);
  EXPECT_EQ(JsonDepth(R"({"a":"\"[[["})", 64), 1);
  EXPECT_EQ(JsonDepth("42", 64), 0);
  const std::string deep(1000, '[');
  EXPECT_EQ(JsonDepth(deep, 64), 65);  // stops counting just past the limit
}

}  // namespace
}  // namespace webhookd::validation_test
