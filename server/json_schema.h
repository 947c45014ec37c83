#pragma once

// JSON Schema (draft 7) for the event catalog, on Debian's valijson: compiled once per
// schema, then used by any number of threads.

#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace valijson {
class Schema;
}

namespace webhookd {

class JsonSchema {
 public:
  // kInvalid with one error whose field is `field` plus the JSON Pointer of the keyword
  // at fault ("/schema/properties/amount/type") and valijson's reason.
  static Result<std::shared_ptr<const JsonSchema>> Compile(const nlohmann::json& schema,
                                                           std::string_view field);
  ~JsonSchema();

  // One error per violation (at most kMaxViolations), each field the JSON Pointer of the
  // offending value under `prefix` ("/payload/amount"); empty when `doc` is valid.
  std::vector<FieldError> Validate(const nlohmann::json& doc, std::string_view prefix) const;

  static constexpr size_t kMaxViolations = 100;

 private:
  explicit JsonSchema(std::unique_ptr<valijson::Schema> schema);
  std::unique_ptr<valijson::Schema> schema_;
};

}  // namespace webhookd
