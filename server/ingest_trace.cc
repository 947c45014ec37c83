#include "server/ingest_trace.h"

namespace webhookd {

IngestTrace StartIngestTrace(std::string_view traceparent, std::string_view tracestate,
                             const Sampler& sampler, std::string_view random) {
  IngestTrace t;
  t.span_id = SpanIdFrom(random.substr(0, 8));
  std::optional<bool> parent_sampled;
  if (auto producer = ParseTraceparent(traceparent)) {
    t.trace_id = producer->trace_id;
    t.parent = producer->span_id;
    parent_sampled = producer->sampled();
    t.tracestate = ValidTracestate(tracestate);
  } else {
    t.trace_id = TraceIdFrom(random.substr(8, 16));
  }
  t.sampled = sampler.Sample(t.trace_id, parent_sampled);
  t.flags = t.sampled ? kSampledFlag : 0;
  return t;
}

trace::Span IngestSpan(const IngestTrace& t, Timestamp start, Timestamp end,
                       const IngestedEvent& event) {
  trace::Span span;
  span.trace_id = t.trace_id;
  span.span_id = t.span_id;
  span.parent_span_id = t.parent;
  span.tracestate = t.tracestate;
  span.flags = t.flags;
  span.name = "webhookd ingest";
  span.kind = trace::SpanKind::kServer;
  span.start = start;
  span.end = end;
  auto& a = span.attributes;
  a.push_back({"http.request.method", std::string("POST")});
  a.push_back({"url.path", std::string("/v1/events")});
  a.push_back({"http.response.status_code", int64_t{202}});
  a.push_back({"webhookd.event.id", event.event_id});
  a.push_back({"webhookd.event.type", event.type});
  if (event.tenant_id) a.push_back({"webhookd.tenant.id", *event.tenant_id});
  return span;
}

}  // namespace webhookd
