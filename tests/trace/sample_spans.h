#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "trace/otlp_encoding.h"
#include "trace/span.h"

namespace webhookd::trace::samples {

// The spans the encoding tests agree on: a server span with a parent, a trace state, an
// error status and every attribute type; and a root client span with zero-valued
// attributes (a oneof must carry them anyway).
inline Span ServerSpan() {
  Span s;
  s.trace_id = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
                0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  s.span_id = {0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
  s.parent_span_id = SpanId{0x53, 0x99, 0x5c, 0x3f, 0x42, 0xcd, 0x8a, 0xd8};
  s.tracestate = "vendor=a1";
  s.flags = kSampledFlag;
  s.name = "POST /v1/events";
  s.kind = SpanKind::kServer;
  s.start = Timestamp(std::chrono::microseconds(1'700'000'000'123'456));
  s.end = s.start + std::chrono::microseconds(1'500);
  s.attributes = {
      {"http.request.method", std::string("POST")},
      {"http.response.status_code", int64_t{503}},
      {"webhookd.replayed", true},
      {"webhookd.ratio", 0.25},
      {"webhookd.offset", int64_t{-7}},
      {"webhookd.big", std::numeric_limits<int64_t>::max()},
  };
  s.status = SpanStatus::kError;
  s.status_message = "database unavailable";
  return s;
}

inline Span ClientSpan() {
  Span s;
  s.trace_id = {0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd,
                0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c};
  s.span_id = {0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31};
  s.flags = kSampledFlag;
  s.name = "webhook attempt";
  s.kind = SpanKind::kClient;
  s.start = Timestamp(std::chrono::microseconds(1'700'000'001'000'000));
  s.end = s.start + std::chrono::milliseconds(42);
  s.attributes = {
      {"zero", int64_t{0}},
      {"false", false},
      {"empty", std::string()},
      {"nought", 0.0},
  };
  s.status = SpanStatus::kOk;
  return s;
}

inline Resource SampleResource() {
  Resource r;
  r.service_name = "webhookd-test";
  r.service_version = "1.2.3";
  r.attributes = {{"deployment.environment", std::string("test")},
                  {"service.name", std::string("ignored")},
                  {"telemetry.sdk.name", std::string("ignored")}};
  return r;
}

}  // namespace webhookd::trace::samples
