#include "trace/exporter_options.h"

#include <cstdint>

#include "base/encoding.h"
#include "base/strings.h"

namespace webhookd::trace {
namespace {

constexpr int64_t kMaxMillis = 3'600'000;  // an hour: anything longer is a typo
constexpr int64_t kMaxQueue = 1'000'000;   // spans held in memory at once
constexpr std::string_view kBlanks = " \t";

using KeyValues = std::vector<std::pair<std::string, std::string>>;

std::unexpected<Error> Bad(std::string_view name, std::string_view expected,
                           std::string_view value) {
  constexpr size_t kShown = 64;
  std::string shown = JsonQuote(value.substr(0, kShown));
  if (value.size() > kShown) shown += "...";
  return Fail(ErrorKind::kInvalid,
              std::string(name) + ": expected " + std::string(expected) + ", got " + shown);
}

// For values that may hold credentials: what was wrong, never the value.
std::unexpected<Error> BadSecret(std::string_view name, std::string_view what) {
  return Fail(ErrorKind::kInvalid,
              std::string(name) + ": " + std::string(what) + " (value not shown)");
}

// The specification asks an empty variable to be taken as unset.
std::optional<std::string> Get(const EnvLookup& getenv, std::string_view name) {
  auto value = getenv(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// The per-signal variable when set, else the general one, with the name it came from.
std::optional<std::pair<std::string_view, std::string>> GetEither(const EnvLookup& getenv,
                                                                  std::string_view traces,
                                                                  std::string_view general) {
  if (auto v = Get(getenv, traces)) return std::pair{traces, std::move(*v)};
  if (auto v = Get(getenv, general)) return std::pair{general, std::move(*v)};
  return std::nullopt;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = HexDigit(text[i + 1]);
    const int lo = HexDigit(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// RFC 9110's token: what a header name may be made of.
bool IsToken(std::string_view text) {
  static constexpr std::string_view kMarks = "!#$%&'*+-.^_`|~";
  if (text.empty()) return false;
  for (const char c : text) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && kMarks.find(c) == std::string_view::npos) return false;
  }
  return true;
}

// No control character but tab: a CR or LF would end the header early.
bool IsFieldValue(std::string_view text) {
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && b != '\t') || b == 0x7f) return false;
  }
  return true;
}

// "k1=v1,k2=v2" as the specification writes headers and resource attributes: blanks
// around keys and values trimmed, values percent-decoded, empty members skipped. The
// error names the variable and the member's position, not its text.
Result<KeyValues> ParseList(std::string_view name, std::string_view text, bool headers) {
  KeyValues out;
  size_t position = 0;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view member = Trim(text.substr(0, comma), kBlanks);
    ++position;
    if (!member.empty()) {
      const std::string where = "entry " + std::to_string(position);
      const size_t eq = member.find('=');
      if (eq == std::string_view::npos) return BadSecret(name, where + " is not key=value");
      const std::string_view key = Trim(member.substr(0, eq), kBlanks);
      if (key.empty()) return BadSecret(name, where + " has an empty key");
      auto value = PercentDecode(Trim(member.substr(eq + 1), kBlanks));
      if (!value) return BadSecret(name, where + " has a bad percent-encoding");
      if (headers && !IsToken(key)) return BadSecret(name, where + " is not a header name");
      if (!IsFieldValue(*value) || !IsFieldValue(key)) {
        return BadSecret(name, where + " holds a control character");
      }
      out.emplace_back(std::string(key), std::move(*value));
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

Result<int64_t> Number(const EnvLookup& getenv, std::string_view name, int64_t fallback,
                       int64_t min, int64_t max, std::string_view unit) {
  const auto text = Get(getenv, name);
  if (!text) return fallback;
  const auto value = ParseBoundedInt(Trim(*text, kBlanks), min, max);
  if (!value) {
    return Bad(name,
               "a whole number of " + std::string(unit) + " from " + std::to_string(min) + " to " +
                   std::to_string(max),
               *text);
  }
  return *value;
}

Result<std::chrono::milliseconds> Millis(const EnvLookup& getenv, std::string_view name,
                                         int64_t fallback, int64_t min) {
  WEBHOOKD_ASSIGN_OR_RETURN(const int64_t ms,
                            Number(getenv, name, fallback, min, kMaxMillis, "milliseconds"));
  return std::chrono::milliseconds(ms);
}

// An http:// or https:// URL with a host. The value is not echoed: a URL may carry a
// user and password.
Result<std::string> Endpoint(std::string_view name, std::string_view url) {
  const std::string lower = Lower(url.substr(0, 8));
  size_t scheme = 0;
  if (lower.starts_with("http://")) {
    scheme = 7;
  } else if (lower.starts_with("https://")) {
    scheme = 8;
  } else {
    return BadSecret(name, "expected an http:// or https:// URL");
  }
  const std::string_view rest = url.substr(scheme);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const std::string_view host = authority.substr(authority.rfind('@') + 1);
  if (host.empty() || host.starts_with(':')) return BadSecret(name, "the URL has no host");
  if (!IsFieldValue(url) || url.find_first_of(" \t") != std::string_view::npos) {
    return BadSecret(name, "the URL holds a blank or a control character");
  }
  return std::string(url);
}

// OTEL_EXPORTER_OTLP_ENDPOINT is a base URL: the signal's path goes after its path,
// with one slash between.
std::string WithTracesPath(std::string base) {
  while (base.ends_with('/')) base.pop_back();
  return base + "/v1/traces";
}

bool IsTrue(std::string_view text) { return EqualsIgnoreCase(Trim(text, kBlanks), "true"); }

}  // namespace

std::span<const ConfigVariable> TraceVariables() {
  static constexpr ConfigVariable kVariables[] = {
      {"OTEL_SDK_DISABLED", "false", "true or false"},
      {"OTEL_TRACES_EXPORTER", "otlp", "otlp or none"},
      {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "unset", "an http:// or https:// URL"},
      {"OTEL_EXPORTER_OTLP_ENDPOINT", "unset: no export", "an http:// or https:// URL"},
      {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "none", "key=value,key2=value2"},
      {"OTEL_EXPORTER_OTLP_HEADERS", "none", "key=value,key2=value2"},
      {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf", "http/protobuf or http/json"},
      {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "http/protobuf or http/json"},
      {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10000", "milliseconds"},
      {"OTEL_EXPORTER_OTLP_TIMEOUT", "10000", "milliseconds"},
      {"OTEL_RESOURCE_ATTRIBUTES", "none", "key=value,key2=value2"},
      {"OTEL_SERVICE_NAME", "webhookd", "a name"},
      {"OTEL_BSP_SCHEDULE_DELAY", "5000", "milliseconds"},
      {"OTEL_BSP_EXPORT_TIMEOUT", "30000", "milliseconds"},
      {"OTEL_BSP_MAX_QUEUE_SIZE", "2048", "spans"},
      {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512", "spans (at most OTEL_BSP_MAX_QUEUE_SIZE)"},
      {"OTEL_TRACES_SAMPLER", "parentbased_always_on", "a sampler's name"},
      {"OTEL_TRACES_SAMPLER_ARG", "1", "a ratio from 0 to 1"},
  };
  return kVariables;
}

Result<std::optional<ExporterOptions>> ExporterOptionsFromEnv(const EnvLookup& getenv) {
  if (const auto disabled = Get(getenv, "OTEL_SDK_DISABLED"); disabled && IsTrue(*disabled)) {
    return std::nullopt;
  }
  if (const auto exporter = Get(getenv, "OTEL_TRACES_EXPORTER")) {
    const std::string name = Lower(Trim(*exporter, kBlanks));
    if (name == "none") return std::nullopt;
    if (name != "otlp") return Bad("OTEL_TRACES_EXPORTER", "otlp or none", *exporter);
  }
  ExporterOptions options;
  if (auto url = Get(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
    WEBHOOKD_ASSIGN_OR_RETURN(options.endpoint,
                              Endpoint("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", *url));
  } else if (auto base = Get(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT")) {
    WEBHOOKD_ASSIGN_OR_RETURN(const std::string checked,
                              Endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", *base));
    options.endpoint = WithTracesPath(checked);
  } else {
    return std::nullopt;
  }

  if (auto headers =
          GetEither(getenv, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")) {
    WEBHOOKD_ASSIGN_OR_RETURN(options.headers,
                              ParseList(headers->first, headers->second, /*headers=*/true));
  }

  if (auto protocol =
          GetEither(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")) {
    const std::string value = Lower(Trim(protocol->second, kBlanks));
    if (value == "http/protobuf") {
      options.protocol = OtlpProtocol::kHttpProtobuf;
    } else if (value == "http/json") {
      options.protocol = OtlpProtocol::kHttpJson;
    } else if (value == "grpc") {
      return Fail(ErrorKind::kInvalid,
                  std::string(protocol->first) +
                      ": grpc is not supported; use http/protobuf (the default) or http/json");
    } else {
      return Bad(protocol->first, "http/protobuf or http/json", protocol->second);
    }
  }

  if (auto timeout =
          GetEither(getenv, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")) {
    WEBHOOKD_ASSIGN_OR_RETURN(options.timeout,
                              Millis(getenv, timeout->first, options.timeout.count(), 1));
  }

  options.resource.service_version = WEBHOOKD_VERSION;
  if (auto attributes = Get(getenv, "OTEL_RESOURCE_ATTRIBUTES")) {
    WEBHOOKD_ASSIGN_OR_RETURN(const KeyValues pairs, ParseList("OTEL_RESOURCE_ATTRIBUTES",
                                                               *attributes, /*headers=*/false));
    for (const auto& [key, value] : pairs) {
      if (key == "service.name") {
        options.resource.service_name = value;
      } else {
        options.resource.attributes.push_back({key, value});
      }
    }
  }
  if (auto service = Get(getenv, "OTEL_SERVICE_NAME")) options.resource.service_name = *service;

  WEBHOOKD_ASSIGN_OR_RETURN(options.schedule_delay,
                            Millis(getenv, "OTEL_BSP_SCHEDULE_DELAY", 5000, 0));
  WEBHOOKD_ASSIGN_OR_RETURN(options.export_timeout,
                            Millis(getenv, "OTEL_BSP_EXPORT_TIMEOUT", 30000, 1));
  WEBHOOKD_ASSIGN_OR_RETURN(const int64_t queue,
                            Number(getenv, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1, kMaxQueue, "spans"));
  options.max_queue_size = static_cast<size_t>(queue);
  // Left unset, the batch follows a smaller queue down; set, it must fit in the queue.
  WEBHOOKD_ASSIGN_OR_RETURN(const int64_t batch, Number(getenv, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
                                                        std::min<int64_t>(512, queue), 1, queue,
                                                        "spans (at most OTEL_BSP_MAX_QUEUE_SIZE)"));
  options.max_export_batch_size = static_cast<size_t>(batch);
  return options;
}

}  // namespace webhookd::trace
