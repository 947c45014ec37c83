#include <gtest/gtest.h>

#include <map>

#include "net/resolver.h"

namespace webhookd::address_test {
namespace {

struct Row {
  const char* literal;
  const char* canonical;  // as ToString() spells it
  bool is_public;
};

TEST(AddressTest, ClassifiesEveryRangeAndSpelling) {
  const Row rows[] = {
      // IPv4 non-public ranges.
      {"0.0.0.0", "0.0.0.0", false},
      {"0.255.255.255", "0.255.255.255", false},
      {"10.0.0.1", "10.0.0.1", false},
      {"10.255.255.255", "10.255.255.255", false},
      {"100.64.0.1", "100.64.0.1", false},
      {"100.127.255.254", "100.127.255.254", false},
      {"127.0.0.1", "127.0.0.1", false},
      {"127.255.255.254", "127.255.255.254", false},
      {"169.254.169.254", "169.254.169.254", false},
      {"172.16.0.1", "172.16.0.1", false},
      {"172.31.255.255", "172.31.255.255", false},
      {"192.0.0.8", "192.0.0.8", false},
      {"192.0.2.1", "192.0.2.1", false},
      {"192.88.99.1", "192.88.99.1", false},
      {"192.168.1.1", "192.168.1.1", false},
      {"198.18.0.1", "198.18.0.1", false},
      {"198.19.255.255", "198.19.255.255", false},
      {"198.51.100.7", "198.51.100.7", false},
      {"203.0.113.7", "203.0.113.7", false},
      {"224.0.0.1", "224.0.0.1", false},
      {"239.255.255.250", "239.255.255.250", false},
      {"240.0.0.1", "240.0.0.1", false},
      {"255.255.255.255", "255.255.255.255", false},
      // Neighbours of those ranges that are public.
      {"100.63.255.255", "100.63.255.255", true},
      {"100.128.0.0", "100.128.0.0", true},
      {"172.15.255.255", "172.15.255.255", true},
      {"172.32.0.0", "172.32.0.0", true},
      {"198.17.255.255", "198.17.255.255", true},
      {"198.20.0.0", "198.20.0.0", true},
      {"192.0.1.1", "192.0.1.1", true},
      {"223.255.255.255", "223.255.255.255", true},
      {"11.0.0.1", "11.0.0.1", true},
      // Odd spellings of loopback and private addresses.
      {"2130706433", "127.0.0.1", false},
      {"0x7f000001", "127.0.0.1", false},
      {"0x7f.1", "127.0.0.1", false},
      {"127.1", "127.0.0.1", false},
      {"0177.0.0.1", "127.0.0.1", false},
      {"0x7F.0.0.1", "127.0.0.1", false},
      {"10.1", "10.0.0.1", false},
      {"192.168.257", "192.168.1.1", false},
      {"0", "0.0.0.0", false},
      {"3232235777", "192.168.1.1", false},
      {"017700000001", "127.0.0.1", false},
      // IPv6.
      {"::", "::", false},
      {"::1", "::1", false},
      {"[::1]", "::1", false},
      {"fc00::1", "fc00::1", false},
      {"fd12:3456::1", "fd12:3456::1", false},
      {"fe80::1", "fe80::1", false},
      {"febf::1", "febf::1", false},
      {"ff02::1", "ff02::1", false},
      {"2001:db8::1", "2001:db8::1", false},
      {"64:ff9b::7f00:1", "64:ff9b::7f00:1", false},
      {"64:ff9b::808:808", "64:ff9b::808:808", false},
      {"64:ff9b:1::1", "64:ff9b:1::1", false},
      {"2002:7f00:1::1", "2002:7f00:1::1", false},
      {"::ffff:127.0.0.1", "::ffff:127.0.0.1", false},
      {"::ffff:7f00:1", "::ffff:127.0.0.1", false},
      {"[::ffff:10.0.0.1]", "::ffff:10.0.0.1", false},
      {"::ffff:169.254.169.254", "::ffff:169.254.169.254", false},
      {"::127.0.0.1", "::127.0.0.1", false},
      {"::8.8.8.8", "::8.8.8.8", false},
      // Public.
      {"8.8.8.8", "8.8.8.8", true},
      {"1.1.1.1", "1.1.1.1", true},
      {"93.184.216.34", "93.184.216.34", true},
      {"0x08080808", "8.8.8.8", true},
      {"2606:4700::1111", "2606:4700::1111", true},
      {"[2606:4700:4700::1111]", "2606:4700:4700::1111", true},
      {"2a00:1450:4001:80b::200e", "2a00:1450:4001:80b::200e", true},
      {"::ffff:8.8.8.8", "::ffff:8.8.8.8", true},
  };
  for (const Row& row : rows) {
    const std::optional<IpAddress> address = ParseIpLiteral(row.literal);
    ASSERT_TRUE(address.has_value()) << row.literal;
    EXPECT_EQ(address->ToString(), row.canonical) << row.literal;
    EXPECT_EQ(IsPublicAddress(*address), row.is_public) << row.literal;
  }
}

TEST(AddressTest, NamesAndMalformedLiteralsAreNotLiterals) {
  for (const char* text : {"",
                           "example.com",
                           "1.2.3.4.example.com",
                           "localhost",
                           "1.2.3.4.5",
                           "256.0.0.1",
                           "1.2.3.256",
                           "1.2.65536",
                           "1.16777216",
                           "4294967296",
                           "0x100000000",
                           "08.0.0.1",
                           "0xg.0.0.1",
                           "1..2.3",
                           "1.2.3.",
                           ".1.2.3",
                           "1.2.3.4 ",
                           " 1.2.3.4",
                           "-1.2.3.4",
                           "+1",
                           "[1.2.3.4]",
                           "[::1",
                           "::1]",
                           "::g",
                           "1:2:3:4:5:6:7:8:9",
                           "fe80::1%eth0",
                           "[fe80::1%25eth0]",
                           "99999999999999999999"}) {
    EXPECT_FALSE(ParseIpLiteral(text).has_value()) << text;
  }
}

TEST(AddressTest, FactoriesAndEquality) {
  EXPECT_EQ(IpAddress::V4(0x7f000001).ToString(), "127.0.0.1");
  EXPECT_EQ(IpAddress::V4(0x7f000001), ParseIpLiteral("127.0.0.1").value());
  EXPECT_FALSE(IpAddress::V4(0x7f000001) == ParseIpLiteral("::ffff:127.0.0.1").value());
}

// A scripted DNS.
class FakeResolver final : public Resolver {
 public:
  explicit FakeResolver(std::map<std::string, std::vector<std::string>> answers)
      : answers_(std::move(answers)) {}
  Result<std::vector<IpAddress>> Resolve(const std::string& host) override {
    asked_.push_back(host);
    const auto it = answers_.find(host);
    if (it == answers_.end()) return Fail(ErrorKind::kInvalid, "NXDOMAIN");
    std::vector<IpAddress> addresses;
    for (const std::string& a : it->second) addresses.push_back(ParseIpLiteral(a).value());
    return addresses;
  }
  const std::vector<std::string>& asked() const { return asked_; }

 private:
  std::map<std::string, std::vector<std::string>> answers_;
  std::vector<std::string> asked_;
};

FakeResolver Dns() {
  return FakeResolver({
      {"example.com", {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"}},
      {"internal.corp", {"10.1.2.3"}},
      {"mixed.example", {"8.8.8.8", "192.168.0.10"}},
      {"metadata.example", {"169.254.169.254"}},
      {"v6loop.example", {"::1"}},
  });
}

TEST(VetHostTest, PublicNamesResolveToAllTheirAddresses) {
  FakeResolver dns = Dns();
  const Result<std::vector<IpAddress>> a = VetHost("example.com", dns, false);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->size(), 2u);
}

TEST(VetHostTest, PrivateAnswersAreForbiddenNamingTheAddress) {
  FakeResolver dns = Dns();
  for (const auto& [host, address] :
       std::vector<std::pair<std::string, std::string>>{{"internal.corp", "10.1.2.3"},
                                                        {"mixed.example", "192.168.0.10"},
                                                        {"metadata.example", "169.254.169.254"},
                                                        {"v6loop.example", "::1"}}) {
    const Result<std::vector<IpAddress>> a = VetHost(host, dns, false);
    ASSERT_FALSE(a.has_value()) << host;
    EXPECT_EQ(a.error().kind, ErrorKind::kForbidden) << host;
    EXPECT_NE(a.error().message.find(address), std::string::npos) << a.error().message;
  }
}

TEST(VetHostTest, AllowPrivateReturnsEverything) {
  FakeResolver dns = Dns();
  const Result<std::vector<IpAddress>> a = VetHost("mixed.example", dns, true);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->size(), 2u);
  // Allowed, localhost is a name like any other: it is asked of the resolver.
  EXPECT_EQ(VetHost("localhost", dns, true).error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(dns.asked().back(), "localhost");
  EXPECT_EQ(VetHost("127.0.0.1", dns, true).value(),
            std::vector<IpAddress>{IpAddress::V4(0x7f000001)});
}

TEST(VetHostTest, LiteralsAreCheckedWithoutDns) {
  FakeResolver dns = Dns();
  for (const char* host : {"127.0.0.1", "2130706433", "[::1]", "::ffff:7f00:1", "0x7f.1", "10.1"}) {
    const Result<std::vector<IpAddress>> a = VetHost(host, dns, false);
    ASSERT_FALSE(a.has_value()) << host;
    EXPECT_EQ(a.error().kind, ErrorKind::kForbidden) << host;
  }
  EXPECT_EQ(VetHost("8.8.8.8", dns, false).value(),
            std::vector<IpAddress>{IpAddress::V4(0x08080808)});
  EXPECT_TRUE(dns.asked().empty());
}

TEST(VetHostTest, LocalhostNamesAreRefusedWithoutDns) {
  FakeResolver dns = Dns();
  for (const char* host :
       {"localhost", "LOCALHOST", "localhost.", "api.localhost", "a.b.localhost."}) {
    const Result<std::vector<IpAddress>> a = VetHost(host, dns, false);
    ASSERT_FALSE(a.has_value()) << host;
    EXPECT_EQ(a.error().kind, ErrorKind::kForbidden) << host;
  }
  EXPECT_TRUE(dns.asked().empty());
}

// A name that does not resolve was told apart from one resolving to a private address
// ("host does not resolve" beside "not allowed"): a map of which internal names exist.
TEST(VetHostTest, WithoutPrivateAddressesANameThatDoesNotResolveIsRefusedLikeOne) {
  FakeResolver dns = Dns();
  const Result<std::vector<IpAddress>> a = VetHost("nxdomain.example", dns, false);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().kind, ErrorKind::kForbidden);
  EXPECT_EQ(VetHost("internal.corp", dns, false).error().kind, ErrorKind::kForbidden);
}

TEST(VetHostTest, UnresolvableAndMalformedHostsAreInvalid) {
  FakeResolver dns = Dns();
  for (const char* host : {"", "fe80::1%eth0", "[::1", "a:b"}) {
    const Result<std::vector<IpAddress>> a = VetHost(host, dns, false);
    ASSERT_FALSE(a.has_value()) << host;
    EXPECT_EQ(a.error().kind, ErrorKind::kInvalid) << host;
  }
  const Result<std::vector<IpAddress>> a = VetHost("nxdomain.example", dns, true);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().message, "host does not resolve");
}

TEST(SystemResolverTest, ResolvesLocalhostToLoopbackOnly) {
  SystemResolver resolver;
  const Result<std::vector<IpAddress>> a = resolver.Resolve("localhost");
  ASSERT_TRUE(a.has_value()) << a.error().message;
  ASSERT_FALSE(a->empty());
  for (const IpAddress& address : *a) EXPECT_FALSE(IsPublicAddress(address)) << address.ToString();
  for (size_t i = 0; i < a->size(); ++i) {
    for (size_t j = i + 1; j < a->size(); ++j) EXPECT_FALSE((*a)[i] == (*a)[j]);
  }
}

TEST(SystemResolverTest, NumericHostsNeedNoNetwork) {
  SystemResolver resolver;
  EXPECT_EQ(resolver.Resolve("127.0.0.1").value(),
            std::vector<IpAddress>{IpAddress::V4(0x7f000001)});
  EXPECT_FALSE(resolver.Resolve("no-such-host.invalid").has_value());
}

}  // namespace
}  // namespace webhookd::address_test
