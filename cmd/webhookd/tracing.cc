#include "cmd/webhookd/tracing.h"

#include <cstdlib>
#include <string>

#include "base/log.h"
#include "trace/curl_transport.h"
#include "trace/exporter.h"
#include "trace/exporter_options.h"

namespace webhookd::cmd {
namespace {

// What is queued at a stop gets this long to reach the collector; a collector that does
// not answer must not hold a stopping process.
constexpr std::chrono::milliseconds kShutdownFlush{2000};

std::optional<std::string> Env(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

Tracing::Tracing() = default;

Result<std::unique_ptr<Tracing>> Tracing::FromEnv(Metrics& metrics) {
  std::unique_ptr<Tracing> tracing(new Tracing());
  std::string warning;
  tracing->sampler_ = Sampler::FromEnv(Env("OTEL_TRACES_SAMPLER").value_or(""),
                                       Env("OTEL_TRACES_SAMPLER_ARG").value_or(""), &warning);
  if (!warning.empty()) Log(LogLevel::kWarn, warning);
  auto options = trace::ExporterOptionsFromEnv(Env);
  if (!options) return std::unexpected(options.error());
  if (*options) {
    (*options)->resource.service_version = WEBHOOKD_VERSION;
    Log(LogLevel::kInfo, "exporting spans over OTLP/HTTP", {{"endpoint", (*options)->endpoint}});
    tracing->exporter_ = std::make_unique<trace::OtlpExporter>(
        std::move(**options), std::make_unique<trace::CurlTransport>(tracing->clock_),
        metrics.trace_spans_exported, metrics.trace_spans_dropped);
  }
  return tracing;
}

Tracing::~Tracing() {
  if (exporter_) exporter_->Shutdown(kShutdownFlush);
}

trace::SpanSink* Tracing::sink() const { return exporter_.get(); }

}  // namespace webhookd::cmd
