// The exporter and its libcurl transport against tests/otlp/receiver.mjs, an OTLP/HTTP
// receiver that decodes with OpenTelemetry's own definitions. Skipped without node or
// `npm ci` in tests/otlp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/testing/process.h"
#include "tests/testing/wait.h"
#include "tests/trace/node_tools.h"
#include "tests/trace/sample_spans.h"
#include "trace/curl_transport.h"
#include "trace/exporter.h"

namespace webhookd::trace::otlp_receiver_test {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using webhookd::testing::Process;
using webhookd::testing::ReadFile;

// receiver.mjs on a free port, recording to a file of its own.
class Receiver {
 public:
  explicit Receiver(std::vector<std::string> flags) {
    const std::string stem = ::testing::TempDir() + "otlp_receiver_test-" +
                             std::to_string(::getpid()) + "-" + std::to_string(++count_);
    out_ = stem + ".jsonl";
    log_ = stem + ".log";
    ::unlink(out_.c_str());
    ::unlink(log_.c_str());
    std::vector<std::string> argv = {
        node::FindNode(), node::kOtlpDir + "/receiver.mjs", "--port", "0", "--out", out_};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Process>(argv, std::map<std::string, std::string>{}, log_);
    const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
    webhookd::testing::WaitUntil(
        [&] {
          std::smatch m;
          const std::string log = ReadFile(log_);
          if (!std::regex_search(log, m, listening)) return false;
          port_ = std::stoi(m[1]);
          return true;
        },
        30s, 10ms);
    if (port_ == 0) ADD_FAILURE() << "receiver.mjs did not start: " << ReadFile(log_);
  }
  ~Receiver() {
    ::unlink(out_.c_str());
    ::unlink(log_.c_str());
  }

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // The spans recorded so far.
  std::vector<Json> spans() const {
    std::vector<Json> out;
    std::istringstream lines(ReadFile(out_));
    for (std::string line; std::getline(lines, line);) out.push_back(Json::parse(line));
    return out;
  }
  std::string log() const { return ReadFile(log_); }

 private:
  static inline int count_ = 0;
  std::string out_;
  std::string log_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

TEST(OtlpReceiver, CurlTransportPostsProtobufWithHeadersAndReadsRetryAfter) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  Receiver receiver({"--fail", "1", "--retry-after", "7"});
  SystemClock clock;
  CurlTransport transport(clock);
  const std::string url = receiver.base() + "/v1/traces";
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"Authorization", "Bearer t0k3n"}, {"X-Tenant", "a b"}};
  const std::string body = EncodeProtobuf({samples::ServerSpan()}, samples::SampleResource());

  auto answer = transport.Post(url, headers, "application/x-protobuf", body, 10s);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(answer->retry_after, 7000ms);

  answer = transport.Post(url, headers, "application/x-protobuf", body, 10s);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->retry_after, std::nullopt);

  const auto spans = receiver.spans();
  ASSERT_EQ(spans.size(), 1u) << receiver.log();
  EXPECT_EQ(spans[0]["name"], "POST /v1/events");
  EXPECT_EQ(spans[0]["contentType"], "application/x-protobuf");
  const Json& got = spans[0]["headers"];
  EXPECT_EQ(got["authorization"], "Bearer t0k3n");
  EXPECT_EQ(got["x-tenant"], "a b");
  EXPECT_EQ(got["content-type"], "application/x-protobuf");
  EXPECT_THAT(got["user-agent"].get<std::string>(), ::testing::StartsWith("webhookd/"));
  EXPECT_FALSE(got.contains("expect"));

  // A path the receiver does not serve: an answer, not an error, and not followed.
  answer = transport.Post(receiver.base() + "/elsewhere", {}, "application/json", "{}", 10s);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 404);
}

TEST(OtlpReceiver, ExporterConfiguredFromTheEnvironmentDeliversEverySpan) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  // The first export is refused with Retry-After: 0, so the retry goes at once.
  Receiver receiver({"--fail", "1", "--retry-after", "0"});
  const std::map<std::string, std::string> env = {
      {"OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base() + "/"},
      {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=s%20cret,x-scope=tenant%2F1"},
      {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
      {"OTEL_SERVICE_NAME", "webhookd-e2e"},
      {"OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=ci"},
      {"OTEL_BSP_SCHEDULE_DELAY", "20"},
      {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2"},
  };
  auto options = ExporterOptionsFromEnv([&](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    return it == env.end() ? std::nullopt : std::optional(it->second);
  });
  ASSERT_TRUE(options.has_value()) << options.error().message;
  ASSERT_TRUE(options->has_value());

  SystemClock clock;
  Counter exported, dropped;
  OtlpExporter exporter(**options, std::make_unique<CurlTransport>(clock), exported, dropped);
  for (int i = 0; i < 5; ++i) {
    Span s = samples::ServerSpan();
    s.name = "span " + std::to_string(i);
    exporter.Emit(std::move(s));
  }
  exporter.Shutdown(20s);
  EXPECT_EQ(exported.value(), 5u) << receiver.log();
  EXPECT_EQ(dropped.value(), 0u);

  const auto spans = receiver.spans();
  ASSERT_EQ(spans.size(), 5u) << receiver.log();
  std::vector<std::string> names;
  for (const auto& s : spans) names.push_back(s["name"]);
  EXPECT_THAT(names, ::testing::ElementsAre("span 0", "span 1", "span 2", "span 3", "span 4"));
  EXPECT_EQ(spans[0]["contentType"], "application/json");
  EXPECT_EQ(spans[0]["headers"]["api-key"], "s cret");
  EXPECT_EQ(spans[0]["headers"]["x-scope"], "tenant/1");
  EXPECT_EQ(spans[0]["resource"]["service.name"], "webhookd-e2e");
  EXPECT_EQ(spans[0]["resource"]["service.version"], WEBHOOKD_VERSION);
  EXPECT_EQ(spans[0]["resource"]["deployment.environment"], "ci");
  EXPECT_EQ(spans[0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(spans[0]["parentSpanId"], "53995c3f42cd8ad8");
}

}  // namespace
}  // namespace webhookd::trace::otlp_receiver_test
