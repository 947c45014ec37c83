#pragma once

#include <memory>

#include "base/metrics.h"
#include "base/result.h"
#include "core/trace_context.h"
#include "trace/span.h"

namespace webhookd::cmd {

// The process's tracing (docs/tracing.md), from OpenTelemetry's OTEL_* variables: the
// sampler, and the OTLP exporter spans go to when an endpoint is set. The exporter owns
// one thread; the destructor flushes what is queued, within a bounded time.
class Tracing {
 public:
  static Result<std::unique_ptr<Tracing>> FromEnv(Metrics& metrics);
  ~Tracing();

  // Null when no endpoint is set: nothing is exported (traceparent headers still go out).
  trace::SpanSink* sink() const { return sink_.get(); }
  const Sampler& sampler() const { return sampler_; }

 private:
  Sampler sampler_;
  std::unique_ptr<trace::SpanSink> sink_;
};

}  // namespace webhookd::cmd
