#include "base/metrics.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace webhookd {
namespace {

constexpr int kCodes = 500;  // 100..599
constexpr std::array<std::string_view, 3> kOutcomes = {"success", "retryable", "permanent"};
// net/broker_url.h's Transport, in its order (base cannot include net).
constexpr std::array<std::string_view, 5> kTransports = {"http", "amqp", "nats", "redis", "kafka"};
constexpr std::array<std::string_view, 2> kReasons = {"exhausted", "permanent_failure"};
constexpr std::array<std::string_view, 3> kCircuitStates = {"closed", "open", "half_open"};

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round-trip form
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i] = 0;
}

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(std::max(0.0, seconds) * 1e6),
                        std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::Cumulative() const {
  std::vector<uint64_t> out;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out.push_back(running);
  }
  return out;
}

std::string ExpositionWriter::EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void ExpositionWriter::Header(std::string_view name, std::string_view type, std::string_view help) {
  // HELP text escapes only backslash and newline.
  std::string escaped;
  for (char c : help) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  text_ += escaped;
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void ExpositionWriter::Name(std::string_view name, const Labels& labels) {
  text_ += name;
  if (labels.empty()) return;
  text_ += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) text_ += ',';
    first = false;
    text_ += k;
    text_ += "=\"";
    text_ += EscapeLabelValue(v);
    text_ += '"';
  }
  text_ += '}';
}

void ExpositionWriter::Sample(std::string_view name, const Labels& labels, double value) {
  Name(name, labels);
  text_ += ' ' + FormatValue(value) + '\n';
}

void ExpositionWriter::Sample(std::string_view name, const Labels& labels, uint64_t value) {
  Name(name, labels);
  text_ += ' ' + std::to_string(value) + '\n';
}

void ExpositionWriter::WriteHistogram(std::string_view name, std::string_view help,
                                      const Histogram& h) {
  Header(name, "histogram", help);
  const auto cumulative = h.Cumulative();
  const std::string bucket = std::string(name) + "_bucket";
  for (size_t i = 0; i < h.bounds().size(); ++i) {
    const std::string le = FormatValue(h.bounds()[i]);
    Sample(bucket, {{"le", le}}, cumulative[i]);
  }
  Sample(bucket, {{"le", "+Inf"}}, cumulative.back());
  Sample(std::string(name) + "_sum", {}, h.sum());
  Sample(std::string(name) + "_count", {}, cumulative.back());
}

Metrics::Metrics()
    : attempt_duration({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      delivery_latency({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600, 3600, 86400}),
      requests_(new std::atomic<uint64_t>[static_cast<size_t>(kMaxRoutes) * kCodes]) {
  for (int i = 0; i < kMaxRoutes * kCodes; ++i) requests_[i] = 0;
  for (auto& r : routes_) r = nullptr;
}

Metrics::~Metrics() {
  for (auto& r : routes_) delete r.load(std::memory_order_acquire);
}

int Metrics::RouteIndex(std::string_view route) {
  for (int i = 0; i < kMaxRoutes; ++i) {
    const std::string* known = routes_[i].load(std::memory_order_acquire);
    if (known == nullptr) {
      auto owned = std::make_unique<std::string>(route);
      const std::string* expected = nullptr;
      if (routes_[i].compare_exchange_strong(expected, owned.get(), std::memory_order_acq_rel)) {
        static_cast<void>(owned.release());  // routes_[i] owns it now
        return i;
      }
      known = expected;
    }
    if (*known == route) return i;
  }
  return kMaxRoutes - 1;  // more routes than expected: lump the rest together
}

void Metrics::CountRequest(std::string_view route, int status) {
  if (status < 100 || status > 599) return;
  requests_[RouteIndex(route) * kCodes + (status - 100)].fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::Render(const Gauges& gauges) const {
  ExpositionWriter w;
  w.Header("webhookd_events_ingested_total", "counter", "Events accepted (202) by this process.");
  w.Sample("webhookd_events_ingested_total", {}, events_ingested.value());
  w.Header("webhookd_deliveries_created_total", "counter", "Deliveries created by fan-out.");
  w.Sample("webhookd_deliveries_created_total", {}, deliveries_created.value());
  w.Header("webhookd_delivery_attempts_total", "counter",
           "Delivery attempts recorded, by outcome.");
  for (size_t i = 0; i < kOutcomes.size(); ++i) {
    w.Sample("webhookd_delivery_attempts_total", {{"outcome", kOutcomes[i]}}, attempts[i].value());
  }
  // A series of its own: webhookd_delivery_attempts_total keeps the one label it always had.
  w.Header("webhookd_delivery_attempts_by_transport_total", "counter",
           "Delivery attempts recorded, by transport (the destination url's scheme: "
           "docs/brokers.md) and outcome.");
  for (size_t t = 0; t < kTransports.size(); ++t) {
    for (size_t i = 0; i < kOutcomes.size(); ++i) {
      w.Sample("webhookd_delivery_attempts_by_transport_total",
               {{"transport", kTransports[t]}, {"outcome", kOutcomes[i]}},
               attempts_by_transport[t][i].value());
    }
  }
  w.Header("webhookd_deliveries_succeeded_total", "counter", "Deliveries that succeeded.");
  w.Sample("webhookd_deliveries_succeeded_total", {}, deliveries_succeeded.value());
  w.Header("webhookd_dead_letters_total", "counter", "Deliveries dead-lettered, by reason.");
  for (size_t i = 0; i < kReasons.size(); ++i) {
    w.Sample("webhookd_dead_letters_total", {{"reason", kReasons[i]}}, dead_letters[i].value());
  }
  w.Header("webhookd_inbound_requests_total", "counter",
           "Requests to inbound sources' addresses, by provider and outcome.");
  {
    constexpr std::array<const char*, 7> kProviders = {
        "stripe", "github", "shopify", "slack", "twilio", "standard-webhooks", "hmac"};
    constexpr std::array<const char*, 5> kInboundOutcomes = {"accepted", "duplicate", "unverified",
                                                             "malformed", "limited"};
    for (size_t p = 0; p < kProviders.size(); ++p) {
      for (size_t o = 0; o < kInboundOutcomes.size(); ++o) {
        w.Sample("webhookd_inbound_requests_total",
                 {{"provider", kProviders[p]}, {"outcome", kInboundOutcomes[o]}},
                 inbound_requests[p][o].value());
      }
    }
  }
  w.Header("webhookd_attempts_skipped_total", "counter",
           "Attempts recorded as skipped, not sent: the destination's circuit was open, or the "
           "egress proxy could not be reached.");
  w.Sample("webhookd_attempts_skipped_total", {}, attempts_skipped.value());
  w.Header("webhookd_egress_proxy_unreachable_total", "counter",
           "Attempts not sent because WEBHOOKD_EGRESS_PROXY could not be reached.");
  w.Sample("webhookd_egress_proxy_unreachable_total", {}, egress_proxy_failures.value());
  w.Header("webhookd_rate_limited_total", "counter",
           "Claims that held a destination's due deliveries back for its rate limit.");
  w.Sample("webhookd_rate_limited_total", {}, rate_limited.value());
  w.Header("webhookd_trace_spans_exported_total", "counter",
           "Spans the OpenTelemetry collector accepted.");
  w.Sample("webhookd_trace_spans_exported_total", {}, trace_spans_exported.value());
  w.Header("webhookd_trace_spans_dropped_total", "counter",
           "Spans dropped: the export queue was full, or the collector refused them.");
  w.Sample("webhookd_trace_spans_dropped_total", {}, trace_spans_dropped.value());
  w.Header("webhookd_circuit_transitions_total", "counter",
           "Destination circuits moved by this process, by the state entered.");
  for (size_t i = 0; i < kCircuitStates.size(); ++i) {
    w.Sample("webhookd_circuit_transitions_total", {{"to", kCircuitStates[i]}},
             circuit_transitions[i].value());
  }
  w.Header("webhookd_replays_total", "counter", "Dead letters replayed.");
  w.Sample("webhookd_replays_total", {}, replays.value());
  w.Header("webhookd_purged_events_total", "counter",
           "Events deleted by retention, with their deliveries, attempts and dead letters.");
  w.Sample("webhookd_purged_events_total", {}, purged_events.value());
  w.WriteHistogram("webhookd_delivery_attempt_duration_seconds",
                   "Duration of one delivery attempt.", attempt_duration);
  w.WriteHistogram("webhookd_delivery_latency_seconds", "From ingest to a successful delivery.",
                   delivery_latency);
  w.Header("webhookd_deliveries_pending", "gauge", "Deliveries waiting for an attempt.");
  w.Sample("webhookd_deliveries_pending", {}, static_cast<double>(gauges.pending));
  w.Header("webhookd_deliveries_in_flight", "gauge", "Deliveries claimed by a worker.");
  w.Sample("webhookd_deliveries_in_flight", {}, static_cast<double>(gauges.in_flight));
  w.Header("webhookd_deliveries_retrying_over_24h", "gauge",
           "Unfinished deliveries created more than 24 hours ago.");
  w.Sample("webhookd_deliveries_retrying_over_24h", {},
           static_cast<double>(gauges.retrying_over_24h));
  w.Header("webhookd_destinations_circuit_open", "gauge",
           "Enabled destinations whose circuit is open or half-open.");
  w.Sample("webhookd_destinations_circuit_open", {}, static_cast<double>(gauges.circuits_open));
  w.Header("webhookd_destination_certificate_expiry_seconds", "gauge",
           "When each destination's mTLS client certificate expires, in Unix seconds.");
  for (const auto& [destination, expiry] : gauges.certificate_expiries) {
    w.Sample("webhookd_destination_certificate_expiry_seconds", {{"destination_id", destination}},
             static_cast<double>(expiry));
  }
  w.Header("webhookd_feed_messages", "gauge",
           "Each feed's queued messages: waiting for a read, or leased to one.");
  for (const auto& [destination, waiting, leased] : gauges.feed_messages) {
    w.Sample("webhookd_feed_messages", {{"destination_id", destination}, {"state", "waiting"}},
             static_cast<double>(waiting));
    w.Sample("webhookd_feed_messages", {{"destination_id", destination}, {"state", "leased"}},
             static_cast<double>(leased));
  }
  w.Header("webhookd_feed_acks_total", "counter", "Feed messages acked by their consumers.");
  w.Sample("webhookd_feed_acks_total", {}, feed_acks.value());
  w.Header("webhookd_http_requests_total", "counter",
           "HTTP requests answered, by route and status.");
  for (int r = 0; r < kMaxRoutes; ++r) {
    const std::string* route = routes_[r].load(std::memory_order_acquire);
    if (route == nullptr) break;
    for (int c = 0; c < kCodes; ++c) {
      const uint64_t n = requests_[r * kCodes + c].load(std::memory_order_relaxed);
      if (n == 0) continue;
      const std::string code = std::to_string(c + 100);
      w.Sample("webhookd_http_requests_total", {{"route", *route}, {"code", code}}, n);
    }
  }
  return w.text();
}

}  // namespace webhookd
