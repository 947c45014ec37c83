// An attempt's span: its place in the event's trace, the sampler's say, and the
// attributes of docs/tracing.md, checked exactly.
#include "worker/attempt_trace.h"

#include <gtest/gtest.h>

#include <map>

namespace webhookd::attempt_trace_test {
namespace {

const std::string kRandom =
    std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8) + std::string(16, '\x7f');

std::map<std::string, std::string> Attributes(const trace::Span& span) {
  std::map<std::string, std::string> out;
  for (const auto& a : span.attributes) {
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) {
            out[a.key] = v;
          } else {
            out[a.key] = std::to_string(v);
          }
        },
        a.value);
  }
  return out;
}

ClaimedDelivery Delivery() {
  ClaimedDelivery d;
  d.delivery_id = 7;
  d.event_id = 5;
  d.destination_id = 3;
  d.url = "https://user:pw@example.com/hook?token=secret#frag";
  d.attempt_count = 1;
  d.tenant_id = "acme";
  d.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  d.tracestate = "rojo=1";
  return d;
}

TEST(AttemptTraceTest, IsAChildOfTheEventsSpan) {
  const SpanStart t = StartAttemptTrace(Delivery(), Sampler(), kRandom);
  EXPECT_EQ(t.traceparent(), "00-0af7651916cd43dd8448eb211c80319c-0102030405060708-01");
  ASSERT_TRUE(t.parent);
  EXPECT_EQ(ToHex(*t.parent), "b7ad6b7169203331");
  EXPECT_EQ(t.tracestate, "rojo=1");
  EXPECT_TRUE(t.sampled);
}

TEST(AttemptTraceTest, FollowsTheEventsSampledFlag) {
  ClaimedDelivery d = Delivery();
  d.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
  const SpanStart t = StartAttemptTrace(d, Sampler(), kRandom);
  EXPECT_FALSE(t.sampled);
  EXPECT_TRUE(t.traceparent().ends_with("-00"));
  EXPECT_TRUE(StartAttemptTrace(d, Sampler(SamplerKind::kAlwaysOn), kRandom).sampled);
}

TEST(AttemptTraceTest, AnEventWithoutContextStartsATrace) {
  ClaimedDelivery d = Delivery();
  d.traceparent = "";
  const SpanStart t = StartAttemptTrace(d, Sampler(), kRandom);
  EXPECT_EQ(ToHex(t.trace_id), "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f");
  EXPECT_FALSE(t.parent);
  EXPECT_TRUE(t.tracestate.empty());
}

TEST(AttemptTraceTest, TheSpanHasTheDocumentedAttributes) {
  const ClaimedDelivery d = Delivery();
  const SpanStart t = StartAttemptTrace(d, Sampler(), kRandom);
  SendResult sent;
  sent.status_code = 503;
  const trace::Span span =
      AttemptSpan(d, t, Timestamp(std::chrono::seconds(10)), Timestamp(std::chrono::seconds(11)),
                  sent, Outcome::kRetryable);
  EXPECT_EQ(span.name, "webhookd attempt");
  EXPECT_EQ(span.kind, trace::SpanKind::kClient);
  EXPECT_EQ(span.status, trace::SpanStatus::kError);
  EXPECT_EQ(Attributes(span), (std::map<std::string, std::string>{
                                  {"http.request.method", "POST"},
                                  {"url.full", "https://example.com"},
                                  {"http.response.status_code", "503"},
                                  {"error.type", "503"},
                                  {"webhookd.event.id", "evt_5"},
                                  {"webhookd.delivery.id", "dlv_7"},
                                  {"webhookd.destination.id", "dst_3"},
                                  {"webhookd.tenant.id", "acme"},
                                  {"webhookd.attempt.number", "2"},
                                  {"webhookd.attempt.outcome", "retryable"},
                              }));
  SendResult timed_out;
  timed_out.timed_out = true;
  EXPECT_EQ(Attributes(AttemptSpan(d, t, {}, {}, timed_out, Outcome::kRetryable))["error.type"],
            "timeout");
  SendResult ok;
  ok.status_code = 200;
  const trace::Span success = AttemptSpan(d, t, {}, {}, ok, Outcome::kSuccess);
  EXPECT_EQ(success.status, trace::SpanStatus::kUnset);
  EXPECT_FALSE(Attributes(success).contains("error.type"));
}

// The path went to the collector: a hook URL such as
// https://hooks.slack.com/services/T0/B0/secret is its own credential.
TEST(AttemptTraceTest, UrlsKeepSchemeHostAndPortAlone) {
  EXPECT_EQ(UrlForSpan("https://a:b@h.example:8443/p?q=1#f"), "https://h.example:8443");
  EXPECT_EQ(UrlForSpan("https://hooks.slack.com/services/T0/B0/XyZsecret"),
            "https://hooks.slack.com");
  EXPECT_EQ(UrlForSpan("http://h/p"), "http://h");
  EXPECT_EQ(UrlForSpan("http://h?x"), "http://h");
  EXPECT_EQ(UrlForSpan("http://h#x"), "http://h");
  EXPECT_EQ(UrlForSpan("http://h/p@q"), "http://h");
  EXPECT_EQ(UrlForSpan("http://[::1]:8080/p"), "http://[::1]:8080");
  EXPECT_EQ(UrlForSpan("not a url/secret"), "");
}

}  // namespace
}  // namespace webhookd::attempt_trace_test
