#include "client/event.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace webhookd::client {
namespace {

TEST(EventTest, BodyHasOnlyTheFieldsGiven) {
  EXPECT_EQ(EventBody({"a.b", "{}", {}, {}, {}}), R"({"type":"a.b","payload":{}})");
  EXPECT_EQ(EventBody({"a.b", "{\"x\" : [1, 2]}", "acme", {}, "key"}),
            R"({"type":"a.b","payload":{"x" : [1, 2]},"tenant_id":"acme"})");
  EXPECT_EQ(EventBody({"a.b", "{}", {}, "dst_1", {}}),
            R"({"type":"a.b","payload":{},"destination_id":"dst_1"})");
}

TEST(EventTest, QuotesWhatJsonRequires) {
  EXPECT_EQ(JsonQuote("plain"), "\"plain\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonQuote(std::string("\n\t\x01\0", 4)), R"("\n\t\u0001\u0000")");
  EXPECT_EQ(JsonQuote("é"), "\"é\"");
  const std::string tricky = "q\"\\/\b\f\n\r\t\x1f end";
  EXPECT_EQ(nlohmann::json::parse(JsonQuote(tricky)).get<std::string>(), tricky);
}

}  // namespace
}  // namespace webhookd::client
