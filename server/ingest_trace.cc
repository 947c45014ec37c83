#include "server/ingest_trace.h"

namespace webhookd {

trace::Span IngestSpan(const SpanStart& t, Timestamp start, Timestamp end,
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
