#include "core/json_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace webhookd::json_scan_test {
namespace {

using namespace std::string_literals;  // "...\0..."s keeps the NUL

constexpr int kDepth = 64;

struct Expected {
  std::string key;
  JsonKind kind;
  std::string raw;
};

std::string Describe(const std::vector<JsonMember>& members) {
  std::string out;
  for (const JsonMember& m : members) {
    out += "[" + m.key + "|" + std::to_string(static_cast<int>(m.kind)) + "|" + std::string(m.raw) +
           "]";
  }
  return out;
}

void ExpectMembers(std::string_view text, const std::vector<Expected>& expected) {
  SCOPED_TRACE(std::string(text.substr(0, 200)));
  const Result<std::vector<JsonMember>> members = ScanJsonObject(text, kDepth);
  ASSERT_TRUE(members.has_value()) << members.error().message;
  ASSERT_EQ(members->size(), expected.size()) << Describe(*members);
  for (size_t i = 0; i < expected.size(); ++i) {
    const JsonMember& m = (*members)[i];
    EXPECT_EQ(m.key, expected[i].key) << i;
    EXPECT_EQ(m.kind, expected[i].kind) << i;
    EXPECT_EQ(m.raw, expected[i].raw) << i;
    // A view into the caller's text, not a copy: what a caller stores is what was posted.
    EXPECT_GE(m.raw.data(), text.data()) << i;
    EXPECT_LE(m.raw.data() + m.raw.size(), text.data() + text.size()) << i;
  }
}

TEST(JsonScanTest, KeepsNumbersExactly) {
  ExpectMembers(
      R"({"n":12345678901234567890123,"m":-9223372036854775809,"u":18446744073709551616})",
      {{"n", JsonKind::kNumber, "12345678901234567890123"},
       {"m", JsonKind::kNumber, "-9223372036854775809"},
       {"u", JsonKind::kNumber, "18446744073709551616"}});
  ExpectMembers(
      R"({"z":-0,"big":1e400,"small":1.5E-7,"tenth":0.1000,"e":1E+2,"f":0e-0,"g":-0.0e00,"h":7})",
      {{"z", JsonKind::kNumber, "-0"},
       {"big", JsonKind::kNumber, "1e400"},
       {"small", JsonKind::kNumber, "1.5E-7"},
       {"tenth", JsonKind::kNumber, "0.1000"},
       {"e", JsonKind::kNumber, "1E+2"},
       {"f", JsonKind::kNumber, "0e-0"},
       {"g", JsonKind::kNumber, "-0.0e00"},
       {"h", JsonKind::kNumber, "7"}});
}

TEST(JsonScanTest, KeepsEveryEscapeInRawAndDecodesKeys) {
  ExpectMembers(
      R"({"s":"\" \\ \/ \b \f \n \r \t \u0000 \ud83d\ude00 \u00E9\u20ac"})",
      {{"s", JsonKind::kString, R"("\" \\ \/ \b \f \n \r \t \u0000 \ud83d\ude00 \u00E9\u20ac")"}});
  ExpectMembers(R"({"\" \\ \/ \b \f \n \r \t \u0000 \ud83d\ude00 \u00e9":1})",
                {{"\" \\ / \b \f \n \r \t \0 \xF0\x9F\x98\x80 \xC3\xA9"s, JsonKind::kNumber, "1"}});
}

TEST(JsonScanTest, DecodesEveryEscape) {
  const Result<std::string> decoded = DecodeJsonString(
      R"("\" \\ \/ \b \f \n \r \t \u0000 \ud83d\ude00 \u007f\u0080\u07FF\u0800\uFFFF\uDBFF\uDFFF")");
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
  EXPECT_EQ(*decoded,
            "\" \\ / \b \f \n \r \t \0 \xF0\x9F\x98\x80 "
            "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF4\x8F\xBF\xBF"s);
  EXPECT_EQ(DecodeJsonString(R"("")").value(), "");
  EXPECT_EQ(DecodeJsonString("\"caf\xC3\xA9\"").value(), "caf\xC3\xA9");
}

TEST(JsonScanTest, DecodeJsonStringRefusesWhatIsNotOneString) {
  for (std::string_view bad : {"", "abc", "\"abc", "\"a\"b", "\"\" ", " \"a\"", "'a'", "\"\\\"",
                               "\"\\ud800\"", "\"\\q\"", "\"\x01\"", "\"\xC3\""}) {
    const Result<std::string> decoded = DecodeJsonString(bad);
    ASSERT_FALSE(decoded.has_value()) << bad;
    EXPECT_EQ(decoded.error().kind, ErrorKind::kMalformed) << bad;
    EXPECT_TRUE(decoded.error().message.starts_with("invalid JSON string at byte "))
        << decoded.error().message;
  }
  EXPECT_EQ(DecodeJsonString("\"ab").error().message,
            "invalid JSON string at byte 3: unterminated string");
}

TEST(JsonScanTest, KeepsNonAsciiUtf8) {
  // 2-, 3- and 4-byte sequences, and the edges of each range RFC 3629 allows.
  const std::string text =
      "{\"caf\xC3\xA9\":\"\xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80\","
      "\"edges\":[\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF"
      "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\x7F\"]}";
  ExpectMembers(text,
                {{"caf\xC3\xA9", JsonKind::kString, "\"\xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80\""},
                 {"edges", JsonKind::kArray,
                  "[\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xEF\xBF\xBF"
                  "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\x7F\"]"}});
}

TEST(JsonScanTest, ReturnsDuplicateKeysInOrder) {
  ExpectMembers(R"({"a":1,"b":true,"a":{"a":3},"a":null,"b":false})",
                {{"a", JsonKind::kNumber, "1"},
                 {"b", JsonKind::kTrue, "true"},
                 {"a", JsonKind::kObject, R"({"a":3})"},
                 {"a", JsonKind::kNull, "null"},
                 {"b", JsonKind::kFalse, "false"}});
  // Keys that differ only in how they are escaped are the same key.
  ExpectMembers(R"({"a":1,"\u0061":2})",
                {{"a", JsonKind::kNumber, "1"}, {"a", JsonKind::kNumber, "2"}});
}

TEST(JsonScanTest, KeepsWhitespaceInsideValuesAndTrimsAround) {
  ExpectMembers(
      " \t\r\n{ \"p\" :\n { \"x\" : [ 1 , 2 ] ,\n\t\"y\":null\r\n } \t, \"q\":[ ]  ,\"r\":{ }, "
      "\"s\" : \" a \" }\n ",
      {{"p", JsonKind::kObject, "{ \"x\" : [ 1 , 2 ] ,\n\t\"y\":null\r\n }"},
       {"q", JsonKind::kArray, "[ ]"},
       {"r", JsonKind::kObject, "{ }"},
       {"s", JsonKind::kString, "\" a \""}});
}

TEST(JsonScanTest, BracketsInsideStringsDoNotCount) {
  ExpectMembers(R"({"a":"}]{[\"","b":[[],{},["]"]],"c":{"}":"{"}})",
                {{"a", JsonKind::kString, R"("}]{[\"")"},
                 {"b", JsonKind::kArray, R"([[],{},["]"]])"},
                 {"c", JsonKind::kObject, R"({"}":"{"})"}});
}

TEST(JsonScanTest, EmptyObjectsEmptyKeysAndByteOrderMark) {
  ExpectMembers("{}", {});
  ExpectMembers(" \n{ \t}\r\n", {});
  ExpectMembers(R"({"":""})", {{"", JsonKind::kString, R"("")"}});
  // RFC 8259 section 8.1 lets a parser ignore a leading byte order mark; the old parser did.
  ExpectMembers("\xEF\xBB\xBF{\"a\":1}", {{"a", JsonKind::kNumber, "1"}});
}

TEST(JsonScanTest, KeepsALongString) {
  std::string value = "\"";
  std::string decoded_value;
  while (value.size() < 200 * 1024) {
    value += "plain ASCII \\n \\u00e9 \xC3\xA9 \xF0\x9F\x98\x80 \\\" \\ud83d\\ude00 ";
    decoded_value += "plain ASCII \n \xC3\xA9 \xC3\xA9 \xF0\x9F\x98\x80 \" \xF0\x9F\x98\x80 ";
  }
  value += "\"";
  const std::string text = "{\"long\":" + value + ",\"after\":1}";
  ExpectMembers(text, {{"long", JsonKind::kString, value}, {"after", JsonKind::kNumber, "1"}});
  const Result<std::string> decoded = DecodeJsonString(value);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, decoded_value);
}

std::string Nested(int depth, std::string_view open, std::string_view inner,
                   std::string_view close) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += open;
  text += inner;
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

TEST(JsonScanTest, NestingExactlyAtTheLimitIsKept) {
  // The top-level object is level 1: 63 more levels inside it make 64.
  const std::string arrays = Nested(63, "[", "1", "]");
  ExpectMembers("{\"a\":" + arrays + "}", {{"a", JsonKind::kArray, arrays}});
  ExpectMembers("{\"a\":" + Nested(62, "{\"k\":", "{}", "}") + "}",
                {{"a", JsonKind::kObject, Nested(62, "{\"k\":", "{}", "}")}});
  EXPECT_TRUE(ScanJsonObject("{\"a\":{\"b\":[]}}", 3).has_value());
  EXPECT_TRUE(ScanJsonObject("{}", 1).has_value());
}

void ExpectTooDeep(const std::string& text, int max_depth) {
  const Result<std::vector<JsonMember>> members = ScanJsonObject(text, max_depth);
  ASSERT_FALSE(members.has_value()) << text.substr(0, 100);
  EXPECT_EQ(members.error().kind, ErrorKind::kInvalid);
  const std::string message = "JSON nested deeper than " + std::to_string(max_depth) + " levels";
  EXPECT_EQ(members.error().message, message);
  EXPECT_EQ(members.error().fields, (std::vector<FieldError>{{"body", message}}));
}

TEST(JsonScanTest, RefusesNestingOneLevelPastTheLimit) {
  ExpectTooDeep("{\"a\":" + Nested(64, "[", "1", "]") + "}", kDepth);
  ExpectTooDeep("{\"a\":" + Nested(63, "{\"k\":", "{}", "}") + "}", kDepth);
  ExpectTooDeep("{\"a\":{\"b\":[]}}", 2);
  ExpectTooDeep("{}", 0);
  ExpectTooDeep("{}", -1);
  // Too deep wins over not being an object: the old parser checked depth first too.
  ExpectTooDeep(Nested(65, "[", "", "]"), kDepth);
}

TEST(JsonScanTest, AMillionLevelsDoNotExhaustTheStack) {
  ExpectTooDeep("{\"a\":" + Nested(1'000'000, "[", "", "]") + "}", kDepth);
  ExpectTooDeep("{\"a\":" + Nested(1'000'000, "{\"k\":", "0", "}") + "}", kDepth);
  // Deep and not JSON at all is malformed, not too deep.
  const Result<std::vector<JsonMember>> unclosed =
      ScanJsonObject(std::string(1'000'000, '['), kDepth);
  ASSERT_FALSE(unclosed.has_value());
  EXPECT_EQ(unclosed.error().kind, ErrorKind::kMalformed);
  EXPECT_EQ(unclosed.error().message,
            "invalid JSON at byte 1000000: expected a value, found the end");
}

TEST(JsonScanTest, RefusesValidJsonThatIsNotAnObject) {
  for (std::string_view text :
       {"[]", "[{\"a\":1}]", "\"s\"", "1", " -0.5e3 ", "true", "false", "null", "\xEF\xBB\xBF[]"}) {
    const Result<std::vector<JsonMember>> members = ScanJsonObject(text, kDepth);
    ASSERT_FALSE(members.has_value()) << text;
    EXPECT_EQ(members.error().kind, ErrorKind::kInvalid) << text;
    EXPECT_EQ(members.error().message, "the body must be a JSON object") << text;
    EXPECT_EQ(members.error().fields,
              (std::vector<FieldError>{{"body", "the body must be a JSON object"}}));
  }
}

struct Malformed {
  std::string text;
  size_t byte;  // where the input stops being JSON
};

TEST(JsonScanTest, RefusesMalformedInputNamingTheByte) {
  const std::vector<Malformed> cases = {
      // empty and truncated
      {"", 0},
      {" \n\t", 3},
      {"{", 1},
      {"{\"a", 3},
      {"{\"a\"", 4},
      {"{\"a\":", 5},
      {"{\"a\":1", 6},
      {"{\"a\":1,", 7},
      {"{\"a\":\"b", 7},
      {"{\"a\":\"b\\", 8},
      {"{\"a\":[1", 7},
      {"{\"a\":{}", 7},
      {"{\"a\":tru", 5},
      {"{\"a\":-", 6},
      {"{\"a\":1.", 7},
      {"{\"a\":1e", 7},
      {"{\"a\":1e+", 8},
      {"{\"a\":\"\\u00", 6},
      // structure
      {"{\"a\":1,}", 7},
      {"{\"a\":[1,]}", 8},
      {"{,}", 1},
      {"{\"a\" 1}", 5},
      {"{\"a\":1 \"b\":2}", 7},
      {"{'a':1}", 1},
      {"{a:1}", 1},
      {"{1:1}", 1},
      {"{\"a\":[}", 6},
      {"{\"a\":{]}", 6},
      {"{\"a\":1]", 6},
      {"[}", 1},
      {"{\"a\":1 /* c */}", 7},
      {"{\"a\":1}//", 7},
      // numbers
      {"{\"a\":01}", 6},
      {"{\"a\":-01}", 7},
      {"{\"a\":00}", 6},
      {"{\"a\":+1}", 5},
      {"{\"a\":.5}", 5},
      {"{\"a\":1.e5}", 7},
      {"{\"a\":-a}", 6},
      {"{\"a\":NaN}", 5},
      {"{\"a\":Infinity}", 5},
      {"{\"a\":-Infinity}", 6},
      {"{\"a\":0x10}", 6},
      {"{\"a\":1e5.5}", 8},
      // literals
      {"{\"a\":True}", 5},
      {"{\"a\":nul}", 5},
      {"{\"a\":truex}", 9},
      {"{\"a\":undefined}", 5},
      // escapes
      {"{\"a\":\"\\x\"}", 6},
      {"{\"a\":\"\\'\"}", 6},
      {"{\"a\":\"\\U0041\"}", 6},
      {"{\"a\":\"\\u12\"}", 6},
      {"{\"a\":\"\\u12g4\"}", 6},
      {"{\"a\":\"\\ud800\"}", 6},
      {"{\"a\":\"\\udc00\"}", 6},
      {"{\"a\":\"\\ud800\\u0041\"}", 6},
      {"{\"a\":\"\\ud800x\"}", 6},
      {"{\"a\":\"\\ud83d\\ud83d\"}", 6},
      {"{\"a\":\"\\ude00\\ud83d\"}", 6},
      {"{\"\\ud800\":1}", 2},
      // control characters, raw
      {"{\"a\":\"\0\"}"s, 6},
      {"{\"a\":\"\x01\"}", 6},
      {"{\"a\":\"\x1F\"}", 6},
      {"{\"a\":\"\n\"}", 6},
      {"{\"a\":\"\t\"}", 6},
      {"{\"a\x0D\":1}", 3},
      // invalid UTF-8: stray, truncated, overlong, surrogates, above U+10FFFF
      {"{\"a\":\"\x80\"}", 6},
      {"{\"a\":\"\xBF\"}", 6},
      {"{\"a\":\"\xC3\"}", 6},
      {"{\"a\":\"\xC3(\"}", 6},
      {"{\"a\":\"\xE2\x82\"}", 6},
      {"{\"a\":\"\xF0\x9F\x98\"}", 6},
      {"{\"a\":\"\xFF\"}", 6},
      {"{\"a\":\"\xFE\"}", 6},
      {"{\"a\":\"\xC0\xAF\"}", 6},
      {"{\"a\":\"\xC1\xBF\"}", 6},
      {"{\"a\":\"\xE0\x80\xAF\"}", 6},
      {"{\"a\":\"\xE0\x9F\xBF\"}", 6},
      {"{\"a\":\"\xF0\x80\x80\xAF\"}", 6},
      {"{\"a\":\"\xF0\x8F\xBF\xBF\"}", 6},
      {"{\"a\":\"\xED\xA0\x80\"}", 6},
      {"{\"a\":\"\xED\xBF\xBF\"}", 6},
      {"{\"a\":\"\xF4\x90\x80\x80\"}", 6},
      {"{\"a\":\"\xF5\x80\x80\x80\"}", 6},
      {"{\"\xC3\":1}", 2},
      {"{\"a\":\"ok\xC3\xA9\xE2\x82\xAC\x80\"}", 13},
      {"{\"a\":1}\xC3\xA9", 7},
      // trailing data
      {"{\"a\":1}x", 7},
      {"{\"a\":1}{}", 7},
      {"{\"a\":1} 1", 8},
      {"{\"a\":1}}", 7},
      {"{}]", 2},
      {"{}\n\n,", 4},
      {"{}\0"s, 2},
      // whitespace JSON does not have, and a byte order mark anywhere but first
      {"{\"a\":1}\f", 7},
      {"\v{}", 0},
      {"\xC2\xA0{}", 0},
      {" \xEF\xBB\xBF{}", 1},
      {"\xEF\xBB\xBF\xEF\xBB\xBF{}", 3},
      {"\xEF\xBB{}", 0},
  };
  for (const Malformed& c : cases) {
    const Result<std::vector<JsonMember>> members = ScanJsonObject(c.text, kDepth);
    ASSERT_FALSE(members.has_value()) << c.text;
    EXPECT_EQ(members.error().kind, ErrorKind::kMalformed) << c.text;
    const std::string prefix = "invalid JSON at byte " + std::to_string(c.byte) + ": ";
    EXPECT_TRUE(members.error().message.starts_with(prefix))
        << c.text << " -> " << members.error().message;
    EXPECT_TRUE(members.error().fields.empty());
  }
}

TEST(JsonScanTest, SaysWhatWasExpected) {
  const auto message = [](std::string_view text) {
    return ScanJsonObject(text, kDepth).error().message;
  };
  EXPECT_EQ(message(""), "invalid JSON at byte 0: expected a value, found the end");
  EXPECT_EQ(message("{\"a\" 1}"), "invalid JSON at byte 5: expected ':'");
  EXPECT_EQ(message("{\"a\":1"), "invalid JSON at byte 6: expected ',' or '}', found the end");
  EXPECT_EQ(message("{\"a\":[1}"), "invalid JSON at byte 7: expected ',' or ']'");
  EXPECT_EQ(message("{\"a\":1,}"), "invalid JSON at byte 7: expected a string key");
  EXPECT_EQ(message("{a:1}"), "invalid JSON at byte 1: expected a string key or '}'");
  EXPECT_EQ(message("{\"a\":[1,]}"), "invalid JSON at byte 8: expected a value");
  EXPECT_EQ(message("{\"a\":01}"), "invalid JSON at byte 6: a number cannot have a leading zero");
  EXPECT_EQ(message("{\"a\":1.}"), "invalid JSON at byte 7: expected a digit after '.'");
  EXPECT_EQ(message("{\"a\":1e}"), "invalid JSON at byte 7: expected a digit in the exponent");
  EXPECT_EQ(message("{\"a\":nul}"), "invalid JSON at byte 5: invalid literal");
  EXPECT_EQ(message("{\"a\":\"\x01\"}"),
            "invalid JSON at byte 6: unescaped control character in a string");
  EXPECT_EQ(message("{\"a\":\"\xC0\xAF\"}"), "invalid JSON at byte 6: invalid UTF-8 in a string");
  EXPECT_EQ(message("{\"a\":\"\\x\"}"), "invalid JSON at byte 6: invalid escape in a string");
  EXPECT_EQ(message("{\"a\":\"\\u12\"}"),
            "invalid JSON at byte 6: \\u must be followed by four hex digits");
  EXPECT_EQ(
      message("{\"a\":\"\\ud800\"}"),
      "invalid JSON at byte 6: \\u escape of a high surrogate without a low surrogate after it");
  EXPECT_EQ(
      message("{\"a\":\"\\udc00\"}"),
      "invalid JSON at byte 6: \\u escape of a low surrogate without a high surrogate before it");
  EXPECT_EQ(message("{\"a\":\"b"), "invalid JSON at byte 7: unterminated string");
  EXPECT_EQ(message("{} x"), "invalid JSON at byte 3: unexpected data after the JSON value");
}

}  // namespace
}  // namespace webhookd::json_scan_test
