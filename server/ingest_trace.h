#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "core/trace_context.h"
#include "trace/span.h"

namespace webhookd {

// The ingest of one event as a span (docs/tracing.md): a server span started with
// StartSpan from the producer's `traceparent` (an invalid one is ignored, never refused).
// The event keeps the span's traceparent, so its attempts are its children.
struct IngestedEvent {
  std::string event_id;  // evt_...
  std::optional<std::string> tenant_id;
  std::string type;
};

trace::Span IngestSpan(const SpanStart& t, Timestamp start, Timestamp end,
                       const IngestedEvent& event);

}  // namespace webhookd
