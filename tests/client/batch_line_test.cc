#include "client/batch_line.h"

#include <gtest/gtest.h>

namespace webhookd::client::batch_line_test {
namespace {

TEST(BatchLineTest, ReadsEveryFieldAndKeepsThePayloadBytes) {
  auto event = ParseBatchLine(
      R"({"payload":{ "n" : 1.10, "big": 123456789012345678901234567890 }, "type":"order.paid",)"
      R"( "tenant_id":"acme","destination_id":"dst_3","idempotency_key":"order-1-paid",)"
      R"( "ordering_key":"order-1"})");
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(event->type, "order.paid");
  EXPECT_EQ(event->payload, R"({ "n" : 1.10, "big": 123456789012345678901234567890 })");
  EXPECT_EQ(event->tenant_id, "acme");
  EXPECT_EQ(event->destination_id, "dst_3");
  EXPECT_EQ(event->idempotency_key, "order-1-paid");
  EXPECT_EQ(event->ordering_key, "order-1");
}

TEST(BatchLineTest, SubjectsAreAnArrayOfStrings) {
  auto event = ParseBatchLine(R"({"type":"a","payload":{},"subjects":["user:42","order:7"]})");
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(event->subjects, (std::vector<std::string>{"user:42", "order:7"}));
  EXPECT_TRUE(ParseBatchLine(R"({"type":"a","payload":{},"subjects":null})")->subjects.empty());
  EXPECT_FALSE(ParseBatchLine(R"({"type":"a","payload":{},"subjects":"user:42"})"));
  EXPECT_FALSE(ParseBatchLine(R"({"type":"a","payload":{},"subjects":[42]})"));
}

TEST(BatchLineTest, OptionalFieldsMayBeAbsentOrNull) {
  auto event = ParseBatchLine(R"({"type":"a","payload":{},"tenant_id":null})");
  ASSERT_TRUE(event) << event.error().message;
  EXPECT_EQ(event->payload, "{}");
  EXPECT_FALSE(event->tenant_id);
  EXPECT_FALSE(event->destination_id);
  EXPECT_FALSE(event->idempotency_key);
}

TEST(BatchLineTest, DecodesEscapesInStrings) {
  auto event = ParseBatchLine(R"({"type":"a\u002eb","payload":{"s":"\u00e9"}})");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->type, "a.b");
  EXPECT_EQ(event->payload, R"({"s":"\u00e9"})");  // the payload stays as written
}

TEST(BatchLineTest, SaysWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1]", "not a JSON object"},
      {R"({"type":"a","payload":{})", "not a JSON object"},
      {R"({"payload":{}})", "\"type\" is required"},
      {R"({"type":1,"payload":{}})", "\"type\" must be a string"},
      {R"({"type":"a"})", "\"payload\" is required"},
      {R"({"type":"a","payload":[1]})", "\"payload\" must be a JSON object"},
      {R"({"type":"a","payload":"{}"})", "\"payload\" must be a JSON object"},
      {R"({"type":"a","payload":{},"tenant_id":7})", "\"tenant_id\" must be a string"},
      {R"({"type":"a","payload":{},"tenant":"acme"})", "unknown member \"tenant\""},
  };
  for (const auto& [line, message] : cases) {
    auto event = ParseBatchLine(line);
    ASSERT_FALSE(event) << line;
    EXPECT_EQ(event.error().kind, ErrorKind::kInvalid);
    EXPECT_EQ(event.error().message, message) << line;
  }
}

}  // namespace
}  // namespace webhookd::client::batch_line_test
