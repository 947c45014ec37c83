#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/span.h"

namespace webhookd::trace {

// What the spans come from: OTLP's Resource. The instrumentation scope is "webhookd" at
// `service_version`.
struct Resource {
  std::string service_name = "webhookd";
  std::string service_version;  // left out when empty
  // More attributes (OTEL_RESOURCE_ATTRIBUTES). A key the exporter sets itself
  // (service.name, service.version, telemetry.sdk.*) is not repeated from here.
  std::vector<Attribute> attributes;
};

inline constexpr std::string_view kScopeName = "webhookd";
inline constexpr std::string_view kProtobufContentType = "application/x-protobuf";
inline constexpr std::string_view kJsonContentType = "application/json";

// The resource's attributes as exported: service.name, service.version,
// telemetry.sdk.name "webhookd", telemetry.sdk.language "cpp", then the others.
std::vector<Attribute> ResourceAttributes(const Resource& resource);

// An OTLP ExportTraceServiceRequest (opentelemetry-proto v1) holding `spans` under one
// ResourceSpans and one ScopeSpans, in protobuf's binary encoding. Written by hand:
// the few messages used do not need libprotobuf. Strings that are not UTF-8 are
// repaired, as protobuf's string fields must be UTF-8.
std::string EncodeProtobuf(const std::vector<Span>& spans, const Resource& resource);

// The same request in OTLP/JSON: ids as lower-case hex, enums as integers, 64-bit
// integers and times as decimal strings.
std::string EncodeJson(const std::vector<Span>& spans, const Resource& resource);

}  // namespace webhookd::trace
