// JsonSchema: a bad schema is refused naming the keyword at fault; every draft-7 keyword
// family docs/catalog.md uses is enforced; each violation is one error whose field is the
// JSON Pointer of the offending value.
#include "server/json_schema.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <time.h>

#include <chrono>
#include <set>

#include "server/schema_bounds.h"
#include "server/schema_compile.h"
#include "server/schema_graph.h"

namespace webhookd::json_schema_test {
namespace {

using Json = nlohmann::json;

std::string CompileError(const Json& schema) {
  auto compiled = JsonSchema::Compile(schema, "/schema");
  if (compiled) return "compiled";
  EXPECT_EQ(compiled.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(compiled.error().fields.size(), 1u);
  return compiled.error().fields.at(0).field;
}

// The fields of the violations of `doc`, in the order reported.
std::vector<std::string> Fields(const Json& schema, const Json& doc) {
  auto compiled = JsonSchema::Compile(schema, "/schema");
  EXPECT_TRUE(compiled) << (compiled ? "" : compiled.error().message);
  if (!compiled) return {"(not compiled)"};
  std::vector<std::string> out;
  for (const FieldError& e : (*compiled)->Validate(doc, "/payload")) {
    EXPECT_FALSE(e.message.empty());
    out.push_back(e.field);
  }
  return out;
}

std::set<std::string> FieldSet(const Json& schema, const Json& doc) {
  auto v = Fields(schema, doc);
  return {v.begin(), v.end()};
}

TEST(JsonSchemaTest, ABadSchemaIsRefusedNamingTheKeyword) {
  EXPECT_EQ(CompileError(Json::array()), "/schema");
  EXPECT_EQ(CompileError({{"type", "strin"}}), "/schema/type");
  EXPECT_EQ(CompileError({{"minimum", "x"}}), "/schema/minimum");
  // The draft-7 meta-schema refuses these.
  EXPECT_EQ(CompileError({{"properties", {{"n", {{"minimum", "0"}}}}}}),
            "/schema/properties/n/minimum");
  EXPECT_EQ(CompileError({{"maxLength", 2.5}}), "/schema/maxLength");
  EXPECT_EQ(CompileError({{"minItems", -1}}), "/schema/minItems");
  EXPECT_EQ(CompileError({{"multipleOf", 0}}), "/schema/multipleOf");
  EXPECT_EQ(CompileError({{"uniqueItems", "true"}}), "/schema/uniqueItems");
  EXPECT_EQ(CompileError({{"required", {"id", "id"}}}), "/schema/required");
  EXPECT_EQ(CompileError({{"items", {{"format", 5}}}}), "/schema/items/format");
  EXPECT_EQ(CompileError({{"required", "id"}}), "/schema/required");
  EXPECT_EQ(CompileError({{"properties", 5}}), "/schema/properties");
  EXPECT_EQ(CompileError({{"enum", 5}}), "/schema/enum");
  EXPECT_EQ(CompileError({{"properties", {{"amount", {{"type", "integr"}}}}}}),
            "/schema/properties/amount/type");
  EXPECT_EQ(CompileError({{"properties", {{"a/b~c", {{"maxLength", -1}}}}}}),
            "/schema/properties/a~1b~0c/maxLength");
  EXPECT_EQ(CompileError({{"items", {{"properties", {{"sku", {{"pattern", "(("}}}}}}}}),
            "/schema/items/properties/sku/pattern");
  EXPECT_EQ(CompileError({{"anyOf", {{{"type", "string"}}, {{"minLength", "x"}}}}}),
            "/schema/anyOf/1/minLength");
  EXPECT_EQ(CompileError({{"patternProperties", {{"([", {{"type", "string"}}}}}}),
            "/schema/patternProperties/([");
  EXPECT_EQ(CompileError({{"definitions", {{"money", {{"type", 7}}}}}}),
            "/schema/definitions/money/type");
  EXPECT_EQ(CompileError({{"$ref", "https://example.com/schema.json"}}), "/schema/$ref");
  EXPECT_EQ(CompileError({{"$ref", "#/definitions/nowhere"}}), "/schema/$ref");
  // Unknown keywords are allowed (draft 7 ignores them), and so is a local $ref.
  EXPECT_EQ(CompileError({{"x-docs", "anything"}, {"title", "Order"}}), "compiled");
  EXPECT_EQ(CompileError({{"definitions", {{"money", {{"type", "integer"}}}}},
                          {"properties", {{"amount", {{"$ref", "#/definitions/money"}}}}}}),
            "compiled");
}

TEST(JsonSchemaTest, EachViolationIsOneErrorAtItsPointer) {
  const Json schema = {
      {"type", "object"},
      {"required", {"id", "amount"}},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"amount", {{"type", "integer"}, {"minimum", 0}}},
        {"a/b~c", {{"type", "string"}}},
        {"items",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"properties", {{"sku", {{"type", "string"}, {"pattern", "^BK-"}}}}}}}}}}}};
  EXPECT_TRUE(Fields(schema, {{"id", "o1"}, {"amount", 3}}).empty());
  EXPECT_EQ(FieldSet(schema, {{"amount", -5},
                              {"a/b~c", 1},
                              {"items", {{{"sku", "x"}}, {{"sku", "BK-1"}}, {{"sku", 3}}}}}),
            (std::set<std::string>{"/payload/id", "/payload/amount", "/payload/a~1b~0c",
                                   "/payload/items/0/sku", "/payload/items/2/sku"}));
  // A missing member is named where it belongs, "is required".
  auto compiled = JsonSchema::Compile(schema, "/schema");
  ASSERT_TRUE(compiled);
  auto errors = (*compiled)->Validate(Json{{"amount", 1}}, "/payload");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "/payload/id");
  EXPECT_EQ(errors[0].message, "is required");
}

// The one message `doc` earns against `schema`, at /payload.
std::string Message(const Json& schema, const Json& doc) {
  auto compiled = JsonSchema::Compile(schema, "/schema");
  if (!compiled) return "(not compiled)";
  auto errors = (*compiled)->Validate(doc, "/payload");
  EXPECT_EQ(errors.size(), 1u) << doc;
  return errors.empty() ? "(valid)" : errors[0].field + ": " + errors[0].message;
}

TEST(JsonSchemaTest, ATypeMismatchSaysWhatWasExpectedAndWhatCame) {
  const Json order = Json::parse(R"({"type": "object", "required": ["id", "total"],
      "properties": {"id": {"type": "integer"}, "total": {"type": "number"}}})");
  EXPECT_EQ(Message(order, Json::parse(R"({"id": 124, "total": "9.99"})")),
            "/payload/total: expected number, got string");
  EXPECT_EQ(Message(order, Json::parse(R"({"id": 1.5, "total": 1})")),
            "/payload/id: expected integer, got number");
  EXPECT_EQ(Message({{"type", {"integer", "null"}}}, "7"),
            "/payload: expected integer or null, got string");
  EXPECT_EQ(Message({{"type", "string"}}, 7), "/payload: expected string, got integer");
  EXPECT_EQ(Message({{"type", "object"}}, Json::array()), "/payload: expected object, got array");
  EXPECT_EQ(Message({{"type", "boolean"}}, nullptr), "/payload: expected boolean, got null");
}

TEST(JsonSchemaTest, TheOtherMessagesReadPlainly) {
  EXPECT_EQ(Message({{"enum", {"EUR", "USD"}}}, "GBP"), R"(/payload: must be "EUR" or "USD")");
  EXPECT_EQ(Message({{"enum", {1, 2, 3}}}, 4), "/payload: must be 1, 2 or 3");
  Json many = Json::array();
  for (int i = 0; i < 11; ++i) many.push_back(i);
  EXPECT_EQ(Message({{"enum", many}}, 99),
            "/payload: must be one of the 11 values the schema lists");
  EXPECT_EQ(Message({{"anyOf", {{{"type", "string"}}, {{"type", "integer"}}}}}, 1.5),
            "/payload: matches none of the alternatives the schema allows (anyOf)");
  EXPECT_EQ(Message({{"not", {{"type", "string"}}}}, "x"),
            "/payload: matches what the schema forbids (not)");
  EXPECT_EQ(Message({{"additionalProperties", false}}, {{"x", 1}}), "/payload/x: is not allowed");
}

TEST(JsonSchemaTest, EveryKeywordFamilyTheDocsUseIsEnforced) {
  struct Row {
    Json schema, good, bad;
  };
  const std::vector<Row> rows = {
      {{{"type", {"string", "null"}}}, nullptr, 1},
      {{{"enum", {"paid", "refunded"}}}, "paid", "open"},
      {{{"const", "v1"}}, "v1", "v2"},
      {{{"multipleOf", 5}}, 15, 12},
      {{{"minimum", 1}, {"maximum", 10}}, 10, 11},
      {{{"exclusiveMinimum", 0}, {"exclusiveMaximum", 1}}, 0.5, 0},
      {{{"minLength", 2}, {"maxLength", 3}}, "abc", "abcd"},
      {{{"pattern", "^[A-Z]{3}$"}}, "EUR", "eur"},
      {{{"format", "date-time"}}, "2026-01-02T03:04:05Z", "yesterday"},
      {{{"format", "date-time"}}, "2026-01-02t03:04:05.123+01:00", "2026-04-31T00:00:00Z"},
      {{{"format", "date-time"}}, 5, "2026-01-02 03:04:05Z"},  // a number is no string
      {{{"format", "date"}}, "2024-02-29", "2024-02-30"},
      {{{"format", "time"}}, "10:00:00+01:00", "24:00:00Z"},
      {{{"format", "date-time"}, {"pattern", "^2026"}},
       "2026-01-02T00:00:00Z",
       "2025-01-02T00:00:00Z"},
      {{{"format", "date-time"}, {"pattern", "^2026"}}, "2026-01-02T00:00:00Z", "2026-13-02"},
      {{{"items", {{"type", "integer"}}}, {"minItems", 1}, {"maxItems", 2}}, {1, 2}, {1, 2, 3}},
      {{{"items", {{{"type", "string"}}}}, {"additionalItems", false}}, {"a"}, {"a", "b"}},
      {{{"uniqueItems", true}}, {1, 2}, {1, 1}},
      {{{"contains", {{"const", "vip"}}}}, {"a", "vip"}, {"a"}},
      {{{"required", {"id"}}, {"minProperties", 1}, {"maxProperties", 2}},
       {{"id", 1}},
       {{"id", 1}, {"a", 2}, {"b", 3}}},
      {{{"properties", {{"id", {{"type", "string"}}}}}, {"additionalProperties", false}},
       {{"id", "x"}},
       {{"id", "x"}, {"extra", 1}}},
      {{{"patternProperties", {{"^x-", {{"type", "string"}}}}}}, {{"x-a", "s"}}, {{"x-a", 1}}},
      {{{"propertyNames", {{"pattern", "^[a-z_]+$"}}}}, {{"ok_name", 1}}, {{"Bad", 1}}},
      {{{"dependencies", {{"refund", {"refunded_at"}}}}},
       {{"refund", 1}, {"refunded_at", "t"}},
       {{"refund", 1}}},
      {{{"if", {{"properties", {{"kind", {{"const", "card"}}}}}}},
        {"then", {{"required", {"last4"}}}},
        {"else", {{"required", {"iban"}}}}},
       {{"kind", "card"}, {"last4", "4242"}},
       {{"kind", "card"}, {"iban", "DE00"}}},
      {{{"allOf", {{{"type", "integer"}}, {{"minimum", 5}}}}}, 6, 4},
      {{{"anyOf", {{{"type", "integer"}}, {{"type", "string"}}}}}, "s", 1.5},
      {{{"oneOf", {{{"multipleOf", 2}}, {{"multipleOf", 3}}}}}, 4, 6},
      {{{"not", {{"type", "null"}}}}, 1, nullptr},
      {{{"definitions", {{"money", {{"type", "integer"}, {"minimum", 0}}}}},
        {"properties", {{"amount", {{"$ref", "#/definitions/money"}}}}}},
       {{"amount", 5}},
       {{"amount", -5}}},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.schema.dump());
    EXPECT_TRUE(Fields(r.schema, r.good).empty());
    EXPECT_FALSE(Fields(r.schema, r.bad).empty());
  }
}

TEST(JsonSchemaTest, IntegersBeyondInt64AreComparedAsTheNumbersTheyAre) {
  const Json schema = {{"properties", {{"n", {{"minimum", 0}, {"maximum", 1e20}}}}}};
  EXPECT_TRUE(Fields(schema, Json::parse(R"({"n": 9223372036854775808})")).empty());
  EXPECT_TRUE(Fields(schema, Json::parse(R"({"n": 18446744073709551615})")).empty());
  EXPECT_EQ(Fields(schema, Json::parse(R"({"n": -9223372036854775808})")),
            std::vector<std::string>{"/payload/n"});
}

TEST(JsonSchemaTest, ErrorsAreBoundedAndNotRepeated) {
  const Json schema = {{"type", "array"}, {"items", {{"type", "string"}}}};
  Json many = Json::array();
  for (int i = 0; i < 1000; ++i) many.push_back(i);
  auto compiled = JsonSchema::Compile(Json{{"properties", {{"list", schema}}}}, "/schema");
  ASSERT_TRUE(compiled);
  auto errors = (*compiled)->Validate(Json{{"list", many}}, "/payload");
  EXPECT_EQ(errors.size(), JsonSchema::kMaxViolations);
  EXPECT_EQ(errors.front().field, "/payload/list/0");
  std::set<std::string> distinct;
  for (const auto& e : errors) distinct.insert(e.field + e.message);
  EXPECT_EQ(distinct.size(), errors.size());
}

// The message of the one error compiling `schema` gives.
std::string CompileMessage(const Json& schema) {
  auto compiled = JsonSchema::Compile(schema, "/schema");
  return compiled ? "compiled" : compiled.error().fields.at(0).message;
}

TEST(JsonSchemaTest, ARefCycleIsRefusedAtTheRefThatClosesIt) {
  EXPECT_EQ(CompileError({{"$ref", "#"}}), "/schema/$ref");
  EXPECT_NE(CompileMessage({{"$ref", "#"}}).find("refers back to itself"), std::string::npos);
  const Json ab = {
      {"definitions", {{"a", {{"$ref", "#/definitions/b"}}}, {"b", {{"$ref", "#/definitions/a"}}}}},
      {"$ref", "#/definitions/a"}};
  EXPECT_EQ(CompileError(ab), "/schema/definitions/b/$ref");
  EXPECT_EQ(CompileError({{"allOf", {{{"type", "object"}}, {{"$ref", "#"}}}}}),
            "/schema/allOf/1/$ref");
  // A cycle among definitions nothing uses is refused too, and one through properties.
  EXPECT_EQ(CompileError({{"definitions", {{"x", {{"$ref", "#/definitions/x"}}}}}}),
            "/schema/definitions/x/$ref");
  EXPECT_EQ(CompileError({{"properties", {{"child", {{"$ref", "#"}}}}}}),
            "/schema/properties/child/$ref");
  // Pointers: escapes and percent-encoding; a DAG is fine.
  EXPECT_EQ(CompileError({{"definitions", {{"a/b~c d", {{"type", "integer"}}}}},
                          {"properties",
                           {{"x", {{"$ref", "#/definitions/a~1b~0c%20d"}}},
                            {"y", {{"$ref", "#/definitions/a~1b~0c%20d"}}}}}}),
            "compiled");
}

TEST(JsonSchemaTest, TooComplexASchemaIsRefused) {
  // Each level doubles what one value is checked against: 2^10 subschemas, within the
  // bounds on size and count.
  Json schema = {{"type", "integer"}};
  for (int i = 0; i < 10; ++i) schema = {{"allOf", {schema, schema}}};
  EXPECT_EQ(CompileError(schema), "/schema");
  EXPECT_NE(CompileMessage(schema).find("is too complex"), std::string::npos);
  // The same through definitions that refer twice to the one below.
  Json defs = {{"d0", {{"type", "integer"}}}};
  for (int i = 1; i <= 12; ++i) {
    const std::string below = "#/definitions/d" + std::to_string(i - 1);
    defs["d" + std::to_string(i)] = {{"allOf", {{{"$ref", below}}, {{"$ref", below}}}}};
  }
  EXPECT_NE(
      CompileMessage({{"definitions", defs}, {"$ref", "#/definitions/d12"}}).find("too complex"),
      std::string::npos);
}

// A list of `n` empty schemas under `items`: n subschemas, 3 bytes each.
Json ItemsOf(size_t n) { return {{"items", Json(std::vector<Json>(n, Json::object()))}}; }

TEST(JsonSchemaTest, ASchemaOverItsBoundsIsRefusedBeforeItIsCompiled) {
  EXPECT_EQ(CompileError(ItemsOf(10000)), "compiled");
  EXPECT_EQ(CompileError(ItemsOf(10001)), "/schema");
  EXPECT_NE(CompileMessage(ItemsOf(10001)).find("more than 10000 subschemas"), std::string::npos);
  // The same count through every keyword that holds subschemas.
  Json mixed = {{"properties", {{"a", ItemsOf(5000)}}}, {"allOf", {ItemsOf(4998)}}};
  EXPECT_EQ(CompileError(mixed), "compiled");
  mixed["not"] = true;
  EXPECT_EQ(CompileError(mixed), "/schema");
  // 65,536 bytes as compact JSON is the most: {"description":"…"} is 18 bytes around it.
  EXPECT_EQ(CompileError({{"description", std::string(65518, 'd')}}), "compiled");
  EXPECT_EQ(CompileError({{"description", std::string(65519, 'd')}}), "/schema");
  EXPECT_NE(CompileMessage({{"description", std::string(65519, 'd')}}).find("65536 bytes"),
            std::string::npos);
  // Escapes count as written: 13,100 newlines are 26,200 bytes twice over.
  EXPECT_EQ(CompileError({{"a", std::string(13100, '\n')},
                          {"b", std::string(13100, '\n')},
                          {"c", std::string(13100, '\n')}}),
            "/schema");
  // The attack: one member named by 131,072 'k's holding 43,000 subschemas (11 GB of
  // copied paths once compiled), refused by its size alone.
  const Json attack = {{"properties", {{std::string(131072, 'k'), ItemsOf(43000)}}}};
  EXPECT_EQ(CompileError(attack), "/schema");
}

TEST(JsonSchemaTest, ALongNameIsNotCopiedIntoEveryNodeBelowIt) {
  // 40,000 bytes of name over 5,000 subschemas: each copying its path would be 200 MB.
  const std::string name(40000, 'k');
  Json schema = {{"properties", {{name, ItemsOf(5000)}}}};
  EXPECT_EQ(CompileError(schema), "compiled");
  // A problem below it is still named by its whole pointer.
  schema["properties"][name]["items"][4999] = {{"type", 5}};
  EXPECT_EQ(CompileError(schema), "/schema/properties/" + name + "/items/4999/type");
  EXPECT_EQ(CompileError({{"properties", {{"a/b~c", {{"items", {true, {{"minLength", -1}}}}}}}}}),
            "/schema/properties/a~1b~0c/items/1/minLength");
}

TEST(JsonSchemaTest, APatternRe2CannotRunInLinearTimeIsRefused) {
  EXPECT_EQ(CompileError({{"pattern", "^(a)\\1$"}}), "/schema/pattern");
  EXPECT_NE(CompileMessage({{"pattern", "(?=a)b"}}).find("linear time"), std::string::npos);
  EXPECT_EQ(CompileError({{"patternProperties", {{"(?!x)", true}}}}),
            "/schema/patternProperties/(?!x)");
  // ECMAScript's common forms are taken: classes, escapes, \u.
  EXPECT_EQ(CompileError({{"pattern", "^\\d{3}-\\w+\\/\\u00e9$"}}), "compiled");
  // A nested quantifier is no danger to RE2: answered at once.
  auto compiled = JsonSchema::Compile({{"pattern", "^(a+)+$"}}, "/schema");
  ASSERT_TRUE(compiled);
  EXPECT_EQ((*compiled)->Validate(std::string(40, 'a') + "!", "/payload").size(), 1u);
  EXPECT_TRUE((*compiled)->Validate(std::string(40, 'a'), "/payload").empty());
  // Unanchored, as draft 7 says.
  EXPECT_TRUE(Fields({{"pattern", "b+"}}, "abbbc").empty());
  EXPECT_TRUE(Fields({{"pattern", "\\u00e9"}}, "caf\u00e9").empty());
}

TEST(JsonSchemaTest, APatternTooLargeForItsAutomatonIsRefused) {
  // 1,005 instructions: RE2's DFA has no room for it in 128 KiB and runs its NFA instead.
  EXPECT_EQ(CompileError({{"allOf", {{{"pattern", "[a-z]{0,500}x"}}}}}), "/schema/allOf/0/pattern");
  EXPECT_NE(CompileMessage({{"pattern", "[a-z]{0,500}x"}}).find("instructions"), std::string::npos);
  EXPECT_EQ(CompileError({{"patternProperties", {{"^[a-z]{0,300}$", true}}}}),
            "/schema/patternProperties/^[a-z]{0,300}$");
  EXPECT_EQ(CompileError({{"pattern", "[a-z]{0,50}x"}}), "compiled");
  // Under 200 instructions, but each position one of 80 byte classes: 20 of the DFA's
  // states do not fit.
  std::string wide;
  for (char c : std::string_view("!\"#%&',/0123456789:;<=>@ABCDEFGHIJKLMNOPQRSTUVWXYZ_`abcdefghij"
                                 "klmnopqrstuvwxyz~")) {
    wide += std::string("[") + c + "]?";
  }
  EXPECT_EQ(CompileError({{"pattern", wide + "Q[a-z]?[a-z]?[a-z]?[a-z]?[a-z]?[a-z]?Z"}}),
            "/schema/pattern");
  EXPECT_NE(CompileMessage({{"pattern", wide + "Q[a-z]?[a-z]?[a-z]?[a-z]?[a-z]?[a-z]?Z"}})
                .find("is too large for RE2"),
            std::string::npos);
  // The common shapes start their DFA.
  for (const char* p : {"", "^", "$", "(?s).*", "^ord_[0-9]{1,12}$", "a|b", "^\\S+$"}) {
    EXPECT_EQ(CompileError({{"pattern", p}}), "compiled") << p;
  }
}

TEST(JsonSchemaTest, PatternWorkIsBoundedWhateverThePayload) {
  // 250 scans of each string by a 105-instruction program: about 38 bytes may be checked.
  std::vector<Json> all(250, Json{{"pattern", "^[a-z]{0,50}x"}});
  auto compiled = JsonSchema::Compile({{"properties", {{"s", {{"allOf", all}}}}}}, "/schema");
  ASSERT_TRUE(compiled);
  EXPECT_TRUE((*compiled)->Validate({{"s", std::string(30, 'a') + "x"}}, "/payload").empty());
  EXPECT_EQ((*compiled)->Validate({{"s", std::string(30, 'a') + "y"}}, "/payload").size(), 1u);
  const auto errors = (*compiled)->Validate({{"s", std::string(250000, 'a')}}, "/payload");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "/payload/s");
  EXPECT_NE(errors[0].message.find("too long to be checked"), std::string::npos);
  // Member names count too (patternProperties): 12 names of 1,000 bytes against a pattern of
  // 105 instructions are 1.26 M of work, 8 are 0.84 M.
  const auto names = [](int n) {
    Json doc = Json::object();
    for (int i = 0; i < n; ++i) doc[std::to_string(i) + std::string(1000, 'a')] = 1;
    return doc;
  };
  auto by_name = JsonSchema::Compile({{"patternProperties", {{"^[a-z]{0,50}x", true}}}}, "/schema");
  ASSERT_TRUE(by_name);
  EXPECT_EQ((*by_name)->Validate(names(12), "/payload").size(), 1u);
  EXPECT_TRUE((*by_name)->Validate(names(8), "/payload").empty());
}

TEST(JsonSchemaTest, WhiteSpaceInAPatternIsEcmaScriptsWhiteSpace) {
  const Json space = {{"pattern", "^\\s$"}};
  for (const char* s : {" ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u1680", "\u2000", "\u200a",
                        "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"}) {
    EXPECT_TRUE(Fields(space, s).empty()) << Json(s).dump();
  }
  EXPECT_FALSE(Fields(space, "a").empty());
  EXPECT_FALSE(Fields(space, "\u200b").empty());  // a zero-width space is not white space
  const Json non_space = {{"pattern", "^\\S+$"}};
  EXPECT_TRUE(Fields(non_space, "abc\u00e9").empty());
  EXPECT_FALSE(Fields(non_space, "a\u00a0b").empty());
  EXPECT_FALSE(Fields(non_space, "a\ufeffb").empty());
  const Json in_class = {{"pattern", "^[\\s\\d]+$"}};
  EXPECT_TRUE(Fields(in_class, "1\u30002").empty());
  EXPECT_FALSE(Fields(in_class, "1a").empty());
  EXPECT_TRUE(Fields({{"pattern", "^\\\\s$"}}, "\\s").empty());  // an escaped backslash, then s
  EXPECT_EQ(CompileError({{"pattern", "[^\\S]"}}), "/schema/pattern");
}

TEST(JsonSchemaTest, AHugeDateTimeIsRefusedWithoutARegex) {
  const Json schema = {{"format", "date-time"}};
  EXPECT_EQ(Fields(schema, std::string(200000, '1')), std::vector<std::string>{"/payload"});
  EXPECT_EQ(Fields(schema, "2026-01-02T03:04:05Z" + std::string(200000, '9')),
            std::vector<std::string>{"/payload"});
  EXPECT_TRUE(Fields(schema, "2016-12-31T22:29:60.5-01:30").empty());   // leap second
  EXPECT_FALSE(Fields(schema, "2016-12-31T23:59:60.5-01:30").empty());  // not at 23:59 UTC
  EXPECT_FALSE(Fields(schema, "2026-01-02T03:04:05+24:00").empty());
  EXPECT_TRUE(Fields({{"format", "date"}}, "2000-02-29").empty());
  EXPECT_FALSE(Fields({{"format", "date"}}, "1900-02-29").empty());
  EXPECT_FALSE(Fields({{"format", "date"}}, "2026-1-02").empty());
  EXPECT_FALSE(Fields({{"format", "time"}}, "10:00:00.Z").empty());
  EXPECT_EQ(Fields({{"format", "email"}}, "not an address"), std::vector<std::string>{"/payload"});
  EXPECT_TRUE(Fields({{"format", "idn-email"}}, "not checked").empty());
}

TEST(JsonSchemaTest, EqualItemsAreOneErrorInNLogN) {
  const Json schema = {{"uniqueItems", true}};
  Json same = Json::array();
  for (int i = 0; i < 8000; ++i) same.push_back({{"sku", "BK-1"}, {"n", 1}});
  EXPECT_EQ(Fields(schema, same), std::vector<std::string>{"/payload"});
  // Numbers are compared by value: 1 and 1.0 are one value; big integers stay exact.
  EXPECT_FALSE(Fields(schema, Json::parse("[1, 1.0]")).empty());
  EXPECT_FALSE(Fields(schema, Json::parse(R"([{"a": [1]}, {"a": [1.0]}])")).empty());
  EXPECT_TRUE(Fields(schema, Json::parse("[18446744073709551615, 18446744073709551614]")).empty());
  EXPECT_TRUE(Fields(schema, Json::parse("[9007199254740993, 9007199254740992]")).empty());
  EXPECT_TRUE(Fields({{"enum", {1.0, "a"}}}, 1).empty());
  EXPECT_TRUE(
      Fields({{"const", Json::parse(R"({"a": 2.0})")}}, Json::parse(R"({"a": 2})")).empty());
}

TEST(JsonSchemaTest, AnyNumberWithoutAFractionIsAnInteger) {
  const Json schema = {{"type", "integer"}};
  EXPECT_TRUE(Fields(schema, Json::parse("12345678901234567890")).empty());
  EXPECT_TRUE(Fields(schema, Json::parse("1.0")).empty());
  EXPECT_TRUE(Fields(schema, Json::parse("-9223372036854775808")).empty());
  EXPECT_TRUE(Fields(schema, Json::parse("1e300")).empty());
  EXPECT_FALSE(Fields(schema, Json::parse("1.5")).empty());
  EXPECT_TRUE(Fields({{"multipleOf", 0.1}}, 0.3).empty());
  EXPECT_TRUE(Fields({{"multipleOf", 3}}, Json::parse("18446744073709551615")).empty());
  EXPECT_FALSE(Fields({{"maximum", Json::parse("18446744073709551614")}},
                      Json::parse("18446744073709551615"))
                   .empty());
}

TEST(JsonSchemaTest, MultipleOfIsExactDecimalArithmetic) {
  const auto multiple = [](const char* value, const char* divisor) {
    return Fields({{"multipleOf", Json::parse(divisor)}}, Json::parse(value)).empty();
  };
  // The two a rounding tolerance got wrong: a float that overflows the quotient, and a
  // large integer over a tiny divisor.
  EXPECT_FALSE(multiple("1e308", "0.123456789"));
  EXPECT_TRUE(multiple("12391239123", "1e-8"));
  EXPECT_TRUE(multiple("0.3", "0.1"));
  EXPECT_TRUE(multiple("4.5", "1.5"));
  EXPECT_TRUE(multiple("-0.0075", "0.0001"));
  EXPECT_FALSE(multiple("0.00751", "0.0001"));
  EXPECT_FALSE(multiple("35", "1.5"));
  EXPECT_TRUE(multiple("0", "0.7"));
  EXPECT_TRUE(multiple("1e308", "1e-300"));
  EXPECT_FALSE(multiple("1e-300", "1e308"));
  EXPECT_TRUE(multiple("1e308", "2"));
  EXPECT_FALSE(multiple("1e308", "3"));
  EXPECT_TRUE(multiple("18446744073709551615", "0.5"));
  EXPECT_FALSE(multiple("18446744073709551615", "2"));
  EXPECT_FALSE(multiple("-9223372036854775808", "1e19"));
  EXPECT_TRUE(multiple("1.7976931348623157e308", "1e-323"));
  EXPECT_FALSE(multiple("5e-324", "1e-323"));
}

TEST(JsonSchemaTest, LengthsCountCodePoints) {
  EXPECT_TRUE(Fields({{"maxLength", 4}}, "caf\u00e9").empty());
  EXPECT_TRUE(Fields({{"minLength", 2}, {"maxLength", 2}}, "\U0001F600\U0001F600").empty());
}

TEST(JsonSchemaTest, CheckingStopsAtTheHundredthError) {
  const Json schema = {{"items", {{"type", "string"}, {"minimum", 5}}}};
  auto compiled = JsonSchema::Compile(schema, "/schema");
  ASSERT_TRUE(compiled);
  Json many = Json::array();
  for (int i = 0; i < 50000; ++i) many.push_back(i);
  size_t visits = 0;
  auto errors = (*compiled)->Validate(many, "/payload", &visits);
  EXPECT_EQ(errors.size(), JsonSchema::kMaxViolations);
  EXPECT_LT(visits, 200u);  // not every item
}

TEST(JsonSchemaTest, APayloadTooLargeForItsSchemasCostIsRefusedUnchecked) {
  Json all = Json::array();
  for (int i = 0; i < 200; ++i) all.push_back({{"minimum", -i}});
  auto compiled = JsonSchema::Compile({{"items", {{"allOf", all}}}}, "/schema");
  ASSERT_TRUE(compiled);
  Json many = Json::array();
  for (int i = 0; i < 20000; ++i) many.push_back(0);
  size_t visits = 1;
  auto errors = (*compiled)->Validate(many, "/payload", &visits);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("too many values"), std::string::npos);
  EXPECT_EQ(visits, 0u);
  // And a smaller one is checked, within the bound the schema reports.
  many.erase(many.begin() + 1000, many.end());
  EXPECT_TRUE((*compiled)->Validate(many, "/payload", &visits).empty());
  EXPECT_LE(visits, (*compiled)->cost() * 1001);
}

// The costliest accepted schemas on the largest accepted payloads (WEBHOOKD_MAX_PAYLOAD_BYTES,
// 256 KiB): each is checked to its end. Their time is measured on a Release build (see
// docs/security.md), not asserted here.
constexpr size_t kLargestPayload = 262144;

// This thread's CPU time: what a validation costs, without the waits of a shared machine.
std::chrono::nanoseconds ThreadCpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

// Validate, its time recorded as the test's properties validate_us (wall) and
// validate_cpu_us (--gtest_output=xml).
std::vector<FieldError> TimedValidate(const JsonSchema& schema, const Json& doc,
                                      size_t* visits = nullptr) {
  const auto cpu = ThreadCpu();
  const auto started = std::chrono::steady_clock::now();
  auto errors = schema.Validate(doc, "/payload", visits);
  const auto us = [](auto d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  };
  ::testing::Test::RecordProperty("validate_us", us(std::chrono::steady_clock::now() - started));
  ::testing::Test::RecordProperty("validate_cpu_us", us(ThreadCpu() - cpu));
  return errors;
}

// A text RE2's DFA cannot keep up with for (a|b)*a(a|b){12}: each byte a new state.
std::string Unpredictable(size_t n) {
  std::string text(n, 'a');
  uint32_t x = 12345;
  for (char& c : text) {
    x = x * 1103515245u + 12345u;
    c = (x >> 16) & 1 ? 'a' : 'b';
  }
  return text;
}

size_t ProgramSize(const std::string& pattern) {
  auto compiled = JsonSchema::Compile({{"pattern", pattern}}, "/schema");
  EXPECT_TRUE(compiled);
  // The bound the validator reports names the program size: recover it from a scan that
  // is certain to pass it.
  const auto errors = (*compiled)->Validate(std::string(schema::kMaxPatternWork, 'a'), "");
  EXPECT_EQ(errors.size(), 1u);
  const std::string& m = errors.at(0).message;
  const size_t at = m.find("about ") + 6;
  return schema::kMaxPatternWork / std::stoul(m.substr(at));
}

TEST(JsonSchemaTest, CostliestPatternWorkOneLongString) {
  const std::string pattern = "(a|b)*a(a|b){12}c";
  const size_t length = schema::kMaxPatternWork / ProgramSize(pattern) - 2;
  ASSERT_LT(length, kLargestPayload);
  auto compiled = JsonSchema::Compile({{"properties", {{"s", {{"pattern", pattern}}}}}}, "/schema");
  ASSERT_TRUE(compiled);
  const Json doc = {{"s", Unpredictable(length)}};
  const auto errors = TimedValidate(**compiled, doc);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("must match the pattern"), std::string::npos);
}

TEST(JsonSchemaTest, CostliestPatternWorkManyPatterns) {
  // The most distinct patterns, each used four times over: every scan a cold automaton.
  Json all = Json::array();
  size_t program = 0;
  for (size_t i = 0; i < 4 * schema::kMaxPatterns; ++i) {
    const std::string p = "(a|b)*a(a|b){12}c" + std::to_string(i % schema::kMaxPatterns);
    if (i < schema::kMaxPatterns) program = std::max(program, ProgramSize(p));
    all.push_back({{"pattern", p}});
  }
  all.erase(all.begin() + 250, all.end());  // within the cost bound of 256
  const size_t length = schema::kMaxPatternWork / (all.size() * program) - 2;
  auto compiled = JsonSchema::Compile({{"properties", {{"s", {{"allOf", all}}}}}}, "/schema");
  ASSERT_TRUE(compiled);
  const Json doc = {{"s", Unpredictable(length)}};
  const auto errors = TimedValidate(**compiled, doc);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].message.find("must match the pattern"), std::string::npos);
}

TEST(JsonSchemaTest, CostliestVisits) {
  // Every value checked against 256 nodes, each parsing a date-time: a million checks.
  Json all = Json::array();
  for (int i = 0; i < 254; ++i) all.push_back({{"type", "string"}, {"format", "date-time"}});
  auto compiled = JsonSchema::Compile({{"items", {{"allOf", all}}}}, "/schema");
  ASSERT_TRUE(compiled);
  const size_t count = schema::kMaxWork / (*compiled)->cost() - 1;
  Json doc(std::vector<Json>(count, "2026-12-31T23:59:60.123456789+00:00"));
  ASSERT_LT(doc.dump().size(), kLargestPayload);
  size_t visits = 0;
  EXPECT_TRUE(TimedValidate(**compiled, doc, &visits).empty());
  EXPECT_GT(visits, schema::kMaxWork * 9 / 10);
}

TEST(JsonSchemaTest, CostliestVisitsThenPatternWork) {
  // Both bounds spent in one validation: a million date-time checks, then the longest scan
  // the pattern work allows.
  Json all = Json::array();
  for (int i = 0; i < 254; ++i) all.push_back({{"type", "string"}, {"format", "date-time"}});
  const std::string pattern = "(a|b)*a(a|b){12}c";
  auto compiled = JsonSchema::Compile(
      {{"properties", {{"a", {{"items", {{"allOf", all}}}}}, {"z", {{"pattern", pattern}}}}}},
      "/schema");
  ASSERT_TRUE(compiled);
  const size_t count = schema::kMaxWork / (*compiled)->cost() - 8;  // the rest of the doc too
  const Json doc = {{"a", std::vector<Json>(count, "2026-12-31T23:59:60Z")},
                    {"z", Unpredictable(schema::kMaxPatternWork / ProgramSize(pattern) - 2)}};
  ASSERT_LT(doc.dump().size(), kLargestPayload);
  size_t visits = 0;
  const auto errors = TimedValidate(**compiled, doc, &visits);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "/payload/z");
  EXPECT_GT(visits, schema::kMaxWork * 9 / 10);
}

TEST(JsonSchemaTest, CostliestCompile) {
  // The most subschemas, and the most distinct patterns, each as large as is accepted.
  Json schema = ItemsOf(schema::kMaxSubschemas - schema::kMaxPatterns);
  for (size_t i = 0; i < schema::kMaxPatterns; ++i) {
    schema["allOf"].push_back({{"pattern", "[a-z]{0,90}x" + std::to_string(i)}});
  }
  const size_t heap_before = mallinfo2().uordblks;
  const auto started = std::chrono::steady_clock::now();
  auto compiled = JsonSchema::Compile(schema, "/schema");
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(compiled) << compiled.error().message;
  // Its time and heap, for a Release build's record (ASan's allocator is not glibc's).
  ::testing::Test::RecordProperty(
      "compile_us",
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
  ::testing::Test::RecordProperty("compile_heap_bytes",
                                  std::to_string(mallinfo2().uordblks - heap_before));
  EXPECT_TRUE((*compiled)->Validate(Json::array({1, 2}), "/payload").empty());
}

TEST(JsonSchemaTest, CostliestUniqueItems) {
  // 1,000 arrays of 120 numbers that differ in their last alone: every comparison goes deep.
  Json doc = Json::array();
  for (int i = 0; i < 1000; ++i) {
    Json item(std::vector<Json>(119, 1));
    item.push_back(i);
    doc.push_back(std::move(item));
  }
  ASSERT_LT(doc.dump().size(), kLargestPayload);
  auto compiled = JsonSchema::Compile({{"uniqueItems", true}}, "/schema");
  ASSERT_TRUE(compiled);
  EXPECT_TRUE(TimedValidate(**compiled, doc).empty());
  doc.push_back(doc[500]);
  EXPECT_EQ((*compiled)->Validate(doc, "/payload").size(), 1u);
}

}  // namespace
}  // namespace webhookd::json_schema_test
