#include "client/json_members.h"

#include <gtest/gtest.h>

namespace webhookd::client {
namespace {

TEST(JsonMembersTest, KeepsTheExactBytesOfEachValue) {
  const std::string line =
      R"( {"type" : "a.b", "payload":{ "n": 1.000000000000000000001, "s": "}{\"]" ,"a":[1, {}]} ,)"
      R"("big":123456789012345678901234567890 , "t":true,"z":null, "neg":-1.5e3} )";
  const auto members = TopLevelMembers(line);
  ASSERT_TRUE(members);
  EXPECT_EQ(members->size(), 6u);
  EXPECT_EQ(members->at("type"), R"("a.b")");
  EXPECT_EQ(members->at("payload"),
            R"({ "n": 1.000000000000000000001, "s": "}{\"]" ,"a":[1, {}]})");
  EXPECT_EQ(members->at("big"), "123456789012345678901234567890");
  EXPECT_EQ(members->at("t"), "true");
  EXPECT_EQ(members->at("z"), "null");
  EXPECT_EQ(members->at("neg"), "-1.5e3");
}

TEST(JsonMembersTest, DecodesEscapedKeys) {
  const auto members = TopLevelMembers(R"({"\u0070ayload":{"a":"\\"}})");
  ASSERT_TRUE(members);
  EXPECT_EQ(members->at("payload"), R"({"a":"\\"})");
}

TEST(JsonMembersTest, LastDuplicateWins) {
  const auto members = TopLevelMembers(R"({"a":1,"a":[2]})");
  ASSERT_TRUE(members);
  EXPECT_EQ(members->at("a"), "[2]");
}

TEST(JsonMembersTest, EmptyObject) {
  const auto members = TopLevelMembers(" { } ");
  ASSERT_TRUE(members);
  EXPECT_TRUE(members->empty());
}

TEST(JsonMembersTest, RefusesAnythingButOneObject) {
  for (const char* text : {"", "[]", "1", "\"{}\"", "{", "{\"a\":}", "{\"a\":1} {}", "{'a':1}",
                           "{\"a\":1,}", "null"}) {
    EXPECT_FALSE(TopLevelMembers(text)) << text;
  }
}

}  // namespace
}  // namespace webhookd::client
