#include "base/encoding.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace webhookd::encoding_test {
namespace {

TEST(EncodingTest, Base64EncodesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode(std::string("\xfb\xff", 2)), "+/8=");
}

TEST(EncodingTest, Base64DecodeStripsPadding) {
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode("Zg=="), "f");
  EXPECT_EQ(Base64Decode("Zm8="), "fo");
  EXPECT_EQ(Base64Decode("Zm9v"), "foo");
  EXPECT_EQ(Base64Decode("Zm9vYg=="), "foob");
  EXPECT_EQ(Base64Decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(Base64Decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(Base64Decode("+/8="), std::string("\xfb\xff", 2));
  EXPECT_EQ(Base64Decode("AAAA"), std::string(3, '\0'));
}

TEST(EncodingTest, Base64RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t n = 0; n <= all.size(); n += 37) {
    EXPECT_EQ(Base64Decode(Base64Encode(all.substr(0, n))), all.substr(0, n)) << n;
  }
}

TEST(EncodingTest, Base64DecodeRefusesBadInput) {
  for (const char* bad : {"Z", "Zg", "Zg=", "Zm9", "Zg===", "====", "Z===", "Zg=a",
                          "Z=g=", "=Zg=", "Zm9v!A==", "Zm9v YQ==", " Zm9v", "Zm9v\n", "Zm-_",
                          "Zm9vYg==Zm9v", "Zm9v====", "Zm\x80v"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

TEST(EncodingTest, HexAndSha256) {
  EXPECT_EQ(HexEncode(std::string("\x00\x01\xab\xff", 4)), "0001abff");
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(Sha256("abc").size(), 32u);
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(EncodingTest, ValidUtf8) {
  for (const char* good : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                           "\xed\x9f\xbf", "\xee\x80\x80", "\xf4\x8f\xbf\xbf", "\x7f"}) {
    EXPECT_TRUE(IsValidUtf8(good)) << good;
  }
  for (const char* bad : {"\x80", "\xc3", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80",
                          "\xed\xbf\xbf", "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80",
                          "\xf5\x80\x80\x80", "\xff", "a\xe2\x82", "\xe2\x28\xa1"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

TEST(EncodingTest, SanitizeReplacesBadBytesAndNul) {
  EXPECT_EQ(SanitizeUtf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(SanitizeUtf8("a\xff"
                         "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(SanitizeUtf8(std::string("a\0b", 3)),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(SanitizeUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xc3\x28\xe2\x82\xf0\x9f\x98")));
}

TEST(EncodingTest, JsonQuoteEscapesWhatJsonRequires) {
  EXPECT_EQ(JsonQuote("plain"), "\"plain\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonQuote(std::string("\n\t\x01\0", 4)), R"("\n\t\u0001\u0000")");
  EXPECT_EQ(JsonQuote("é"), "\"é\"");
  const std::string tricky = "q\"\\/\b\f\n\r\t\x1f end";
  EXPECT_EQ(nlohmann::json::parse(JsonQuote(tricky)).get<std::string>(), tricky);
}

TEST(EncodingTest, JsonQuoteReplacesInvalidUtf8SoTheResultIsJson) {
  EXPECT_EQ(JsonQuote("a\xff"), "\"a\xef\xbf\xbd\"");
}

}  // namespace
}  // namespace webhookd::encoding_test
