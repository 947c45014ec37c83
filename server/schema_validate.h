#pragma once

// Checks a payload against a compiled tree: each node once per value it applies to, so
// the work is at most the tree's cost times the payload's values; it stops at the first
// failure where only a yes or no is wanted (anyOf, oneOf, not, if, contains,
// propertyNames) and at `max_errors` otherwise.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "server/schema_tree.h"

namespace webhookd::schema {

struct Validation {
  std::vector<FieldError> errors;  // fields under the prefix given
  size_t visits = 0;               // nodes checked, for the fuzz target's bound
};

Validation ValidateTree(const SchemaNode& root, const nlohmann::json& doc, std::string_view prefix,
                        size_t max_errors);

}  // namespace webhookd::schema
