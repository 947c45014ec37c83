#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "trace/otlp_encoding.h"

namespace webhookd::trace {

enum class OtlpProtocol { kHttpProtobuf, kHttpJson };

// How spans are exported, from OpenTelemetry's standard environment variables
// (the specification's "OpenTelemetry Protocol Exporter" and "Batch Span Processor").
struct ExporterOptions {
  std::string endpoint;  // the full URL spans are POSTed to
  // Sent with every export; values are credentials as often as not: never logged.
  std::vector<std::pair<std::string, std::string>> headers;
  OtlpProtocol protocol = OtlpProtocol::kHttpProtobuf;
  std::chrono::milliseconds timeout{10000};  // one POST
  Resource resource;
  std::chrono::milliseconds schedule_delay{5000};  // the longest a span waits for a full batch
  size_t max_queue_size = 2048;
  size_t max_export_batch_size = 512;
  std::chrono::milliseconds export_timeout{30000};  // one batch, its retries included
};

// The options, or nullopt when no endpoint is set (spans are not exported) or when
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. An empty variable counts as
// unset, and a per-signal variable (OTEL_EXPORTER_OTLP_TRACES_*) replaces the general
// one. A bad value is an Error whose message names the variable; the headers' values
// are never echoed.
//
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  used as is
// OTEL_EXPORTER_OTLP_ENDPOINT         + "/v1/traces"
// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS  k1=v1,k2=v2, values percent-encoded
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL http/protobuf (default) or http/json
// OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT  milliseconds, 10000
// OTEL_SERVICE_NAME                   service.name, "webhookd" (over the next one's)
// OTEL_RESOURCE_ATTRIBUTES            k1=v1,k2=v2 added to the resource
// OTEL_BSP_SCHEDULE_DELAY             milliseconds, 5000
// OTEL_BSP_MAX_QUEUE_SIZE             2048
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE      512, at most the queue's size
// OTEL_BSP_EXPORT_TIMEOUT             milliseconds, 30000
Result<std::optional<ExporterOptions>> ExporterOptionsFromEnv(const EnvLookup& getenv);

// Every OpenTelemetry variable webhookd reads, with its default and what a value must be,
// beside base/config's ConfigVariables(): ExporterOptionsFromEnv's, and the sampler's two
// (read by cmd/webhookd/tracing.cc). `webhookd server --help` lists them; docs/tracing.md
// describes them, and a test holds both to what is read.
std::span<const ConfigVariable> TraceVariables();

}  // namespace webhookd::trace
