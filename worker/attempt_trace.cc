#include "worker/attempt_trace.h"

#include "core/ids.h"

namespace webhookd {

std::string UrlForSpan(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  const size_t host_from = scheme + 3;
  const std::string_view authority =
      url.substr(host_from, url.find_first_of("/?#", host_from) - host_from);
  const size_t at = authority.rfind('@');
  return std::string(url.substr(0, host_from)) +
         std::string(at == std::string_view::npos ? authority : authority.substr(at + 1));
}

trace::Span AttemptSpan(const ClaimedDelivery& d, const SpanStart& t, Timestamp start,
                        Timestamp end, const SendResult& sent, Outcome outcome) {
  trace::Span span;
  span.trace_id = t.trace_id;
  span.span_id = t.span_id;
  span.parent_span_id = t.parent;
  span.tracestate = t.tracestate;
  span.flags = t.flags;
  span.name = "webhookd attempt";
  span.kind = trace::SpanKind::kClient;
  span.start = start;
  span.end = end;
  auto& a = span.attributes;
  a.push_back({"http.request.method", std::string("POST")});
  a.push_back({"url.full", UrlForSpan(d.url)});
  if (sent.status_code) {
    a.push_back({"http.response.status_code", static_cast<int64_t>(*sent.status_code)});
  }
  if (outcome != Outcome::kSuccess) {
    // The semantic conventions' error.type: the status code when there was an answer,
    // else what kept it from coming.
    std::string error = sent.status_code     ? std::to_string(*sent.status_code)
                        : sent.timed_out     ? "timeout"
                        : sent.refused       ? "refused"
                        : d.credential_error ? "credential"
                                             : "connection";
    a.push_back({"error.type", std::move(error)});
    span.status = trace::SpanStatus::kError;
  }
  a.push_back({"webhookd.event.id", FormatId(kEventPrefix, d.event_id)});
  a.push_back({"webhookd.delivery.id", FormatId(kDeliveryPrefix, d.delivery_id)});
  a.push_back({"webhookd.destination.id", FormatId(kDestinationPrefix, d.destination_id)});
  if (d.tenant_id) a.push_back({"webhookd.tenant.id", *d.tenant_id});
  a.push_back({"webhookd.attempt.number", static_cast<int64_t>(d.attempt_count + 1)});
  a.push_back({"webhookd.attempt.outcome", std::string(OutcomeName(outcome))});
  return span;
}

}  // namespace webhookd
