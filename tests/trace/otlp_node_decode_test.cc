// EncodeProtobuf and EncodeJson read back by tests/otlp/decode.mjs, which decodes with the
// classes OpenTelemetry generated from opentelemetry-proto (the npm package
// @opentelemetry/otlp-transformer): both encodings must give the same spans, with the
// values they were made from. Skipped without node or `npm ci` in tests/otlp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/trace/node_tools.h"
#include "tests/trace/sample_spans.h"
#include "trace/otlp_encoding.h"

namespace webhookd::trace::otlp_node_decode_test {
namespace {

using Json = nlohmann::json;

// The spans decode.mjs prints for `body`, one object each.
std::vector<Json> Decode(const std::string& body, std::string_view content_type,
                         const std::string& suffix) {
  const std::string path =
      ::testing::TempDir() + "otlp_node_decode_test-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary) << body;
  const node::Run run = node::Capture(
      {node::FindNode(), node::kOtlpDir + "/decode.mjs", path, std::string(content_type)});
  ::unlink(path.c_str());
  EXPECT_EQ(run.exit_code, 0) << "decode.mjs failed on " << content_type
                              << " (its stderr is above)";
  std::vector<Json> spans;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) spans.push_back(Json::parse(line));
  return spans;
}

TEST(OtlpNodeDecode, BothEncodingsDecodeToTheSpansTheyWereMadeFrom) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  Span with_nan = samples::ClientSpan();
  with_nan.attributes.push_back({"nan", std::nan("")});
  const std::vector<Span> spans = {samples::ServerSpan(), with_nan};
  const Resource resource = samples::SampleResource();

  std::vector<Json> from_protobuf =
      Decode(EncodeProtobuf(spans, resource), kProtobufContentType, ".pb");
  std::vector<Json> from_json = Decode(EncodeJson(spans, resource), kJsonContentType, ".json");
  ASSERT_EQ(from_protobuf.size(), 2u);
  ASSERT_EQ(from_json.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(from_protobuf[i]["contentType"], "application/x-protobuf");
    EXPECT_EQ(from_json[i]["contentType"], "application/json");
    from_protobuf[i].erase("contentType");
    from_json[i].erase("contentType");
    EXPECT_EQ(from_protobuf[i], from_json[i]) << "span " << i;
  }

  const Json expected_resource = Json::parse(R"({
    "service.name": "webhookd-test", "service.version": "1.2.3",
    "telemetry.sdk.name": "webhookd", "telemetry.sdk.language": "cpp",
    "deployment.environment": "test"})");
  const Json server = Json::parse(R"({
    "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
    "spanId": "00f067aa0ba902b7",
    "parentSpanId": "53995c3f42cd8ad8",
    "traceState": "vendor=a1",
    "flags": 1,
    "name": "POST /v1/events",
    "kind": 2,
    "startTimeUnixNano": "1700000000123456000",
    "endTimeUnixNano": "1700000000124956000",
    "attributes": {
      "http.request.method": "POST", "http.response.status_code": "503",
      "webhookd.replayed": true, "webhookd.ratio": 0.25, "webhookd.offset": "-7",
      "webhookd.big": "9223372036854775807"},
    "attributeTypes": {
      "http.request.method": "string", "http.response.status_code": "int",
      "webhookd.replayed": "bool", "webhookd.ratio": "double", "webhookd.offset": "int",
      "webhookd.big": "int"},
    "status": {"code": 2, "message": "database unavailable"},
    "scope": {"name": "webhookd", "version": "1.2.3"}})");
  Json actual = from_protobuf[0];
  EXPECT_EQ(actual["resource"], expected_resource);
  actual.erase("resource");
  actual.erase("resourceTypes");
  EXPECT_EQ(actual, server) << actual.dump(2);

  const Json& client = from_protobuf[1];
  EXPECT_EQ(client["traceId"], "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(client["spanId"], "b7ad6b7169203331");
  EXPECT_EQ(client["parentSpanId"], "");  // a root span
  EXPECT_EQ(client["kind"], 3);
  EXPECT_EQ(client["startTimeUnixNano"], "1700000001000000000");
  EXPECT_EQ(client["endTimeUnixNano"], "1700000001042000000");
  EXPECT_EQ(client["attributes"],
            Json::parse(R"({"zero": "0", "false": false, "empty": "", "nought": 0, "nan": null})"));
  EXPECT_EQ(client["attributeTypes"], Json::parse(R"({"zero": "int", "false": "bool",
      "empty": "string", "nought": "double", "nan": "double"})"));
  EXPECT_EQ(client["status"], Json::parse(R"({"code": 1, "message": ""})"));
}

// The checks refuse what is not OTLP, so a passing test above means something.
TEST(OtlpNodeDecode, RefusesWhatIsNotOtlp) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string path =
      ::testing::TempDir() + "otlp_node_decode_test-" + std::to_string(::getpid()) + ".bad";
  const auto run = [&](const std::string& body, const std::string& content_type) {
    std::ofstream(path, std::ios::binary) << body;
    const int code =
        node::Capture({node::FindNode(), node::kOtlpDir + "/decode.mjs", path, content_type})
            .exit_code;
    ::unlink(path.c_str());
    return code;
  };
  // A span (resource_spans > scope_spans > spans) whose name went out as field 6.
  std::string span = "\x32\x01x";
  std::string scope_spans = "\x12" + std::string(1, static_cast<char>(span.size())) + span;
  std::string resource_spans =
      "\x12" + std::string(1, static_cast<char>(scope_spans.size())) + scope_spans;
  EXPECT_EQ(run("\x0a" + std::string(1, static_cast<char>(resource_spans.size())) + resource_spans,
                "application/x-protobuf"),
            1);
  // Unknown field 99 at the top.
  EXPECT_EQ(run(std::string("\x9a\x06\x00", 3), "application/x-protobuf"), 1);
  // OTLP/JSON that protobuf's JSON mapping would write: base64 ids, a named enum.
  EXPECT_EQ(
      run(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"S/kvNXezTaajzpKdDg5HNg=="}]}]}]})",
          "application/json"),
      1);
  EXPECT_EQ(run(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_SERVER"}]}]}]})",
                "application/json"),
            1);
  EXPECT_EQ(run(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":17}]}]}]})",
                "application/json"),
            1);
  EXPECT_EQ(run(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"trace_id":"00"}]}]}]})",
                "application/json"),
            1);
  EXPECT_EQ(
      run(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"ok"}]}]}]})", "application/json"),
      0);
}

}  // namespace
}  // namespace webhookd::trace::otlp_node_decode_test
