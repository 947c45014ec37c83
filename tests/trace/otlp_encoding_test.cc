#include "trace/otlp_encoding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "tests/trace/sample_spans.h"

namespace webhookd::trace::otlp_encoding_test {
namespace {

using Json = nlohmann::json;
using samples::ClientSpan;
using samples::SampleResource;
using samples::ServerSpan;

// A protobuf reader for these tests alone: every field of one message, in order, so the
// encoder is checked against the wire format itself rather than against its own idea of
// it (tests/otlp checks it against OpenTelemetry's definitions).
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;  // varint, fixed64 and fixed32
  std::string bytes;   // length-delimited
};

std::vector<Field> ReadMessage(std::string_view data) {
  std::vector<Field> fields;
  size_t at = 0;
  const auto varint = [&]() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at >= data.size()) throw std::runtime_error("truncated varint");
      const auto byte = static_cast<uint8_t>(data[at++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    throw std::runtime_error("varint longer than 10 bytes");
  };
  const auto fixed = [&](int bytes) {
    if (at + bytes > data.size()) throw std::runtime_error("truncated fixed field");
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value |= static_cast<uint64_t>(static_cast<uint8_t>(data[at++])) << (8 * i);
    }
    return value;
  };
  while (at < data.size()) {
    const uint64_t key = varint();
    Field f;
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<uint32_t>(key & 7);
    switch (f.wire) {
      case 0:
        f.value = varint();
        break;
      case 1:
        f.value = fixed(8);
        break;
      case 5:
        f.value = fixed(4);
        break;
      case 2: {
        const uint64_t size = varint();
        if (size > data.size() - at) throw std::runtime_error("length past the end");
        f.bytes = std::string(data.substr(at, size));
        at += size;
        break;
      }
      default:
        throw std::runtime_error("unknown wire type " + std::to_string(f.wire));
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

std::vector<Field> All(const std::vector<Field>& message, uint32_t number) {
  std::vector<Field> out;
  for (const auto& f : message) {
    if (f.number == number) out.push_back(f);
  }
  return out;
}

Field One(const std::vector<Field>& message, uint32_t number, uint32_t wire) {
  const auto found = All(message, number);
  if (found.size() != 1) {
    throw std::runtime_error("field " + std::to_string(number) + " appears " +
                             std::to_string(found.size()) + " times");
  }
  if (found[0].wire != wire) {
    throw std::runtime_error("field " + std::to_string(number) + " has wire type " +
                             std::to_string(found[0].wire));
  }
  return found[0];
}

std::vector<uint32_t> Numbers(const std::vector<Field>& message) {
  std::vector<uint32_t> out;
  for (const auto& f : message) out.push_back(f.number);
  return out;
}

// A KeyValue as key and a description of its AnyValue: "s:text", "i:-7", "b:1", "d:0.25".
std::pair<std::string, std::string> ReadKeyValue(const std::string& bytes) {
  const auto kv = ReadMessage(bytes);
  const auto key = One(kv, 1, 2).bytes;
  const auto any = ReadMessage(One(kv, 2, 2).bytes);
  if (any.size() != 1) throw std::runtime_error("AnyValue holds " + std::to_string(any.size()));
  const Field& v = any[0];
  switch (v.number) {
    case 1:
      return {key, "s:" + v.bytes};
    case 2:
      return {key, "b:" + std::to_string(v.value)};
    case 3:
      return {key, "i:" + std::to_string(static_cast<int64_t>(v.value))};
    case 4: {
      std::ostringstream out;
      out << "d:" << std::bit_cast<double>(v.value);
      return {key, out.str()};
    }
  }
  throw std::runtime_error("AnyValue field " + std::to_string(v.number));
}

// The fields of the first span of an encoded request.
std::vector<Field> FirstSpan(const std::string& request) {
  const auto resource_spans = ReadMessage(One(ReadMessage(request), 1, 2).bytes);
  const auto scope_spans = ReadMessage(One(resource_spans, 2, 2).bytes);
  return ReadMessage(All(scope_spans, 2).at(0).bytes);
}

std::string Bytes(std::initializer_list<uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(ResourceAttributes, ExportersOwnComeFirstAndAreNotRepeated) {
  std::vector<std::string> keys;
  for (const auto& a : ResourceAttributes(SampleResource())) keys.push_back(a.key);
  EXPECT_THAT(keys, ::testing::ElementsAre("service.name", "service.version", "telemetry.sdk.name",
                                           "telemetry.sdk.language", "deployment.environment"));
  Resource unversioned;
  EXPECT_EQ(ResourceAttributes(unversioned).size(), 3u);  // no empty service.version
}

TEST(EncodeJson, OneSpanWithEverything) {
  const Json actual = Json::parse(EncodeJson({ServerSpan()}, SampleResource()));
  const Json expected = Json::parse(R"({
    "resourceSpans": [{
      "resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "webhookd-test"}},
        {"key": "service.version", "value": {"stringValue": "1.2.3"}},
        {"key": "telemetry.sdk.name", "value": {"stringValue": "webhookd"}},
        {"key": "telemetry.sdk.language", "value": {"stringValue": "cpp"}},
        {"key": "deployment.environment", "value": {"stringValue": "test"}}
      ]},
      "scopeSpans": [{
        "scope": {"name": "webhookd", "version": "1.2.3"},
        "spans": [{
          "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
          "spanId": "00f067aa0ba902b7",
          "parentSpanId": "53995c3f42cd8ad8",
          "traceState": "vendor=a1",
          "flags": 1,
          "name": "POST /v1/events",
          "kind": 2,
          "startTimeUnixNano": "1700000000123456000",
          "endTimeUnixNano": "1700000000124956000",
          "attributes": [
            {"key": "http.request.method", "value": {"stringValue": "POST"}},
            {"key": "http.response.status_code", "value": {"intValue": "503"}},
            {"key": "webhookd.replayed", "value": {"boolValue": true}},
            {"key": "webhookd.ratio", "value": {"doubleValue": 0.25}},
            {"key": "webhookd.offset", "value": {"intValue": "-7"}},
            {"key": "webhookd.big", "value": {"intValue": "9223372036854775807"}}
          ],
          "status": {"code": 2, "message": "database unavailable"}
        }]
      }]
    }]
  })");
  EXPECT_EQ(actual, expected) << actual.dump(2);
}

TEST(EncodeJson, RootSpanHasNoParentAndZeroValuesAreKept) {
  const Json span =
      Json::parse(EncodeJson({ClientSpan()}, {}))["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_FALSE(span.contains("parentSpanId"));
  EXPECT_FALSE(span.contains("traceState"));
  EXPECT_EQ(span["kind"], 3);
  EXPECT_EQ(span["status"], Json::parse(R"({"code": 1})"));
  EXPECT_EQ(span["attributes"], Json::parse(R"([
    {"key": "zero", "value": {"intValue": "0"}},
    {"key": "false", "value": {"boolValue": false}},
    {"key": "empty", "value": {"stringValue": ""}},
    {"key": "nought", "value": {"doubleValue": 0.0}}
  ])"));
}

TEST(EncodeJson, NonFiniteDoublesAndBadUtf8) {
  Span s = ClientSpan();
  s.name = "caf\xc3";  // cut in the middle of a character
  s.attributes = {{"nan", std::nan("")},
                  {"inf", std::numeric_limits<double>::infinity()},
                  {"-inf", -std::numeric_limits<double>::infinity()}};
  const Json span =
      Json::parse(EncodeJson({s}, {}))["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(span["name"], "caf\xef\xbf\xbd");
  EXPECT_EQ(span["attributes"][0]["value"]["doubleValue"], "NaN");
  EXPECT_EQ(span["attributes"][1]["value"]["doubleValue"], "Infinity");
  EXPECT_EQ(span["attributes"][2]["value"]["doubleValue"], "-Infinity");
}

TEST(EncodeJson, NoSpans) {
  const Json scope = Json::parse(EncodeJson({}, {}))["resourceSpans"][0]["scopeSpans"][0];
  EXPECT_EQ(scope, Json::parse(R"({"scope": {"name": "webhookd"}})"));
}

TEST(EncodeProtobuf, DecodesFieldByField) {
  const std::string encoded = EncodeProtobuf({ServerSpan(), ClientSpan()}, SampleResource());
  const auto request = ReadMessage(encoded);
  ASSERT_EQ(Numbers(request), std::vector<uint32_t>{1});  // resource_spans
  const auto resource_spans = ReadMessage(One(request, 1, 2).bytes);
  EXPECT_EQ(Numbers(resource_spans), (std::vector<uint32_t>{1, 2}));

  const auto resource = ReadMessage(One(resource_spans, 1, 2).bytes);
  std::vector<std::pair<std::string, std::string>> resource_attributes;
  for (const auto& f : All(resource, 1)) resource_attributes.push_back(ReadKeyValue(f.bytes));
  EXPECT_THAT(resource_attributes,
              ::testing::ElementsAre(::testing::Pair("service.name", "s:webhookd-test"),
                                     ::testing::Pair("service.version", "s:1.2.3"),
                                     ::testing::Pair("telemetry.sdk.name", "s:webhookd"),
                                     ::testing::Pair("telemetry.sdk.language", "s:cpp"),
                                     ::testing::Pair("deployment.environment", "s:test")));

  const auto scope_spans = ReadMessage(One(resource_spans, 2, 2).bytes);
  const auto scope = ReadMessage(One(scope_spans, 1, 2).bytes);
  EXPECT_EQ(One(scope, 1, 2).bytes, "webhookd");
  EXPECT_EQ(One(scope, 2, 2).bytes, "1.2.3");
  const auto spans = All(scope_spans, 2);
  ASSERT_EQ(spans.size(), 2u);

  const auto server = ReadMessage(spans[0].bytes);
  // In field-number order, as protobuf's own encoders write them.
  EXPECT_EQ(Numbers(server),
            (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9, 9, 15, 16}));
  EXPECT_EQ(One(server, 1, 2).bytes, Bytes({0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3,
                                            0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}));
  EXPECT_EQ(One(server, 2, 2).bytes, Bytes({0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}));
  EXPECT_EQ(One(server, 3, 2).bytes, "vendor=a1");
  EXPECT_EQ(One(server, 4, 2).bytes, Bytes({0x53, 0x99, 0x5c, 0x3f, 0x42, 0xcd, 0x8a, 0xd8}));
  EXPECT_EQ(One(server, 5, 2).bytes, "POST /v1/events");
  EXPECT_EQ(One(server, 6, 0).value, 2u);
  EXPECT_EQ(One(server, 7, 1).value, 1700000000123456000u);
  EXPECT_EQ(One(server, 8, 1).value, 1700000000124956000u);
  std::vector<std::pair<std::string, std::string>> attributes;
  for (const auto& f : All(server, 9)) attributes.push_back(ReadKeyValue(f.bytes));
  EXPECT_THAT(attributes,
              ::testing::ElementsAre(::testing::Pair("http.request.method", "s:POST"),
                                     ::testing::Pair("http.response.status_code", "i:503"),
                                     ::testing::Pair("webhookd.replayed", "b:1"),
                                     ::testing::Pair("webhookd.ratio", "d:0.25"),
                                     ::testing::Pair("webhookd.offset", "i:-7"),
                                     ::testing::Pair("webhookd.big", "i:9223372036854775807")));
  const auto status = ReadMessage(One(server, 15, 2).bytes);
  EXPECT_EQ(Numbers(status), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(One(status, 2, 2).bytes, "database unavailable");
  EXPECT_EQ(One(status, 3, 0).value, 2u);
  EXPECT_EQ(One(server, 16, 5).value, 1u);

  const auto client = ReadMessage(spans[1].bytes);
  EXPECT_TRUE(All(client, 3).empty());  // no trace state
  EXPECT_TRUE(All(client, 4).empty());  // a root span: no parent
  EXPECT_EQ(One(client, 6, 0).value, 3u);
  attributes.clear();
  for (const auto& f : All(client, 9)) attributes.push_back(ReadKeyValue(f.bytes));
  EXPECT_THAT(attributes, ::testing::ElementsAre(
                              ::testing::Pair("zero", "i:0"), ::testing::Pair("false", "b:0"),
                              ::testing::Pair("empty", "s:"), ::testing::Pair("nought", "d:0")));
  const auto ok = ReadMessage(One(client, 15, 2).bytes);
  EXPECT_EQ(Numbers(ok), std::vector<uint32_t>{3});
  EXPECT_EQ(One(ok, 3, 0).value, 1u);
}

TEST(EncodeProtobuf, NegativeIntIsTenBytesOfTwosComplement) {
  Span s = ClientSpan();
  s.attributes = {{"n", int64_t{-1}}};
  const auto span = FirstSpan(EncodeProtobuf({s}, {}));
  const std::string any = One(ReadMessage(One(span, 9, 2).bytes), 2, 2).bytes;
  // The tag, then 0xff nine times and 0x01: int64 is not zigzag-encoded.
  EXPECT_EQ(any, "\x18" + std::string(9, '\xff') + "\x01");
  EXPECT_EQ(One(ReadMessage(any), 3, 0).value, ~uint64_t{0});
}

TEST(EncodeProtobuf, RepairsBadUtf8) {
  Span s = ClientSpan();
  s.name = "caf\xc3";
  s.attributes.clear();
  const auto span = FirstSpan(EncodeProtobuf({s}, {}));
  EXPECT_EQ(One(span, 5, 2).bytes, "caf\xef\xbf\xbd");
}

}  // namespace
}  // namespace webhookd::trace::otlp_encoding_test
