// W3C trace context on the wire (docs/tracing.md): the producer's traceparent carried from
// POST /v1/events to every attempt, a fresh trace for an event without one (or with an
// invalid one, which is never refused), a span id of its own per attempt, and the event's
// tracestate passed on.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "tests/testing/receiver.h"
#include "tests/testing/test_database.h"
#include "tests/testing/webhookd_process.h"

namespace webhookd::testing::trace_context_e2e_test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

const std::regex kTraceparent("00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]");

class TraceContextE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    webhookd_ = std::make_unique<WebhookdProcess>(
        db_.url(), "all",
        std::map<std::string, std::string>{{"WEBHOOKD_RETRY_SCHEDULE", "100ms,100ms"},
                                           {"WEBHOOKD_RETRY_JITTER", "0"}});
    auto res = webhookd_->Call("POST", "/v1/destinations", {{"url", receiver_.url()}});
    ASSERT_EQ(res.status, 201) << res.body;
  }

  // Posts an event with these headers; its id.
  std::string Post(const httplib::Headers& headers) {
    auto client = webhookd_->Client();
    auto res = client->Post("/v1/events", headers, R"({"type":"t.x","payload":{"a":1}})",
                            "application/json");
    EXPECT_TRUE(res && res->status == 202) << (res ? res->body : "no answer");
    return res && res->status == 202 ? Json::parse(res->body)["id"].get<std::string>() : "";
  }

  // The requests the receiver got for `event_id`, waiting for at least `n`.
  std::vector<Received> RequestsFor(const std::string& event_id, size_t n) {
    std::vector<Received> got;
    for (auto until = std::chrono::steady_clock::now() + 20s;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms)) {
      got.clear();
      for (auto& r : receiver_.requests()) {
        if (r.header("webhook-id") == event_id) got.push_back(r);
      }
      if (got.size() >= n) break;
    }
    return got;
  }

  TestDatabase db_;
  Receiver receiver_;
  std::unique_ptr<WebhookdProcess> webhookd_;
};

TEST_F(TraceContextE2eTest, TheProducersTraceReachesTheReceiverWithTheAttemptsOwnSpan) {
  const std::string id =
      Post({{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
            {"tracestate", "rojo=00f067aa0ba902b7"}});
  auto got = RequestsFor(id, 1);
  ASSERT_EQ(got.size(), 1u);
  std::smatch m;
  const std::string header = got[0].header("traceparent");
  ASSERT_TRUE(std::regex_match(header, m, kTraceparent)) << header;
  EXPECT_EQ(m[1], "0af7651916cd43dd8448eb211c80319c");
  EXPECT_NE(m[2], "b7ad6b7169203331") << "the attempt's span, not the producer's";
  EXPECT_TRUE(header.ends_with("-01"));
  EXPECT_EQ(got[0].header("tracestate"), "rojo=00f067aa0ba902b7");
}

TEST_F(TraceContextE2eTest, EachAttemptHasASpanOfItsOwnInOneTrace) {
  receiver_.set_script([](const Received&, int nth) {
    Answer a;
    a.status = nth == 0 ? 503 : 200;
    return a;
  });
  const std::string id = Post({});
  auto got = RequestsFor(id, 2);
  ASSERT_EQ(got.size(), 2u);
  std::smatch first, second;
  const std::string h1 = got[0].header("traceparent"), h2 = got[1].header("traceparent");
  ASSERT_TRUE(std::regex_match(h1, first, kTraceparent)) << h1;
  ASSERT_TRUE(std::regex_match(h2, second, kTraceparent)) << h2;
  EXPECT_EQ(first[1], second[1]) << "one trace per event";
  EXPECT_NE(first[2], second[2]) << "a span per attempt";
  EXPECT_EQ(got[0].header("tracestate"), "");
}

TEST_F(TraceContextE2eTest, AnInvalidTraceparentIsIgnoredNotRefused) {
  std::set<std::string> traces;
  for (const char* bad : {"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                          "00-00000000000000000000000000000000-b7ad6b7169203331-01", "garbage"}) {
    const std::string id = Post({{"traceparent", bad}, {"tracestate", "x=1"}});
    auto got = RequestsFor(id, 1);
    ASSERT_EQ(got.size(), 1u) << bad;
    std::smatch m;
    const std::string header = got[0].header("traceparent");
    ASSERT_TRUE(std::regex_match(header, m, kTraceparent)) << header;
    EXPECT_NE(m[1], "0af7651916cd43dd8448eb211c80319c") << bad;
    EXPECT_EQ(got[0].header("tracestate"), "") << "no tracestate without its traceparent";
    traces.insert(m[1]);
  }
  EXPECT_EQ(traces.size(), 3u) << "a fresh trace for each";
}

}  // namespace
}  // namespace webhookd::testing::trace_context_e2e_test
