#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "core/trace_context.h"
#include "trace/span.h"

namespace webhookd {

// The ingest of one event as a span (docs/tracing.md): a server span in the producer's
// trace when its `traceparent` is valid (an invalid one is ignored, never refused), else
// the root of a fresh trace. The event keeps a traceparent naming this span, so its
// attempts are its children.
struct IngestTrace {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent;  // the producer's span
  uint8_t flags = 0;
  std::string tracestate;  // the producer's, when valid
  bool sampled = false;

  // What the event keeps.
  std::string traceparent() const { return FormatTraceparent(trace_id, span_id, flags); }
};

// `random` holds 24 random bytes (the span id, and a trace id for a root).
IngestTrace StartIngestTrace(std::string_view traceparent, std::string_view tracestate,
                             const Sampler& sampler, std::string_view random);

struct IngestedEvent {
  std::string event_id;  // evt_...
  std::optional<std::string> tenant_id;
  std::string type;
};

trace::Span IngestSpan(const IngestTrace& t, Timestamp start, Timestamp end,
                       const IngestedEvent& event);

}  // namespace webhookd
