#include "server/broker_settings.h"

#include <gtest/gtest.h>

namespace webhookd::broker_settings_test {
namespace {

using Strings = std::vector<std::string>;

Strings Fields(const std::vector<FieldError>& errors) {
  Strings out;
  for (const auto& e : errors) out.push_back(e.field);
  return out;
}

// The fields ParseBrokerMember refuses in `value`, and what it kept.
Strings Refused(const Json& value, DestinationFields* out = nullptr) {
  DestinationFields fields;
  std::vector<FieldError> errors;
  ParseBrokerMember(value, fields, errors);
  if (out != nullptr) *out = fields;
  return Fields(errors);
}

DestinationAddress At(const std::string& url) { return *ParseDestinationAddress(url); }

TEST(BrokerSettingsTest, EachSettingHasItsOwnForm) {
  DestinationFields f;
  EXPECT_TRUE(Refused({{"exchange", ""},
                       {"routing_key", "order.created"},
                       {"subject", "webhooks.order.created"},
                       {"stream", "hooks"},
                       {"max_len", 1000},
                       {"topic", "orders_v1"},
                       {"username", "u"},
                       {"password", "p w"}},
                      &f)
                  .empty());
  ASSERT_TRUE(f.broker && *f.broker);
  EXPECT_EQ((*f.broker)->exchange, "");
  EXPECT_EQ((*f.broker)->max_len, 1000);
  EXPECT_EQ((*f.broker)->password, "p w");
  EXPECT_EQ(Refused({{"exchange", "a b"}}), Strings{"broker.exchange"});
  EXPECT_EQ(Refused({{"routing_key", ""}}), Strings{"broker.routing_key"});
  for (const char* subject : {"a.*", "a.>", "a..b", ".a", "a b"}) {
    EXPECT_EQ(Refused({{"subject", subject}}), Strings{"broker.subject"}) << subject;
  }
  EXPECT_EQ(Refused({{"stream", std::string(256, 's')}}), Strings{"broker.stream"});
  EXPECT_EQ(Refused({{"max_len", 0}}), Strings{"broker.max_len"});
  EXPECT_EQ(Refused({{"max_len", "10"}}), Strings{"broker.max_len"});
  EXPECT_EQ(Refused({{"topic", ".."}}), Strings{"broker.topic"});
  EXPECT_EQ(Refused({{"topic", std::string(250, 't')}}), Strings{"broker.topic"});
  EXPECT_EQ(Refused({{"password", ""}}), Strings{"broker.password"});
  EXPECT_EQ(Refused({{"queue", "q"}}), Strings{"broker.queue"});
  EXPECT_EQ(Refused(Json::array()), Strings{"broker"});
  // null: no settings.
  EXPECT_TRUE(Refused(nullptr, &f).empty());
  ASSERT_TRUE(f.broker.has_value());
  EXPECT_FALSE(f.broker->has_value());
}

TEST(BrokerSettingsTest, ASettingFitsItsTransportsUrlsOnly) {
  BrokerSettings redis;
  redis.stream = "s";
  redis.max_len = 10;
  EXPECT_TRUE(BrokerSettingsProblems(At("redis://c.example"), redis).empty());
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("kafka://c.example"), redis)),
            (Strings{"broker.stream", "broker.max_len", "broker.topic"}));
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("https://c.example"), redis)), Strings{"broker"});
  EXPECT_TRUE(BrokerSettingsProblems(At("https://c.example"), std::nullopt).empty());
  // AMQP and NATS have defaults for everything; Redis and Kafka need their target.
  EXPECT_TRUE(BrokerSettingsProblems(At("amqp://c.example"), std::nullopt).empty());
  EXPECT_TRUE(BrokerSettingsProblems(At("nats://c.example"), std::nullopt).empty());
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("redis://c.example"), std::nullopt)),
            Strings{"broker.stream"});
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("kafka://c.example"), BrokerSettings{})),
            Strings{"broker.topic"});
  BrokerSettings amqp;
  amqp.exchange = "x";
  amqp.subject = "s";
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("amqp://c.example"), amqp)),
            Strings{"broker.subject"});
  // A username alone authenticates no one.
  BrokerSettings user;
  user.username = "u";
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("nats://c.example"), user)),
            Strings{"broker.password"});
  EXPECT_EQ(Fields(BrokerSettingsProblems(At("rediss://c.example"), redis)), Strings{"url"});
}

TEST(BrokerSettingsTest, TheViewShowsCredentialsAsSet) {
  BrokerSettings b;
  b.topic = "t";
  b.username = "hooks";
  b.password = "pw";
  EXPECT_EQ(BrokerSettingsJson(b),
            (Json{{"topic", "t"}, {"username", "set"}, {"password", "set"}}));
  EXPECT_TRUE(BrokerSettingsJson(std::nullopt).is_null());
}

}  // namespace
}  // namespace webhookd::broker_settings_test
