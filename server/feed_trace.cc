#include "server/feed_trace.h"

namespace webhookd {

trace::Span FeedSpan(const SpanStart& t, Timestamp start, Timestamp end, const FeedCall& call) {
  trace::Span span;
  span.trace_id = t.trace_id;
  span.span_id = t.span_id;
  span.parent_span_id = t.parent;
  span.tracestate = t.tracestate;
  span.flags = t.flags;
  const bool read = call.kind == FeedCall::Kind::kRead;
  span.name = read                                ? "webhookd feed read"
              : call.kind == FeedCall::Kind::kAck ? "webhookd feed ack"
                                                  : "webhookd feed nack";
  span.kind = trace::SpanKind::kServer;
  span.start = start;
  span.end = end;
  auto& a = span.attributes;
  a.push_back({"http.request.method", std::string(read ? "GET" : "POST")});
  a.push_back({"url.path", call.path});
  a.push_back({"http.response.status_code", int64_t{200}});
  a.push_back({"webhookd.destination.id", call.destination_id});
  if (call.tenant_id) a.push_back({"webhookd.tenant.id", *call.tenant_id});
  a.push_back({"webhookd.feed.messages", call.messages});
  if (read) {
    a.push_back({"webhookd.feed.wait_ms", call.wait_ms});
  } else {
    a.push_back({"webhookd.feed.expired", call.expired});
  }
  return span;
}

}  // namespace webhookd
