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
// event's context (StartSpan from the stored traceparent), started before the request so
// that its `traceparent` header names it, and reported as a client span when the answer
// comes back. `random` holds 24 random bytes.
inline SpanStart StartAttemptTrace(const ClaimedDelivery& d, const Sampler& sampler,
                                   std::string_view random) {
  return StartSpan(d.traceparent, d.tracestate, sampler, random);
}

// The finished attempt as a span, with the attributes of docs/tracing.md.
trace::Span AttemptSpan(const ClaimedDelivery& d, const SpanStart& t, Timestamp start,
                        Timestamp end, const SendResult& sent, Outcome outcome);

// A URL as a span may show it: its scheme, host and port alone. User info, path, query
// and fragment may each hold a secret (a chat service's hook URL is its own password),
// and spans go to a collector that others read.
std::string UrlForSpan(std::string_view url);

}  // namespace webhookd
