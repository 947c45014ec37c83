#pragma once

#include <memory>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/result.h"
#include "core/trace_context.h"
#include "trace/span.h"

namespace webhookd::trace {
class OtlpExporter;
}

namespace webhookd::cmd {

// The process's tracing (docs/tracing.md), from OpenTelemetry's OTEL_* variables: the
// sampler, and the OTLP exporter spans go to when an endpoint is set. The exporter owns
// one thread (see trace/exporter.h); the destructor flushes what is queued, for at most
// two seconds.
class Tracing {
 public:
  // A bad OTEL_* value is an Error naming its variable; `metrics` must outlive the result.
  static Result<std::unique_ptr<Tracing>> FromEnv(Metrics& metrics);
  ~Tracing();

  // Null when no endpoint is set: nothing is exported (traceparent headers still go out).
  trace::SpanSink* sink() const;
  const Sampler& sampler() const { return sampler_; }

 private:
  Tracing();
  SystemClock clock_;
  Sampler sampler_;
  std::unique_ptr<trace::OtlpExporter> exporter_;
};

}  // namespace webhookd::cmd
