#include "client/event.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace webhookd::client::event_test {
namespace {

TEST(EventTest, BodyHasOnlyTheFieldsGiven) {
  EXPECT_EQ(EventBody({"a.b", "{}", {}, {}, {}}), R"({"type":"a.b","payload":{}})");
  EXPECT_EQ(EventBody({"a.b", "{\"x\" : [1, 2]}", "acme", {}, "key"}),
            R"({"type":"a.b","payload":{"x" : [1, 2]},"tenant_id":"acme"})");
  EXPECT_EQ(EventBody({"a.b", "{}", {}, "dst_1", {}}),
            R"({"type":"a.b","payload":{},"destination_id":"dst_1"})");
  EXPECT_EQ(EventBody({"a.b", "{}", {}, {}, {}, "order-\"42\""}),
            R"({"type":"a.b","payload":{},"ordering_key":"order-\"42\""})");
  Event with_subjects{"a.b", "{}", {}, {}, {}};
  with_subjects.subjects = {"user:42", "email:\"ann\""};
  EXPECT_EQ(EventBody(with_subjects),
            R"({"type":"a.b","payload":{},"subjects":["user:42","email:\"ann\""]})");
}
}  // namespace
}  // namespace webhookd::client::event_test
