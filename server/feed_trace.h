#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "core/trace_context.h"
#include "trace/span.h"

namespace webhookd {

// A feed's read, ack or nack as a span (docs/tracing.md): a server span in the consumer's
// trace when it sent a `traceparent`, else a trace of its own.
struct FeedCall {
  enum class Kind { kRead, kAck, kNack };
  Kind kind = Kind::kRead;
  std::string path;            // as requested
  std::string destination_id;  // dst_...
  std::optional<std::string> tenant_id;
  int64_t messages = 0;  // read: leased; ack and nack: settled
  int64_t expired = 0;   // ack and nack: ids whose lease had ended
  int64_t wait_ms = 0;   // read: the `wait` asked for
};

trace::Span FeedSpan(const SpanStart& t, Timestamp start, Timestamp end, const FeedCall& call);

}  // namespace webhookd
