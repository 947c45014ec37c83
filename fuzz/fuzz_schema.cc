// JSON Schema compiled and checked on any input: a schema, a newline, a payload. Neither
// may crash, a check visits no more subschemas than the compiled schema's cost times the
// payload's values, and none takes longer than a second (even under the sanitizers).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "server/json_schema.h"
#include "server/schema_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using Json = nlohmann::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t split = text.find('\n');
  if (split == std::string_view::npos) return 0;
  const Json schema = Json::parse(text.substr(0, split), nullptr, /*allow_exceptions=*/false);
  const Json payload = Json::parse(text.substr(split + 1), nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded() || payload.is_discarded()) return 0;
  auto compiled = webhookd::JsonSchema::Compile(schema, "/schema");
  if (!compiled) {
    FUZZ_CHECK(compiled.error().fields.size() == 1);
    FUZZ_CHECK(compiled.error().fields[0].field.starts_with("/schema"));
    return 0;
  }
  FUZZ_CHECK((*compiled)->cost() >= 1 && (*compiled)->cost() <= webhookd::schema::kMaxCost);
  const auto started = std::chrono::steady_clock::now();
  size_t visits = 0;
  const auto errors = (*compiled)->Validate(payload, "/payload", &visits);
  FUZZ_CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(1));
  FUZZ_CHECK(visits <= (*compiled)->cost() * webhookd::schema::CountValues(payload));
  FUZZ_CHECK(errors.size() <= webhookd::JsonSchema::kMaxViolations);
  for (const auto& e : errors) FUZZ_CHECK(e.field.starts_with("/payload") && !e.message.empty());
  return 0;
}
