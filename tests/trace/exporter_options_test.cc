#include "trace/exporter_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace webhookd::trace::exporter_options_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using namespace std::chrono_literals;

using Env = std::map<std::string, std::string>;

EnvLookup Lookup(const Env& env) {
  return [env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

ExporterOptions Parse(Env env) {
  auto options = ExporterOptionsFromEnv(Lookup(env));
  EXPECT_TRUE(options.has_value()) << options.error().message;
  EXPECT_TRUE(options.has_value() && options->has_value()) << "no options";
  return options && *options ? **options : ExporterOptions{};
}

std::string ErrorOf(Env env) {
  auto options = ExporterOptionsFromEnv(Lookup(env));
  EXPECT_FALSE(options.has_value());
  return options ? "" : options.error().message;
}

Env WithEndpoint(Env env) {
  env.emplace("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
  return env;
}

TEST(ExporterOptionsFromEnv, NoEndpointMeansNoExport) {
  auto options = ExporterOptionsFromEnv(Lookup({{"OTEL_SERVICE_NAME", "x"}}));
  ASSERT_TRUE(options.has_value());
  EXPECT_FALSE(options->has_value());
}

TEST(ExporterOptionsFromEnv, EmptyEndpointIsUnset) {
  auto options = ExporterOptionsFromEnv(Lookup({{"OTEL_EXPORTER_OTLP_ENDPOINT", ""}}));
  ASSERT_TRUE(options.has_value());
  EXPECT_FALSE(options->has_value());
}

TEST(ExporterOptionsFromEnv, DisabledSdkOrNoneExporterMeansNoExport) {
  for (const Env& env : {WithEndpoint({{"OTEL_SDK_DISABLED", "true"}}),
                         WithEndpoint({{"OTEL_SDK_DISABLED", "TRUE"}}),
                         WithEndpoint({{"OTEL_TRACES_EXPORTER", "none"}})}) {
    auto options = ExporterOptionsFromEnv(Lookup(env));
    ASSERT_TRUE(options.has_value());
    EXPECT_FALSE(options->has_value());
  }
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_SDK_DISABLED", "false"}})).endpoint,
            "http://collector:4318/v1/traces");
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_TRACES_EXPORTER", "otlp"}})).endpoint,
            "http://collector:4318/v1/traces");
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_TRACES_EXPORTER", "zipkin"}})),
              HasSubstr("OTEL_TRACES_EXPORTER"));
}

TEST(ExporterOptionsFromEnv, Defaults) {
  const ExporterOptions o = Parse(WithEndpoint({}));
  EXPECT_EQ(o.endpoint, "http://collector:4318/v1/traces");
  EXPECT_TRUE(o.headers.empty());
  EXPECT_EQ(o.protocol, OtlpProtocol::kHttpProtobuf);
  EXPECT_EQ(o.timeout, 10000ms);
  EXPECT_EQ(o.resource.service_name, "webhookd");
  EXPECT_EQ(o.resource.service_version, WEBHOOKD_VERSION);
  EXPECT_TRUE(o.resource.attributes.empty());
  EXPECT_EQ(o.schedule_delay, 5000ms);
  EXPECT_EQ(o.max_queue_size, 2048u);
  EXPECT_EQ(o.max_export_batch_size, 512u);
  EXPECT_EQ(o.export_timeout, 30000ms);
}

TEST(ExporterOptionsFromEnv, GeneralEndpointGetsTheTracesPath) {
  const auto endpoint = [](std::string base) {
    return Parse({{"OTEL_EXPORTER_OTLP_ENDPOINT", base}}).endpoint;
  };
  EXPECT_EQ(endpoint("http://collector:4318"), "http://collector:4318/v1/traces");
  EXPECT_EQ(endpoint("http://collector:4318/"), "http://collector:4318/v1/traces");
  EXPECT_EQ(endpoint("https://collector/otlp"), "https://collector/otlp/v1/traces");
  EXPECT_EQ(endpoint("https://collector/otlp/"), "https://collector/otlp/v1/traces");
}

TEST(ExporterOptionsFromEnv, TracesEndpointIsUsedAsIsAndWins) {
  EXPECT_EQ(Parse({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://a:4318/custom/"}}).endpoint,
            "http://a:4318/custom/");
  EXPECT_EQ(Parse({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://a:4318"},
                   {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:4318"}})
                .endpoint,
            "http://a:4318");
}

TEST(ExporterOptionsFromEnv, EndpointMustBeHttpOrHttpsWithAHost) {
  for (const std::string url : {"grpc://collector:4317", "collector:4318", "ftp://x/", "http://",
                                "http:///v1/traces", "http://:4318/", "http://a b/"}) {
    const std::string error = ErrorOf({{"OTEL_EXPORTER_OTLP_ENDPOINT", url}});
    EXPECT_THAT(error, HasSubstr("OTEL_EXPORTER_OTLP_ENDPOINT")) << url;
  }
  EXPECT_THAT(ErrorOf({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "unix:///run/otel.sock"}}),
              HasSubstr("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
  // A URL may carry a password: the error does not repeat it.
  EXPECT_THAT(ErrorOf({{"OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://user:hunter2@x/"}}),
              Not(HasSubstr("hunter2")));
  EXPECT_EQ(Parse({{"OTEL_EXPORTER_OTLP_ENDPOINT", "HTTPS://[::1]:4318"}}).endpoint,
            "HTTPS://[::1]:4318/v1/traces");
}

TEST(ExporterOptionsFromEnv, HeadersAreTrimmedAndPercentDecoded) {
  const ExporterOptions o =
      Parse(WithEndpoint({{"OTEL_EXPORTER_OTLP_HEADERS",
                           " api-key = s%20e%3Dc%2Cret , X-Tenant=a%2Fb,, empty= ,plus=a+b"}}));
  EXPECT_THAT(o.headers, ElementsAre(Pair("api-key", "s e=c,ret"), Pair("X-Tenant", "a/b"),
                                     Pair("empty", ""), Pair("plus", "a+b")));
}

TEST(ExporterOptionsFromEnv, TracesHeadersReplaceTheGeneralOnes) {
  const ExporterOptions o = Parse(WithEndpoint(
      {{"OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=2"}, {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "c=3"}}));
  EXPECT_THAT(o.headers, ElementsAre(Pair("c", "3")));
}

TEST(ExporterOptionsFromEnv, BadHeadersNameTheVariableNotTheValue) {
  for (const std::string headers :
       {"authorization", "=secret-token", "authorization=secret-token%zz",
        "authorization=secret-token%2", "author ization=secret-token",
        "authorization=secret-token%0D%0AX-Evil: 1"}) {
    const std::string error = ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_HEADERS", headers}}));
    EXPECT_THAT(error, HasSubstr("OTEL_EXPORTER_OTLP_HEADERS")) << headers;
    EXPECT_THAT(error, Not(HasSubstr("secret"))) << headers;
  }
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=1,b"}})),
              HasSubstr("OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 2"));
}

TEST(ExporterOptionsFromEnv, Protocol) {
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}})).protocol,
            OtlpProtocol::kHttpJson);
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"}})).protocol,
            OtlpProtocol::kHttpProtobuf);
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
                                {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"}}))
                .protocol,
            OtlpProtocol::kHttpProtobuf);
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}})),
              HasSubstr("OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported"));
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"}})),
              HasSubstr("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: grpc is not supported"));
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"}})),
              HasSubstr("OTEL_EXPORTER_OTLP_PROTOCOL: expected http/protobuf or http/json"));
}

TEST(ExporterOptionsFromEnv, Timeout) {
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"}})).timeout, 2500ms);
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                                {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700"}}))
                .timeout,
            700ms);
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10s"}})),
              HasSubstr("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: expected a whole number"));
  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_EXPORTER_OTLP_TIMEOUT", "0"}})),
              HasSubstr("OTEL_EXPORTER_OTLP_TIMEOUT"));
}

TEST(ExporterOptionsFromEnv, ServiceNameAndResourceAttributes) {
  ExporterOptions o = Parse(WithEndpoint(
      {{"OTEL_RESOURCE_ATTRIBUTES",
        "service.name=from-attributes, deployment.environment=prod,region=eu%2Dwest"}}));
  EXPECT_EQ(o.resource.service_name, "from-attributes");
  ASSERT_EQ(o.resource.attributes.size(), 2u);
  EXPECT_EQ(o.resource.attributes[0].key, "deployment.environment");
  EXPECT_EQ(std::get<std::string>(o.resource.attributes[0].value), "prod");
  EXPECT_EQ(o.resource.attributes[1].key, "region");
  EXPECT_EQ(std::get<std::string>(o.resource.attributes[1].value), "eu-west");

  o = Parse(WithEndpoint({{"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attributes"},
                          {"OTEL_SERVICE_NAME", "from-service-name"}}));
  EXPECT_EQ(o.resource.service_name, "from-service-name");
  EXPECT_TRUE(o.resource.attributes.empty());

  EXPECT_THAT(ErrorOf(WithEndpoint({{"OTEL_RESOURCE_ATTRIBUTES", "a=1,oops"}})),
              HasSubstr("OTEL_RESOURCE_ATTRIBUTES: entry 2 is not key=value"));
}

TEST(ExporterOptionsFromEnv, BatchSpanProcessor) {
  const ExporterOptions o = Parse(WithEndpoint({{"OTEL_BSP_SCHEDULE_DELAY", "250"},
                                                {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
                                                {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "40"},
                                                {"OTEL_BSP_EXPORT_TIMEOUT", "9000"}}));
  EXPECT_EQ(o.schedule_delay, 250ms);
  EXPECT_EQ(o.max_queue_size, 100u);
  EXPECT_EQ(o.max_export_batch_size, 40u);
  EXPECT_EQ(o.export_timeout, 9000ms);
  // An unset batch size follows a smaller queue down.
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_BSP_MAX_QUEUE_SIZE", "100"}})).max_export_batch_size, 100u);
  EXPECT_EQ(Parse(WithEndpoint({{"OTEL_BSP_SCHEDULE_DELAY", "0"}})).schedule_delay, 0ms);
}

TEST(ExporterOptionsFromEnv, BadNumbersNameTheVariable) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"OTEL_BSP_SCHEDULE_DELAY", "-1"},
           {"OTEL_BSP_SCHEDULE_DELAY", "5s"},
           {"OTEL_BSP_MAX_QUEUE_SIZE", "0"},
           {"OTEL_BSP_MAX_QUEUE_SIZE", "lots"},
           {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "0"},
           {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4096"},  // more than the queue's 2048
           {"OTEL_BSP_EXPORT_TIMEOUT", "0"},
           {"OTEL_BSP_EXPORT_TIMEOUT", "1e3"},
           {"OTEL_EXPORTER_OTLP_TIMEOUT", "99999999999999999999"},
       }) {
    EXPECT_THAT(ErrorOf(WithEndpoint({{name, value}})), HasSubstr(name + ": expected"))
        << name << "=" << value;
  }
}

// TraceVariables() is the list `webhookd server --help` prints: every variable the
// parser reads must be in it, and each must be in docs/tracing.md's table (a per-signal
// _TRACES_ name in the row of its general one).
TEST(TraceVariables, ListEveryVariableReadAndAreDocumented) {
  std::set<std::string> listed;
  for (const ConfigVariable& v : TraceVariables()) listed.emplace(v.name);
  std::set<std::string> read;
  const EnvLookup recording = [&read](std::string_view name) -> std::optional<std::string> {
    read.emplace(name);
    if (name == "OTEL_EXPORTER_OTLP_ENDPOINT") return "http://127.0.0.1:4318";
    return std::nullopt;
  };
  ASSERT_TRUE(ExporterOptionsFromEnv(recording).has_value());
  read.insert({"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"});  // cmd/webhookd/tracing.cc
  for (const std::string& name : read) EXPECT_TRUE(listed.contains(name)) << name;
  EXPECT_GE(read.size(), 16u);

  std::ifstream file(std::string(WEBHOOKD_SOURCE_DIR) + "/docs/tracing.md");
  ASSERT_TRUE(file) << "docs/tracing.md not found";
  std::stringstream text;
  text << file.rdbuf();
  for (const std::string& name : listed) {
    std::string general = name;
    if (const size_t at = general.find("_TRACES_"); at != std::string::npos &&
                                                    name != "OTEL_TRACES_EXPORTER" &&
                                                    !name.starts_with("OTEL_TRACES_SAMPLER")) {
      general.erase(at, std::string("_TRACES").size());
    }
    const bool named = text.str().find("`" + general + "`") != std::string::npos ||
                       text.str().find("`" + general + "=") != std::string::npos;
    EXPECT_TRUE(named) << name << " is not in docs/tracing.md";
  }
}

}  // namespace
}  // namespace webhookd::trace::exporter_options_test
