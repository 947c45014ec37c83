#include "server/carried_credentials.h"

#include <gtest/gtest.h>

namespace webhookd::carried_credentials_test {
namespace {

std::vector<std::string> Fields(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.field);
  return out;
}

// A destination holding every kind of write-only value.
Destination Stored() {
  Destination d;
  d.url = "https://hooks.example.com/in";
  d.headers = {{"Authorization", "Bearer abc"}, {"X-Tenant", "acme"}};
  d.tls = DestinationTls{"-----BEGIN CERTIFICATE-----", "-----BEGIN PRIVATE KEY-----", {}};
  d.auth = DestinationAuth{"https://auth.example.com/token", "client", "secret", {}};
  return d;
}

using Strings = std::vector<std::string>;

TEST(CarriedCredentialsTest, AUrlToAnotherOriginNamesEveryValueItWouldCarry) {
  for (const std::string url :
       {"https://evil.example.net/in", "http://hooks.example.com/in",
        "https://hooks.example.com:8443/in", "https://sub.hooks.example.com/in"}) {
    DestinationFields patch;
    patch.url = url;
    EXPECT_EQ(Fields(CarriedCredentials(Stored(), patch)),
              (Strings{"headers.Authorization", "headers.X-Tenant", "tls.client_key",
                       "auth.client_secret"}))
        << url;
  }
}

TEST(CarriedCredentialsTest, TheSameOriginMayTakeAnyPath) {
  for (const std::string url :
       {"https://hooks.example.com/other?x=1", "https://HOOKS.example.com:443/in",
        "HTTPS://hooks.example.com", "https://hooks.example.com/in"}) {
    DestinationFields patch;
    patch.url = url;
    EXPECT_TRUE(CarriedCredentials(Stored(), patch).empty()) << url;
  }
  Destination plain = Stored();
  plain.url = "http://hooks.example.com/in";
  DestinationFields patch;
  patch.url = "http://hooks.example.com:80/moved";
  EXPECT_TRUE(CarriedCredentials(plain, patch).empty());
}

TEST(CarriedCredentialsTest, ValuesSentAgainOrRemovedMoveFreely) {
  DestinationFields patch;
  patch.url = "https://new.example.net/in";
  patch.headers = Headers{{"Authorization", "Bearer new"}};  // X-Tenant removed
  patch.tls = std::optional<DestinationTls>();               // no client certificate
  patch.auth = DestinationAuth{"https://auth.example.com/token", "client", "new", {}};
  EXPECT_TRUE(CarriedCredentials(Stored(), patch).empty());
}

TEST(CarriedCredentialsTest, SetKeepsAValueAndSoCarriesIt) {
  DestinationFields patch;
  patch.url = "https://new.example.net/in";
  patch.headers = Headers{{"Authorization", "set"}, {"X-Tenant", "acme-2"}};
  patch.tls = DestinationTls{"-----BEGIN CERTIFICATE-----", "set", {}};
  patch.auth = DestinationAuth{"https://auth.example.com/token", "client", "set", {}};
  EXPECT_EQ(Fields(CarriedCredentials(Stored(), patch)),
            (Strings{"headers.Authorization", "tls.client_key", "auth.client_secret"}));
  // A "set" under another spelling of the name keeps nothing (the statement matches
  // names exactly), so it carries nothing either.
  patch.headers = Headers{{"authorization", "set"}};
  EXPECT_EQ(Fields(CarriedCredentials(Stored(), patch)),
            (Strings{"tls.client_key", "auth.client_secret"}));
}

TEST(CarriedCredentialsTest, ANewTokenUrlNeedsTheClientSecretSentAgain) {
  DestinationFields patch;
  patch.auth = DestinationAuth{"https://evil.example.net/token", "client", "set", {}};
  EXPECT_EQ(Fields(CarriedCredentials(Stored(), patch)), Strings{"auth.client_secret"});
  patch.auth = DestinationAuth{"https://evil.example.net/token", "client", "secret-2", {}};
  EXPECT_TRUE(CarriedCredentials(Stored(), patch).empty());
  patch.auth = DestinationAuth{"https://auth.example.com/token", "client", "set", {}};
  EXPECT_TRUE(CarriedCredentials(Stored(), patch).empty());
}

TEST(CarriedCredentialsTest, NothingStoredNothingCarried) {
  Destination bare;
  bare.url = "https://hooks.example.com/in";
  DestinationFields patch;
  patch.url = "https://elsewhere.example.net/";
  EXPECT_TRUE(CarriedCredentials(bare, patch).empty());
}

TEST(CarriedCredentialsTest, ABrokersCredentialsStayWithItsBroker) {
  Destination d;
  d.url = "redis://cache.example:6379/0";
  d.broker = BrokerSettings{};
  d.broker->stream = "s";
  d.broker->username = "hooks";
  d.broker->password = "pw";
  DestinationFields patch;
  // Another database of the same server is the same broker.
  patch.url = "REDIS://cache.example/3";
  EXPECT_TRUE(CarriedCredentials(d, patch).empty());
  for (const std::string url : {"redis://evil.example", "redis://cache.example:6380",
                                "kafka://cache.example:6379", "https://cache.example"}) {
    patch.url = url;
    patch.broker.reset();
    EXPECT_EQ(Fields(CarriedCredentials(d, patch)), (Strings{"broker.username", "broker.password"}))
        << url;
    // "set" keeps; a value sent again or dropped does not.
    BrokerSettings given;
    given.username = std::string(kHiddenHeaderValue);
    given.password = "new";
    patch.broker = std::optional<BrokerSettings>(given);
    EXPECT_EQ(Fields(CarriedCredentials(d, patch)), Strings{"broker.username"}) << url;
    patch.broker = std::optional<BrokerSettings>();
    EXPECT_TRUE(CarriedCredentials(d, patch).empty()) << url;
  }
}

}  // namespace
}  // namespace webhookd::carried_credentials_test
