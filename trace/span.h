#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/clock.h"
#include "core/trace_context.h"

namespace webhookd::trace {

// A finished span, as OTLP carries it (opentelemetry/proto/trace/v1/trace.proto).
enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3 };  // OTLP's numbers
enum class SpanStatus { kUnset = 0, kOk = 1, kError = 2 };        // OTLP's numbers

struct Attribute {
  std::string key;
  std::variant<std::string, int64_t, bool, double> value;
};

struct Span {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent_span_id;
  std::string tracestate;
  uint8_t flags = kSampledFlag;
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  Timestamp start{};
  Timestamp end{};
  std::vector<Attribute> attributes;
  SpanStatus status = SpanStatus::kUnset;
  std::string status_message;
};

// Where finished spans go. Emit never blocks and never fails: an exporter that cannot
// keep up drops spans and counts them.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void Emit(Span span) = 0;
};

}  // namespace webhookd::trace
