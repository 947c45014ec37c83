#include "trace/otlp_encoding.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "base/encoding.h"

namespace webhookd::trace {
namespace {

// Field numbers of opentelemetry-proto v1, by message and .proto file.
namespace field {
// collector/trace/v1/trace_service.proto
constexpr uint32_t kRequestResourceSpans = 1;
// trace/v1/trace.proto
constexpr uint32_t kResourceSpansResource = 1;
constexpr uint32_t kResourceSpansScopeSpans = 2;
constexpr uint32_t kScopeSpansScope = 1;
constexpr uint32_t kScopeSpansSpans = 2;
constexpr uint32_t kSpanTraceId = 1;
constexpr uint32_t kSpanSpanId = 2;
constexpr uint32_t kSpanTraceState = 3;
constexpr uint32_t kSpanParentSpanId = 4;
constexpr uint32_t kSpanName = 5;
constexpr uint32_t kSpanKind = 6;
constexpr uint32_t kSpanStartTime = 7;
constexpr uint32_t kSpanEndTime = 8;
constexpr uint32_t kSpanAttributes = 9;
constexpr uint32_t kSpanStatus = 15;
constexpr uint32_t kSpanFlags = 16;
constexpr uint32_t kStatusMessage = 2;
constexpr uint32_t kStatusCode = 3;
// resource/v1/resource.proto
constexpr uint32_t kResourceAttributes = 1;
// common/v1/common.proto
constexpr uint32_t kScopeName = 1;
constexpr uint32_t kScopeVersion = 2;
constexpr uint32_t kKeyValueKey = 1;
constexpr uint32_t kKeyValueValue = 2;
constexpr uint32_t kAnyString = 1;
constexpr uint32_t kAnyBool = 2;
constexpr uint32_t kAnyInt = 3;
constexpr uint32_t kAnyDouble = 4;
}  // namespace field

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void PutTag(std::string& out, uint32_t number, WireType type) {
  PutVarint(out, (static_cast<uint64_t>(number) << 3) | type);
}

void PutLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

void PutBytes(std::string& out, uint32_t number, std::string_view bytes) {
  PutTag(out, number, kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

std::string Utf8(std::string_view text) {
  return IsValidUtf8(text) ? std::string(text) : SanitizeUtf8(text);
}

void PutString(std::string& out, uint32_t number, std::string_view text) {
  PutBytes(out, number, Utf8(text));
}

void PutFixed64(std::string& out, uint32_t number, uint64_t value) {
  PutTag(out, number, kFixed64);
  PutLittleEndian(out, value, 8);
}

void PutUint(std::string& out, uint32_t number, uint64_t value) {
  PutTag(out, number, kVarint);
  PutVarint(out, value);
}

template <size_t N>
std::string_view Bytes(const std::array<uint8_t, N>& id) {
  return {reinterpret_cast<const char*>(id.data()), N};
}

uint64_t UnixNanos(Timestamp t) {
  const int64_t micros = t.time_since_epoch().count();
  return micros <= 0 ? 0 : static_cast<uint64_t>(micros) * 1000;
}

std::string EncodeKeyValue(const Attribute& attribute) {
  // AnyValue's fields are a oneof: a zero, false or empty value is written too, or the
  // value would read as absent.
  std::string value;
  std::visit(
      [&value](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          PutString(value, field::kAnyString, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          PutUint(value, field::kAnyBool, v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          PutUint(value, field::kAnyInt, static_cast<uint64_t>(v));  // two's complement
        } else {
          PutTag(value, field::kAnyDouble, kFixed64);
          PutLittleEndian(value, std::bit_cast<uint64_t>(v), 8);
        }
      },
      attribute.value);
  std::string out;
  PutString(out, field::kKeyValueKey, attribute.key);
  PutBytes(out, field::kKeyValueValue, value);
  return out;
}

// Fields in number order and proto3's defaults left out, as protobuf's own encoders do.
std::string EncodeSpan(const Span& span) {
  std::string out;
  PutBytes(out, field::kSpanTraceId, Bytes(span.trace_id));
  PutBytes(out, field::kSpanSpanId, Bytes(span.span_id));
  if (!span.tracestate.empty()) PutString(out, field::kSpanTraceState, span.tracestate);
  if (span.parent_span_id) PutBytes(out, field::kSpanParentSpanId, Bytes(*span.parent_span_id));
  if (!span.name.empty()) PutString(out, field::kSpanName, span.name);
  if (span.kind != SpanKind{}) PutUint(out, field::kSpanKind, static_cast<uint64_t>(span.kind));
  if (const uint64_t start = UnixNanos(span.start)) PutFixed64(out, field::kSpanStartTime, start);
  if (const uint64_t end = UnixNanos(span.end)) PutFixed64(out, field::kSpanEndTime, end);
  for (const auto& attribute : span.attributes) {
    PutBytes(out, field::kSpanAttributes, EncodeKeyValue(attribute));
  }
  if (span.status != SpanStatus::kUnset || !span.status_message.empty()) {
    std::string status;
    if (!span.status_message.empty()) PutString(status, field::kStatusMessage, span.status_message);
    if (span.status != SpanStatus::kUnset) {
      PutUint(status, field::kStatusCode, static_cast<uint64_t>(span.status));
    }
    PutBytes(out, field::kSpanStatus, status);
  }
  if (span.flags != 0) {
    PutTag(out, field::kSpanFlags, kFixed32);
    PutLittleEndian(out, span.flags, 4);
  }
  return out;
}

using Json = nlohmann::ordered_json;

template <size_t N>
std::string Hex(const std::array<uint8_t, N>& id) {
  return HexEncode(Bytes(id));
}

Json JsonAnyValue(const decltype(Attribute::value)& value) {
  return std::visit(
      [](const auto& v) -> Json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return Json{{"stringValue", Utf8(v)}};
        } else if constexpr (std::is_same_v<T, bool>) {
          return Json{{"boolValue", v}};
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return Json{{"intValue", std::to_string(v)}};
        } else if (std::isnan(v)) {
          return Json{{"doubleValue", "NaN"}};  // JSON has no such number; proto3 spells it
        } else if (std::isinf(v)) {
          return Json{{"doubleValue", v > 0 ? "Infinity" : "-Infinity"}};
        } else {
          return Json{{"doubleValue", v}};
        }
      },
      value);
}

Json JsonAttributes(const std::vector<Attribute>& attributes) {
  Json out = Json::array();
  for (const auto& a : attributes) {
    out.push_back(Json{{"key", Utf8(a.key)}, {"value", JsonAnyValue(a.value)}});
  }
  return out;
}

Json JsonSpan(const Span& span) {
  Json out = Json::object();
  out["traceId"] = Hex(span.trace_id);
  out["spanId"] = Hex(span.span_id);
  if (!span.tracestate.empty()) out["traceState"] = Utf8(span.tracestate);
  if (span.parent_span_id) out["parentSpanId"] = Hex(*span.parent_span_id);
  if (span.flags != 0) out["flags"] = span.flags;
  out["name"] = Utf8(span.name);
  out["kind"] = static_cast<int>(span.kind);
  out["startTimeUnixNano"] = std::to_string(UnixNanos(span.start));
  out["endTimeUnixNano"] = std::to_string(UnixNanos(span.end));
  if (!span.attributes.empty()) out["attributes"] = JsonAttributes(span.attributes);
  if (span.status != SpanStatus::kUnset || !span.status_message.empty()) {
    Json status = Json::object();
    if (!span.status_message.empty()) status["message"] = Utf8(span.status_message);
    if (span.status != SpanStatus::kUnset) status["code"] = static_cast<int>(span.status);
    out["status"] = std::move(status);
  }
  return out;
}

bool SetByExporter(std::string_view key) {
  return key == "service.name" || key == "service.version" || key.starts_with("telemetry.sdk.");
}

}  // namespace

std::vector<Attribute> ResourceAttributes(const Resource& resource) {
  std::vector<Attribute> out;
  out.push_back({"service.name", resource.service_name});
  if (!resource.service_version.empty()) {
    out.push_back({"service.version", resource.service_version});
  }
  out.push_back({"telemetry.sdk.name", std::string("webhookd")});
  out.push_back({"telemetry.sdk.language", std::string("cpp")});
  for (const auto& a : resource.attributes) {
    if (!SetByExporter(a.key)) out.push_back(a);
  }
  return out;
}

std::string EncodeProtobuf(const std::vector<Span>& spans, const Resource& resource) {
  std::string resource_message;
  for (const auto& attribute : ResourceAttributes(resource)) {
    PutBytes(resource_message, field::kResourceAttributes, EncodeKeyValue(attribute));
  }
  std::string scope;
  PutString(scope, field::kScopeName, kScopeName);
  if (!resource.service_version.empty()) {
    PutString(scope, field::kScopeVersion, resource.service_version);
  }
  std::string scope_spans;
  PutBytes(scope_spans, field::kScopeSpansScope, scope);
  for (const auto& span : spans) PutBytes(scope_spans, field::kScopeSpansSpans, EncodeSpan(span));
  std::string resource_spans;
  PutBytes(resource_spans, field::kResourceSpansResource, resource_message);
  PutBytes(resource_spans, field::kResourceSpansScopeSpans, scope_spans);
  std::string request;
  PutBytes(request, field::kRequestResourceSpans, resource_spans);
  return request;
}

std::string EncodeJson(const std::vector<Span>& spans, const Resource& resource) {
  Json scope = Json{{"name", std::string(kScopeName)}};
  if (!resource.service_version.empty()) scope["version"] = Utf8(resource.service_version);
  Json json_spans = Json::array();
  for (const auto& span : spans) json_spans.push_back(JsonSpan(span));
  Json scope_spans = Json::object();
  scope_spans["scope"] = std::move(scope);
  if (!spans.empty()) scope_spans["spans"] = std::move(json_spans);
  Json resource_spans = Json::object();
  resource_spans["resource"] = Json{{"attributes", JsonAttributes(ResourceAttributes(resource))}};
  resource_spans["scopeSpans"] = Json::array({std::move(scope_spans)});
  Json request = Json::object();
  request["resourceSpans"] = Json::array({std::move(resource_spans)});
  // Every string went through Utf8 already; replace is the guard against a throw.
  return request.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace webhookd::trace
