#include "cmd/webhookd/tracing.h"

#include <cstdlib>
#include <string>

#include "base/log.h"

namespace webhookd::cmd {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

Result<std::unique_ptr<Tracing>> Tracing::FromEnv(Metrics& metrics) {
  (void)metrics;
  auto tracing = std::make_unique<Tracing>();
  std::string warning;
  tracing->sampler_ =
      Sampler::FromEnv(Env("OTEL_TRACES_SAMPLER"), Env("OTEL_TRACES_SAMPLER_ARG"), &warning);
  if (!warning.empty()) Log(LogLevel::kWarn, warning);
  return tracing;
}

Tracing::~Tracing() = default;

}  // namespace webhookd::cmd
