#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace webhookd {

// W3C Trace Context (https://www.w3.org/TR/trace-context/): the ids a trace is made of,
// the `traceparent` and `tracestate` headers, and the sampler of OpenTelemetry's
// OTEL_TRACES_SAMPLER. Pure: the random ids come from the caller.
using TraceId = std::array<uint8_t, 16>;
using SpanId = std::array<uint8_t, 8>;

inline constexpr uint8_t kSampledFlag = 0x01;

struct TraceContext {
  TraceId trace_id{};
  SpanId span_id{};  // the span this context names (a child's parent)
  uint8_t flags = 0;
  std::string tracestate;  // kept as received when valid, else empty

  bool sampled() const { return (flags & kSampledFlag) != 0; }
};

// A `traceparent` header's value, or nullopt when it is not valid: version ff, an
// all-zero trace or parent id, upper-case hex, a bad length, or (version 00) anything
// after the flags. A later version is read for its first four fields, as the
// specification asks.
std::optional<TraceContext> ParseTraceparent(std::string_view header);

// A `tracestate` header's value as kept with the event: empty when it is not a valid
// list (more than 32 members, a member without '=', a character outside 0x20-0x7e, more
// than 512 bytes in all), else the value without surrounding blanks.
std::string ValidTracestate(std::string_view header);

// "00-<trace id>-<span id>-<flags>", lower-case hex.
std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, uint8_t flags);

std::string ToHex(const TraceId& id);
std::string ToHex(const SpanId& id);

// An id from 16 or 8 random bytes (`bytes` longer than needed is cut); an all-zero
// draw is made non-zero, as a valid id must be.
TraceId TraceIdFrom(std::string_view bytes);
SpanId SpanIdFrom(std::string_view bytes);

class Sampler;

// A new span's place in its trace: a child of the context a `traceparent` names when it
// is valid, else the root of a fresh trace; sampled as `sampler` decides.
struct SpanStart {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent;  // nullopt: a root
  uint8_t flags = 0;
  std::string tracestate;  // the parent's, when valid; empty for a root
  bool sampled = false;

  // The context this span's children continue.
  std::string traceparent() const { return FormatTraceparent(trace_id, span_id, flags); }
};

// `random` holds 24 random bytes: the span id, and a trace id for a root.
SpanStart StartSpan(std::string_view traceparent, std::string_view tracestate,
                    const Sampler& sampler, std::string_view random);

// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
enum class SamplerKind {
  kAlwaysOn,
  kAlwaysOff,
  kTraceIdRatio,
  kParentBasedAlwaysOn,  // OpenTelemetry's default
  kParentBasedAlwaysOff,
  kParentBasedTraceIdRatio,
};

class Sampler {
 public:
  Sampler() : Sampler(SamplerKind::kParentBasedAlwaysOn) {}
  explicit Sampler(SamplerKind kind, double ratio = 1.0);

  // From the two variables' values (empty: unset). An unknown sampler or a bad ratio
  // falls back to the default with `*warning` set, as the specification asks.
  static Sampler FromEnv(std::string_view sampler, std::string_view arg, std::string* warning);

  // Whether a new span of `trace_id` is sampled. `parent_sampled`: the sampled flag of
  // a remote parent, nullopt for a root span. The ratio samplers decide by the trace
  // id alone, so every process decides alike for one trace.
  bool Sample(const TraceId& trace_id, std::optional<bool> parent_sampled) const;

  SamplerKind kind() const { return kind_; }
  double ratio() const { return ratio_; }

 private:
  SamplerKind kind_;
  double ratio_;
};

}  // namespace webhookd
