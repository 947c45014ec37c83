#include "net/broker_url.h"

#include <gtest/gtest.h>

namespace webhookd::broker_url_test {
namespace {

TEST(BrokerUrlTest, EachSchemeItsTransportDefaultPortAndPath) {
  struct Row {
    const char* text;
    Transport transport;
    bool tls;
    const char* host;
    int port;
    const char* path;
  };
  const Row rows[] = {
      {"amqp://rabbit.example", Transport::kAmqp, false, "rabbit.example", 5672, "/"},
      {"AMQPS://Rabbit.Example:5000/orders", Transport::kAmqp, true, "rabbit.example", 5000,
       "orders"},
      {"nats://nats.example", Transport::kNats, false, "nats.example", 4222, ""},
      {"tls://nats.example:4333", Transport::kNats, true, "nats.example", 4333, ""},
      {"redis://[::1]:6380/3", Transport::kRedis, false, "::1", 6380, "3"},
      {"rediss://cache.example", Transport::kRedis, true, "cache.example", 6379, "0"},
      {"kafka://k1.example", Transport::kKafka, false, "k1.example", 9092, ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.text);
    auto url = ParseBrokerUrl(row.text);
    ASSERT_TRUE(url) << url.error().message;
    EXPECT_EQ(url->transport, row.transport);
    EXPECT_EQ(url->tls, row.tls);
    ASSERT_EQ(url->hosts.size(), 1u);
    EXPECT_EQ(url->hosts[0].host, row.host);
    EXPECT_EQ(url->hosts[0].port, row.port);
    EXPECT_EQ(url->path, row.path);
  }
  auto kafka = ParseBrokerUrl("kafka://k1.example:9093,k2.example");
  ASSERT_TRUE(kafka);
  ASSERT_EQ(kafka->hosts.size(), 2u);
  EXPECT_EQ(kafka->hosts[1].port, 9092);
}

TEST(BrokerUrlTest, RefusesWhatIsNotABrokerUrlWithAReason) {
  const std::pair<const char*, const char*> rows[] = {
      {"https://example.com", "URL scheme must be"},
      {"ftp://example.com", "URL scheme must be"},
      {"redis://user:pw@cache.example", "user-info"},
      {"redis://cache.example/16", "database number"},
      {"redis://cache.example/x", "database number"},
      {"nats://a.example,b.example", "only a kafka URL"},
      {"nats://a.example/x", "takes no path"},
      {"amqp://rabbit.example/?heartbeat=5", "no query"},
      {"redis://", "no host"},
      {"redis://cache.example:0", "port"},
      {"redis:cache.example", "absolute"},
  };
  for (const auto& [text, reason] : rows) {
    SCOPED_TRACE(text);
    auto url = ParseBrokerUrl(text);
    ASSERT_FALSE(url);
    EXPECT_EQ(url.error().kind, ErrorKind::kInvalid);
    EXPECT_NE(url.error().message.find(reason), std::string::npos) << url.error().message;
  }
}

TEST(BrokerUrlTest, TransportsByScheme) {
  EXPECT_EQ(TransportOfScheme("https"), Transport::kHttp);
  EXPECT_EQ(TransportOfScheme("rediss"), Transport::kRedis);
  EXPECT_EQ(TransportOfScheme("mqtt"), std::nullopt);
  EXPECT_EQ(TransportName(Transport::kKafka), "kafka");
}

TEST(BrokerUrlTest, AStoredUrlsTransportIsItsSchemesAndHttpForAnyOther) {
  EXPECT_EQ(TransportOfUrl("KAFKA://a.example:9092"), Transport::kKafka);
  EXPECT_EQ(TransportOfUrl("amqp://rabbit.example/orders"), Transport::kAmqp);
  EXPECT_EQ(TransportOfUrl("https://hooks.example"), Transport::kHttp);
  EXPECT_EQ(TransportOfUrl("gopher://x"), Transport::kHttp);
  EXPECT_EQ(TransportOfUrl("no scheme"), Transport::kHttp);
}

TEST(BrokerUrlTest, ADestinationsAddressIsItsSchemeAndEveryHostWhateverItsTransport) {
  auto http = ParseDestinationAddress("HTTPS://Hooks.Example/in?x=1");
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(*http, (DestinationAddress{Transport::kHttp, "https", {{"hooks.example", 443}}}));
  auto kafka = ParseDestinationAddress("kafka://k1.example,k2.example:9093");
  ASSERT_TRUE(kafka) << kafka.error().message;
  EXPECT_EQ(*kafka, (DestinationAddress{
                        Transport::kKafka, "kafka", {{"k1.example", 9092}, {"k2.example", 9093}}}));
  // Two databases of one Redis are one address.
  EXPECT_EQ(*ParseDestinationAddress("redis://cache.example/1"),
            *ParseDestinationAddress("redis://cache.example:6379/2"));
  // Each parser's own reason; a scheme of neither names them all.
  EXPECT_NE(ParseDestinationAddress("https://user@x.example").error().message.find("user-info"),
            std::string::npos);
  EXPECT_NE(ParseDestinationAddress("redis://x.example/99").error().message.find("database"),
            std::string::npos);
  EXPECT_NE(ParseDestinationAddress("ftp://x.example").error().message.find("kafka"),
            std::string::npos);
}

}  // namespace
}  // namespace webhookd::broker_url_test
