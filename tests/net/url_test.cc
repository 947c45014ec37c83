#include "net/url.h"

#include <gtest/gtest.h>

namespace webhookd::url_test {
namespace {

struct Good {
  const char* text;
  const char* scheme;
  const char* host;
  int port;
  const char* target;
};

TEST(UrlTest, ParsesGoodUrls) {
  const Good rows[] = {
      {"https://example.com/hook", "https", "example.com", 443, "/hook"},
      {"http://example.com", "http", "example.com", 80, "/"},
      {"HTTPS://Example.COM/Path/Keeps/Case", "https", "example.com", 443, "/Path/Keeps/Case"},
      {"http://example.com:8080/a?b=c&d=e", "http", "example.com", 8080, "/a?b=c&d=e"},
      {"https://example.com?x=1", "https", "example.com", 443, "/?x=1"},
      {"https://example.com/a#fragment", "https", "example.com", 443, "/a"},
      {"https://example.com#frag", "https", "example.com", 443, "/"},
      {"http://[::1]:9000/x", "http", "::1", 9000, "/x"},
      {"https://[2606:4700::1111]/", "https", "2606:4700::1111", 443, "/"},
      {"http://127.0.0.1:65535/", "http", "127.0.0.1", 65535, "/"},
      {"http://my_host.internal-1.example:1/%20", "http", "my_host.internal-1.example", 1, "/%20"},
  };
  for (const Good& row : rows) {
    const Result<Url> url = ParseUrl(row.text);
    ASSERT_TRUE(url.has_value()) << row.text << ": " << url.error().message;
    EXPECT_EQ(url->scheme, row.scheme) << row.text;
    EXPECT_EQ(url->host, row.host) << row.text;
    EXPECT_EQ(url->port, row.port) << row.text;
    EXPECT_EQ(url->target, row.target) << row.text;
  }
}

TEST(UrlTest, RefusesBadUrls) {
  const std::string too_long = "https://example.com/" + std::string(2048, 'a');
  const std::string bad[] = {
      "",
      "example.com/hook",
      "ftp://example.com/",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "https:example.com",
      "https:/example.com",
      "https://",
      "https:///path",
      "https://:443/",
      "https://user@example.com/",
      "https://user:pass@example.com/",
      "https://evil.com\\@good.com/",
      "https://exa mple.com/",
      "https://example.com/a b",
      "https://example.com/\n",
      "https://example.com/\t",
      "https://example.com/\x7f",
      "https://ex\xc3\xa4mple.com/",
      "https://example.com/\xc3\xa4",
      "https://example.com:0/",
      "https://example.com:65536/",
      "https://example.com:80a/",
      "https://example.com:-1/",
      "https://example.com:/",
      "https://example.com:99999999999/",
      "https://[::1/",
      "https://[::1]x/",
      "https://[not-v6]/",
      "https://[fe80::1%25eth0]/",
      "https://::1/",
      "https://exa%6dple.com/",
      too_long,
  };
  for (const std::string& text : bad) {
    const Result<Url> url = ParseUrl(text);
    ASSERT_FALSE(url.has_value()) << text;
    EXPECT_EQ(url.error().kind, ErrorKind::kInvalid) << text;
    EXPECT_FALSE(url.error().message.empty()) << text;
  }
}

TEST(UrlTest, LengthLimitIsInclusive) {
  const std::string prefix = "https://example.com/";
  EXPECT_TRUE(ParseUrl(prefix + std::string(kMaxUrlLength - prefix.size(), 'a')).has_value());
  EXPECT_FALSE(ParseUrl(prefix + std::string(kMaxUrlLength - prefix.size() + 1, 'a')).has_value());
}

}  // namespace
}  // namespace webhookd::url_test
