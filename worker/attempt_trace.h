#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "core/outcome.h"
#include "core/trace_context.h"
#include "store/delivery_queue_types.h"
#include "trace/span.h"
#include "worker/sender.h"

namespace webhookd {

// An attempt's place in its event's trace (docs/tracing.md): a child span of the
// event's span context, made before the request so that its `traceparent` header names
// it, and reported as a client span when the answer comes back.
struct AttemptTrace {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent;  // the event's span (nullopt: an event with no context)
  uint8_t flags = 0;
  std::string tracestate;
  bool sampled = false;

  std::string traceparent() const { return FormatTraceparent(trace_id, span_id, flags); }
};

// `random` holds 24 random bytes: the attempt's span id, and a trace id for an event
// stored without a trace context. The sampler follows the event's sampled flag.
AttemptTrace StartAttemptTrace(const ClaimedDelivery& d, const Sampler& sampler,
                               std::string_view random);

// The finished attempt as a span, with the attributes of docs/tracing.md.
trace::Span AttemptSpan(const ClaimedDelivery& d, const AttemptTrace& t, Timestamp start,
                        Timestamp end, const SendResult& sent, Outcome outcome);

// A URL as a span may show it: no user info, query or fragment (they may hold secrets).
std::string UrlForSpan(std::string_view url);

}  // namespace webhookd
