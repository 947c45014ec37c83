// OpenTelemetry export end to end (docs/tracing.md): a producer's event with a traceparent,
// a receiver that fails once, and an OTLP receiver (tests/otlp/receiver.mjs, which reads
// with OpenTelemetry's own definitions) that must get the ingest span and one attempt span
// per attempt, all in the producer's trace, parented right, with the documented
// attributes, while the receiver's traceparent names each attempt's span; in protobuf and
// in JSON. And a collector that never answers changes nothing in delivery or shutdown.
// Skipped without node and `npm ci` in tests/otlp (scripts/test runs it).
#include <gtest/gtest.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <unistd.h>

#include <regex>
#include <sstream>

#include "base/encoding.h"
#include "tests/testing/process.h"
#include "tests/testing/raw_listener.h"
#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/wait.h"
#include "tests/testing/webhookd_process.h"
#include "tests/trace/node_tools.h"

namespace webhookd::testing::tracing_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
namespace node = trace::node;

constexpr const char* kTrace = "0af7651916cd43dd8448eb211c80319c";
constexpr const char* kProducerSpan = "b7ad6b7169203331";

// tests/otlp/receiver.mjs on a free port, recording spans to a file of its own.
class OtlpReceiver {
 public:
  OtlpReceiver() {
    const std::string stem = TestLogDir() + "/tracing_e2e-otlp-" + std::to_string(::getpid()) +
                             "-" + std::to_string(++count_);
    out_ = stem + ".jsonl";
    ::unlink(out_.c_str());
    process_ = std::make_unique<Process>(
        std::vector<std::string>{node::FindNode(), node::kOtlpDir + "/receiver.mjs", "--port", "0",
                                 "--out", out_},
        std::map<std::string, std::string>{}, stem + ".log");
    const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
    WaitUntil(
        [&] {
          std::smatch m;
          const std::string log = ReadFile(process_->log_path());
          if (!std::regex_search(log, m, listening)) return false;
          port_ = std::stoi(m[1]);
          return true;
        },
        30s, 10ms);
  }
  int port() const { return port_; }
  std::vector<Json> spans() const {
    std::vector<Json> out;
    std::istringstream lines(ReadFile(out_));
    for (std::string line; std::getline(lines, line);) out.push_back(Json::parse(line));
    return out;
  }

 private:
  static inline int count_ = 0;
  std::string out_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
};

class TracingE2eTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TracingE2eTest, IngestAndEveryAttemptAreSpansOfTheProducersTrace) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  OtlpReceiver otlp;
  ASSERT_NE(otlp.port(), 0) << "receiver.mjs did not start";
  TestDatabase db;
  Receiver receiver([](const Received&, int nth) {
    Answer a;
    a.status = nth == 0 ? 503 : 200;
    return a;
  });
  WebhookdProcess webhookd(
      db.url(), "all",
      {{"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms"},
       {"WEBHOOKD_RETRY_JITTER", "0"},
       {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + std::to_string(otlp.port())},
       {"OTEL_EXPORTER_OTLP_PROTOCOL", GetParam()},
       {"OTEL_EXPORTER_OTLP_HEADERS", "x-team=hooks"},
       {"OTEL_SERVICE_NAME", "webhookd-e2e"},
       {"OTEL_BSP_SCHEDULE_DELAY", "100"}});
  auto created = webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string destination_id = Json::parse(created.body)["id"];
  auto client = webhookd.Client();
  auto res = client->Post(
      "/v1/events", {{"traceparent", std::string("00-") + kTrace + "-" + kProducerSpan + "-01"}},
      R"({"type":"order.created","payload":{"n":1}})", "application/json");
  ASSERT_TRUE(res && res->status == 202) << (res ? res->body : "no answer");
  const std::string event_id = Json::parse(res->body)["id"];

  std::vector<Json> spans;
  ASSERT_TRUE(WaitUntil(
      [&] {
        spans = otlp.spans();
        return spans.size() >= 3 && receiver.count() >= 2;
      },
      20s, 50ms))
      << spans.size() << " spans, " << receiver.count() << " requests";
  std::this_thread::sleep_for(300ms);  // nothing more may come
  spans = otlp.spans();
  ASSERT_EQ(spans.size(), 3u);

  const Json* ingest = nullptr;
  std::vector<const Json*> attempts;
  for (const Json& s : spans) {
    EXPECT_EQ(s["traceId"], kTrace) << s.dump();
    EXPECT_EQ(s["resource"]["service.name"], "webhookd-e2e");
    EXPECT_EQ(s["headers"]["x-team"], "hooks");
    EXPECT_EQ(s["contentType"],
              GetParam() == "http/json" ? "application/json" : "application/x-protobuf");
    if (s["name"] == "webhookd ingest") ingest = &s;
    if (s["name"] == "webhookd attempt") attempts.push_back(&s);
  }
  ASSERT_NE(ingest, nullptr);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ((*ingest)["kind"], 2) << "server";
  EXPECT_EQ((*ingest)["parentSpanId"], kProducerSpan);
  EXPECT_EQ((*ingest)["attributes"]["webhookd.event.id"], event_id);
  EXPECT_EQ((*ingest)["attributes"]["http.request.method"], "POST");
  EXPECT_EQ((*ingest)["attributes"]["http.response.status_code"], "202");

  std::sort(attempts.begin(), attempts.end(), [](const Json* a, const Json* b) {
    return a->at("attributes").at("webhookd.attempt.number") <
           b->at("attributes").at("webhookd.attempt.number");
  });
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Json& a = *attempts[i];
    EXPECT_EQ(a["kind"], 3) << "client";
    EXPECT_EQ(a["parentSpanId"], (*ingest)["spanId"]) << "a child of the ingest span";
    const Json& at = a["attributes"];
    EXPECT_EQ(at["webhookd.attempt.number"], std::to_string(i + 1));
    EXPECT_EQ(at["webhookd.event.id"], event_id);
    EXPECT_EQ(at["webhookd.destination.id"], destination_id);
    EXPECT_TRUE(at.contains("webhookd.delivery.id"));
    EXPECT_EQ(at["url.full"], "http://127.0.0.1:" + std::to_string(receiver.port()));
    EXPECT_EQ(at["http.request.method"], "POST");
    EXPECT_EQ(at["http.response.status_code"], i == 0 ? "503" : "200");
    EXPECT_EQ(at["webhookd.attempt.outcome"], i == 0 ? "retryable" : "success");
    EXPECT_EQ(at.contains("error.type"), i == 0);
    EXPECT_EQ(a["status"]["code"], i == 0 ? 2 : 0);
    // The receiver's traceparent names this attempt's span.
    EXPECT_EQ(requests[i].header("traceparent"),
              std::string("00-") + kTrace + "-" + a["spanId"].get<std::string>() + "-01");
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, TracingE2eTest, ::testing::Values("http/protobuf", "http/json"),
                         [](const auto& info) {
                           return info.param == "http/json" ? std::string("Json")
                                                            : std::string("Protobuf");
                         });

// A request to an inbound source is a server span that starts a trace (providers send no
// traceparent); the attempts of the event it made are its children.
TEST(TracingInboundE2eTest, AnInboundRequestIsTheSpanItsEventsAttemptsContinue) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  OtlpReceiver otlp;
  ASSERT_NE(otlp.port(), 0) << "receiver.mjs did not start";
  TestDatabase db;
  Receiver receiver;
  WebhookdProcess webhookd(
      db.url(), "all",
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + std::to_string(otlp.port())},
       {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
       {"OTEL_BSP_SCHEDULE_DELAY", "100"}});
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}}).status, 201);
  auto source = webhookd.Call("POST", "/v1/sources", {{"provider", "github"}, {"secret", "k"}});
  ASSERT_EQ(source.status, 201) << source.body;
  const std::string source_id = Json::parse(source.body)["id"];
  const std::string body = R"({"action":"opened"})";
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), "k", 1, reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac,
       &len);
  auto client = webhookd.Client();
  auto res =
      client->Post("/in/" + source_id,
                   {{"X-Hub-Signature-256",
                     "sha256=" + HexEncode(std::string(reinterpret_cast<const char*>(mac), len))},
                    {"X-GitHub-Delivery", "d-1"},
                    {"X-GitHub-Event", "issues"}},
                   body, "application/json");
  ASSERT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
  const std::string event_id = Json::parse(res->body)["event_id"];

  std::vector<Json> spans;
  ASSERT_TRUE(WaitUntil(
      [&] {
        spans = otlp.spans();
        return spans.size() >= 2 && receiver.count() >= 1;
      },
      20s, 50ms))
      << spans.size() << " spans, " << receiver.count() << " requests";
  const Json* inbound = nullptr;
  const Json* attempt = nullptr;
  for (const Json& s : spans) {
    if (s["name"] == "webhookd inbound") inbound = &s;
    if (s["name"] == "webhookd attempt") attempt = &s;
  }
  ASSERT_NE(inbound, nullptr);
  ASSERT_NE(attempt, nullptr);
  EXPECT_EQ((*inbound)["kind"], 2) << "server";
  EXPECT_FALSE(inbound->contains("parentSpanId") &&
               !(*inbound)["parentSpanId"].get<std::string>().empty())
      << "a root";
  const Json& at = (*inbound)["attributes"];
  EXPECT_EQ(at["webhookd.source.id"], source_id);
  EXPECT_EQ(at["webhookd.source.provider"], "github");
  EXPECT_EQ(at["webhookd.inbound.outcome"], "accepted");
  EXPECT_EQ(at["webhookd.event.id"], event_id);
  EXPECT_EQ(at["http.response.status_code"], "200");
  EXPECT_EQ((*attempt)["traceId"], (*inbound)["traceId"]);
  EXPECT_EQ((*attempt)["parentSpanId"], (*inbound)["spanId"]) << "a child of the inbound span";
}

// A feed's read and ack are server spans in the consumer's trace, naming the feed and how
// many messages each moved.
TEST(TracingFeedE2eTest, AFeedsReadAndAckAreSpansOfTheConsumersTrace) {
  if (const std::string why = node::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  OtlpReceiver otlp;
  ASSERT_NE(otlp.port(), 0) << "receiver.mjs did not start";
  TestDatabase db;
  WebhookdProcess webhookd(
      db.url(), "all",
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + std::to_string(otlp.port())},
       {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
       {"OTEL_BSP_SCHEDULE_DELAY", "100"}});
  auto made = webhookd.Call("POST", "/v1/destinations", {{"url", "feed:"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string feed = Json::parse(made.body)["id"];
  auto event =
      webhookd.Call("POST", "/v1/events", {{"type", "order.created"}, {"payload", {{"n", 1}}}});
  ASSERT_EQ(event.status, 202) << event.body;
  const std::string event_id = Json::parse(event.body)["id"];
  const std::string traceparent = std::string("00-") + kTrace + "-" + kProducerSpan + "-01";
  auto client = webhookd.Client();
  auto read =
      client->Get("/v1/destinations/" + feed + "/messages?wait=5", {{"traceparent", traceparent}});
  ASSERT_TRUE(read && read->status == 200) << (read ? read->body : "no answer");
  ASSERT_EQ(Json::parse(read->body)["data"].size(), 1u) << read->body;
  auto ack =
      client->Post("/v1/destinations/" + feed + "/messages/ack", {{"traceparent", traceparent}},
                   Json({{"ids", {event_id}}}).dump(), "application/json");
  ASSERT_TRUE(ack && ack->status == 200) << (ack ? ack->body : "no answer");

  std::vector<Json> spans;
  const Json* read_span = nullptr;
  const Json* ack_span = nullptr;
  ASSERT_TRUE(WaitUntil(
      [&] {
        spans = otlp.spans();
        read_span = ack_span = nullptr;
        for (const Json& s : spans) {
          if (s["name"] == "webhookd feed read") read_span = &s;
          if (s["name"] == "webhookd feed ack") ack_span = &s;
        }
        return read_span != nullptr && ack_span != nullptr;
      },
      20s, 50ms))
      << spans.size() << " spans";
  for (const Json* s : {read_span, ack_span}) {
    EXPECT_EQ((*s)["kind"], 2) << "server";
    EXPECT_EQ((*s)["traceId"], kTrace);
    EXPECT_EQ((*s)["parentSpanId"], kProducerSpan);
    EXPECT_EQ((*s)["attributes"]["webhookd.destination.id"], feed);
    EXPECT_EQ((*s)["attributes"]["webhookd.feed.messages"], "1");
    EXPECT_EQ((*s)["attributes"]["http.response.status_code"], "200");
  }
  EXPECT_EQ((*read_span)["attributes"]["http.request.method"], "GET");
  EXPECT_EQ((*read_span)["attributes"]["webhookd.feed.wait_ms"], "5000");
  EXPECT_EQ((*ack_span)["attributes"]["url.path"], "/v1/destinations/" + feed + "/messages/ack");
  EXPECT_EQ((*ack_span)["attributes"]["webhookd.feed.expired"], "0");
}

// A collector that accepts and never answers: every delivery still succeeds at once, and
// a stop still ends within its bounds (the exporter gives up on what is queued).
TEST(TracingCollectorE2eTest, ACollectorThatNeverAnswersChangesNothing) {
  RawListener collector("127.0.0.1", 0, RawListener::NeverAnswers());
  TestDatabase db;
  Receiver receiver;
  WebhookdProcess webhookd(
      db.url(), "all",
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:" + std::to_string(collector.port())},
       {"OTEL_BSP_SCHEDULE_DELAY", "50"},
       {"OTEL_BSP_MAX_QUEUE_SIZE", "16"},
       {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4"}});
  ASSERT_EQ(webhookd.Call("POST", "/v1/destinations", {{"url", receiver.url()}}).status, 201);
  constexpr int kEvents = 200;
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_EQ(
        webhookd.Call("POST", "/v1/events", {{"type", "t.x"}, {"payload", {{"n", i}}}}).status,
        202);
  }
  EXPECT_TRUE(receiver.WaitFor(kEvents, 30s)) << receiver.count() << " of " << kEvents;
  EXPECT_GT(collector.accepted(), 0) << "the exporter never tried";
  // Spans beyond the queue were dropped and counted, not kept.
  auto metrics = webhookd.Client()->Get("/metrics");
  ASSERT_TRUE(metrics);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(metrics->body, m,
                                std::regex("webhookd_trace_spans_dropped_total ([0-9]+)")));
  EXPECT_GT(std::stoi(m[1]), 0);
  const auto stop_from = std::chrono::steady_clock::now();
  webhookd.process().Signal(SIGTERM);
  auto code = webhookd.process().Wait(20s);
  ASSERT_TRUE(code) << "webhookd did not stop within 20 s with a collector that never answers";
  EXPECT_EQ(*code, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - stop_from, 10s);
}

}  // namespace
}  // namespace webhookd::testing::tracing_e2e_test
