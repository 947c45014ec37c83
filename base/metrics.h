#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace webhookd {

// A monotonically increasing count; one relaxed atomic add per increment.
class Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A Prometheus histogram with fixed upper bounds in seconds; lock-free.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double seconds);
  const std::vector<double>& bounds() const { return bounds_; }
  // Cumulative counts per bound, then the +Inf count.
  std::vector<uint64_t> Cumulative() const;
  double sum() const { return sum_micros_.load(std::memory_order_relaxed) / 1e6; }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bound, non-cumulative, + overflow
  std::atomic<uint64_t> sum_micros_{0};
  std::atomic<uint64_t> count_{0};
};

// Writes the Prometheus text exposition format (version 0.0.4).
class ExpositionWriter {
 public:
  using Labels = std::vector<std::pair<std::string_view, std::string_view>>;
  // "# HELP" and "# TYPE" lines; call once per metric name, before its samples.
  void Header(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  void Sample(std::string_view name, const Labels& labels, uint64_t value);
  void WriteHistogram(std::string_view name, std::string_view help, const Histogram& h);
  const std::string& text() const { return text_; }

  // Escapes a label value: backslash, double quote and newline.
  static std::string EscapeLabelValue(std::string_view value);

 private:
  void Name(std::string_view name, const Labels& labels);
  std::string text_;
};

// Every series webhookd exports (docs/api.md "Operations"). Counters count what this
// process did; the pending gauges come from the database when rendered.
class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  Counter events_ingested;
  Counter deliveries_created;
  Counter deliveries_succeeded;
  Counter replays;
  Counter purged_events;            // deleted by retention
  std::array<Counter, 3> attempts;  // by Outcome: success, retryable, permanent
  // The same attempts by transport too, in the order of net/broker_url.h's Transport
  // (http, amqp, nats, redis, kafka), then by Outcome.
  std::array<std::array<Counter, 3>, 5> attempts_by_transport;
  std::array<Counter, 2> dead_letters;  // by DeadLetterReason: exhausted, permanent_failure
  Counter attempts_skipped;       // not sent: the circuit was open or the egress proxy was down
  Counter egress_proxy_failures;  // attempts the egress proxy could not be reached for
  Counter rate_limited;           // claims that held a destination back for its rate limit
  Counter feed_acks;              // feed messages acked (docs/feeds.md)
  Counter trace_spans_exported;   // spans the OTLP collector accepted
  Counter trace_spans_dropped;    // spans lost: the export queue was full, or the collector refused
  // Circuits this process moved, by the state entered (CircuitState: closed, open,
  // half_open).
  std::array<Counter, 3> circuit_transitions;
  // Requests to an inbound source's address, by provider (core/inbound_source.h's order:
  // stripe, github, shopify, slack, twilio, standard-webhooks, hmac) and by InboundOutcome.
  enum class InboundOutcome { kAccepted, kDuplicate, kUnverified, kMalformed, kLimited };
  std::array<std::array<Counter, 5>, 7> inbound_requests;
  void CountInbound(size_t provider, InboundOutcome outcome) {
    if (provider < inbound_requests.size()) {
      inbound_requests[provider][static_cast<size_t>(outcome)].Inc();
    }
  }
  Histogram attempt_duration;
  Histogram delivery_latency;

  // Counts an answered HTTP request; `route` is a route pattern (a small fixed set). The
  // name is copied the first time it is seen, so it may live in the request's memory.
  void CountRequest(std::string_view route, int status);

  struct Gauges {
    int64_t pending = 0;
    int64_t retrying_over_24h = 0;
    int64_t in_flight = 0;
    int64_t circuits_open = 0;  // enabled destinations whose circuit is open or half-open
    // Each mTLS destination's client certificate's end, in Unix seconds, by destination id
    // ("dst_12"): few (only destinations with a certificate), so a label each.
    std::vector<std::pair<std::string, int64_t>> certificate_expiries = {};
    // Each feed's messages by id ("dst_12"): waiting, then leased. A label each, as feeds
    // are destinations their owners made to be read.
    std::vector<std::tuple<std::string, int64_t, int64_t>> feed_messages = {};
  };
  std::string Render(const Gauges& gauges) const;

 private:
  // Routes are few and codes are 100..599: a fixed table of atomics, no lock per request.
  // Each name is a copy this object owns: once published it never changes or moves.
  static constexpr int kMaxRoutes = 48;
  int RouteIndex(std::string_view route);
  std::array<std::atomic<const std::string*>, kMaxRoutes> routes_{};
  std::unique_ptr<std::atomic<uint64_t>[]> requests_;  // kMaxRoutes x 500
};

}  // namespace webhookd
