#pragma once

// JSON Schema (draft 7) for the event catalog: compiled once per schema into an immutable
// tree, then used by any number of threads. A schema is accepted only if checking a
// payload against it takes time linear in the payload and bounded memory: no $ref cycle,
// regular expressions RE2 runs in linear time, a bounded count of subschemas per value
// (schema_graph.h).

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace webhookd {

namespace schema {
struct CompiledTree;
}

class JsonSchema {
 public:
  // kInvalid with one error whose field is `field` plus the JSON Pointer of the keyword
  // at fault ("/schema/properties/amount/type") and the reason.
  static Result<std::shared_ptr<const JsonSchema>> Compile(const nlohmann::json& schema,
                                                           std::string_view field);
  ~JsonSchema();

  // One error per violation (at most kMaxViolations, after which checking stops), each
  // field the JSON Pointer of the offending value under `prefix` ("/payload/amount");
  // empty when `doc` is valid. `visits`, if given, receives the count of subschemas
  // checked.
  std::vector<FieldError> Validate(const nlohmann::json& doc, std::string_view prefix,
                                   size_t* visits = nullptr) const;

  // The most subschemas one value of a payload is checked against.
  size_t cost() const;

  static constexpr size_t kMaxViolations = 100;

 private:
  explicit JsonSchema(std::unique_ptr<schema::CompiledTree> tree);
  std::unique_ptr<schema::CompiledTree> tree_;
};

}  // namespace webhookd
