// Attacks through an event type's JSON Schema, by a publisher key. Against valijson, a
// $ref to itself (directly or through definitions) and a 200,000-character date-time
// killed the server (SIGSEGV, stack overflow); a nested quantifier in a pattern held a
// thread for longer than 20 s; uniqueItems over 8,000 equal items took 5 s and 1.8 GiB; an
// integer of 2^64 - 1 was "not an integer". Later, against webhookd itself: a schema with
// one member named by 131,072 'k's over 43,000 subschemas answered 500 after 12.9 s (11 GB
// of copied paths without a memory cap); 250 patterns [a-z]{0,500}x, which RE2 ran in its
// NFA, held a thread for more than 20 s on one 250,000-character string. Each is now a
// quick answer, and the server lives on.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::schema_security_test {
namespace {

using Json = nlohmann::json;

class SchemaSecurityTest : public ::testing::Test {
 protected:
  SchemaSecurityTest()
      : webhookd_(db_.url(), "server"),
        key_(WebhookdProcess::CreateKey(db_.url(), {"--role", "publisher"})) {}

  // POSTs `body` (raw) as the publisher; the status, which must come within 10 s (the
  // attacks took 20 s or more, or killed the server).
  int Post(const std::string& path, const std::string& body, std::string* answer = nullptr) {
    auto client = webhookd_.Client(key_);
    client->set_read_timeout(10, 0);
    auto res = client->Post(path, body, "application/json");
    if (!res) return 0;
    if (answer != nullptr) *answer = res->body;
    return res->status;
  }

  void ExpectAlive() {
    ASSERT_TRUE(webhookd_.process().Running());
    auto res = webhookd_.Client()->Get("/healthz");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }

  TestDatabase db_;
  WebhookdProcess webhookd_;
  std::string key_;
};

TEST_F(SchemaSecurityTest, ARefCycleIsRefusedAtCreation) {
  std::string answer;
  EXPECT_EQ(Post("/v1/event-types", R"({"name": "x", "schema": {"$ref": "#"}})", &answer), 422);
  EXPECT_EQ(Json::parse(answer)["errors"][0]["field"], "/schema/$ref") << answer;
  EXPECT_EQ(Post("/v1/event-types", R"({"name": "y", "schema": {"definitions": {
                 "a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}},
                 "$ref": "#/definitions/a"}})",
                 &answer),
            422);
  EXPECT_EQ(Json::parse(answer)["errors"][0]["field"], "/schema/definitions/b/$ref") << answer;
  ExpectAlive();
}

TEST_F(SchemaSecurityTest, AHugeDateTimeIsAQuick422) {
  ASSERT_EQ(Post("/v1/event-types", R"({"name": "t", "schema": {"properties":
                 {"at": {"type": "string", "format": "date-time"}}}})"),
            201);
  const std::string big(200000, '1');
  std::string answer;
  EXPECT_EQ(Post("/v1/events", R"({"type": "t", "payload": {"at": ")" + big + "\"}}", &answer),
            422);
  EXPECT_EQ(Json::parse(answer)["errors"][0]["field"], "/payload/at") << answer.substr(0, 300);
  EXPECT_EQ(Post("/v1/events", R"({"type": "t", "payload": {"at": "2026-01-02T03:04:05Z"}})"), 202);
  ExpectAlive();
}

TEST_F(SchemaSecurityTest, ANestedQuantifierIsAQuickAnswer) {
  ASSERT_EQ(Post("/v1/event-types", R"({"name": "p", "schema": {"properties":
                 {"s": {"type": "string", "pattern": "^(a+)+$"}}}})"),
            201);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(
      Post("/v1/events", R"({"type": "p", "payload": {"s": ")" + std::string(40, 'a') + "!\"}}"),
      422);
  EXPECT_EQ(
      Post("/v1/events", R"({"type": "p", "payload": {"s": ")" + std::string(40, 'a') + "\"}}"),
      202);
  // Generous: valijson took more than 20 s for the first alone.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  // A pattern RE2 cannot run in linear time is refused at creation.
  std::string answer;
  EXPECT_EQ(
      Post("/v1/event-types",
           R"({"name": "q", "schema": {"properties": {"s": {"pattern": "^(a)\\1$"}}}})", &answer),
      422);
  EXPECT_EQ(Json::parse(answer)["errors"][0]["field"], "/schema/properties/s/pattern") << answer;
  ExpectAlive();
}

TEST_F(SchemaSecurityTest, EightThousandEqualItemsAreOneQuickError) {
  ASSERT_EQ(Post("/v1/event-types", R"({"name": "u", "schema": {"properties":
                 {"list": {"uniqueItems": true}}}})"),
            201);
  std::string items;
  for (int i = 0; i < 8000; ++i) items += std::string(i > 0 ? "," : "") + R"({"k": "v"})";
  std::string answer;
  EXPECT_EQ(Post("/v1/events", R"({"type": "u", "payload": {"list": [)" + items + "]}}", &answer),
            422);
  const Json problem = Json::parse(answer);
  ASSERT_EQ(problem["errors"].size(), 1u) << answer;
  EXPECT_EQ(problem["errors"][0]["field"], "/payload/list");
  ExpectAlive();
}

TEST_F(SchemaSecurityTest, ABigIntegerIsAnInteger) {
  ASSERT_EQ(Post("/v1/event-types", R"({"name": "i", "schema": {"properties":
                 {"n": {"type": "integer"}}}})"),
            201);
  EXPECT_EQ(Post("/v1/events", R"({"type": "i", "payload": {"n": 12345678901234567890}})"), 202);
  EXPECT_EQ(Post("/v1/events", R"({"type": "i", "payload": {"n": 1.0}})"), 202);
  EXPECT_EQ(Post("/v1/events", R"({"type": "i", "payload": {"n": 1.5}})"), 422);
  ExpectAlive();
}

// `n` empty schemas as an `items` list.
std::string ItemsOf(size_t n) {
  std::string items = R"({"items": [)";
  for (size_t i = 0; i < n; ++i) items += i > 0 ? ",{}" : "{}";
  return items + "]}";
}

TEST_F(SchemaSecurityTest, ASchemaOverItsBoundsIsAQuick422) {
  const auto started = std::chrono::steady_clock::now();
  std::string answer;
  const std::string attack = R"({"name": "big", "schema": {"properties": {")" +
                             std::string(131072, 'k') + R"(": )" + ItemsOf(43000) + "}}}";
  ASSERT_LT(attack.size(), 262144u);  // within the body limit: the schema is what is refused
  EXPECT_EQ(Post("/v1/event-types", attack, &answer), 422);
  EXPECT_EQ(Json::parse(answer)["errors"][0]["field"], "/schema") << answer.substr(0, 300);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(
      Post("/v1/event-types", R"({"name": "many", "schema": )" + ItemsOf(10001) + "}", &answer),
      422);
  EXPECT_NE(answer.find("more than 10000 subschemas"), std::string::npos) << answer;
  EXPECT_EQ(Post("/v1/event-types", R"({"name": "most", "schema": )" + ItemsOf(10000) + "}"), 201);
  EXPECT_EQ(Post("/v1/events", R"({"type": "most", "payload": {"n": 1}})"), 202);
  ExpectAlive();
}

TEST_F(SchemaSecurityTest, APatternOutOfItsAutomatonOrAScanTooLongIsAQuick422) {
  // 250 scans by RE2's NFA of a 250,000-character string held a thread for over 20 s.
  std::string all;
  for (int i = 0; i < 250; ++i)
    all += std::string(i > 0 ? "," : "") + R"({"pattern": "[a-z]{0,500}x"})";
  std::string answer;
  EXPECT_EQ(Post("/v1/event-types",
                 R"({"name": "nfa", "schema": {"properties": {"s": {"allOf": [)" + all + "]}}}}",
                 &answer),
            422);
  EXPECT_EQ(Json::parse(answer)["errors"][0]["field"], "/schema/properties/s/allOf/0/pattern")
      << answer;
  // The costliest pattern accepted, as often as the cost bound allows: a long string is
  // refused before it costs more than the bound on pattern work.
  all.clear();
  for (int i = 0; i < 250; ++i)
    all += std::string(i > 0 ? "," : "") + R"({"pattern": "[a-z]{0,90}x"})";
  ASSERT_EQ(Post("/v1/event-types",
                 R"({"name": "dfa", "schema": {"properties": {"s": {"allOf": [)" + all + "]}}}}",
                 &answer),
            201)
      << answer;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(
      Post("/v1/events",
           R"({"type": "dfa", "payload": {"s": ")" + std::string(250000, 'a') + R"("}})", &answer),
      422);
  EXPECT_NE(answer.find("too long to be checked"), std::string::npos) << answer.substr(0, 300);
  EXPECT_EQ(Post("/v1/events", R"({"type": "dfa", "payload": {"s": "abcx"}})"), 202);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ExpectAlive();
}

}  // namespace
}  // namespace webhookd::testing::schema_security_test
