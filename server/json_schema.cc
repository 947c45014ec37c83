#include "server/json_schema.h"

#include <algorithm>
#include <string>
#include <utility>

#include "server/schema_bounds.h"
#include "server/schema_compile.h"
#include "server/schema_graph.h"
#include "server/schema_tree.h"
#include "server/schema_validate.h"

namespace webhookd {

JsonSchema::JsonSchema(std::unique_ptr<schema::CompiledTree> tree) : tree_(std::move(tree)) {}
JsonSchema::~JsonSchema() = default;

Result<std::shared_ptr<const JsonSchema>> JsonSchema::Compile(const nlohmann::json& json,
                                                              std::string_view field) {
  if (!json.is_object()) return Invalid({{std::string(field), "must be a JSON object"}});
  schema::Problem problem;
  std::unique_ptr<schema::CompiledTree> tree;
  // Bounded before anything is compiled: the compile's nodes, memory and time follow.
  if (auto too_big = schema::CheckBounds(json)) {
    problem = std::move(*too_big);
  } else {
    tree = schema::BuildTree(json, problem);
  }
  if (tree) {
    if (auto bad = schema::CheckGraph(*tree, json)) problem = std::move(*bad), tree.reset();
  }
  if (!tree) return Invalid({{std::string(field) + problem.pointer, problem.message}});
  return std::shared_ptr<const JsonSchema>(new JsonSchema(std::move(tree)));
}

std::vector<FieldError> JsonSchema::Validate(const nlohmann::json& doc, std::string_view prefix,
                                             size_t* visits) const {
  const size_t values = schema::CountValues(doc);
  if (values > schema::kMaxWork / std::max<size_t>(tree_->cost, 1)) {
    if (visits != nullptr) *visits = 0;
    return {{std::string(prefix),
             "holds too many values (" + std::to_string(values) +
                 ") to be checked against its event type's schema: at most " +
                 std::to_string(schema::kMaxWork / std::max<size_t>(tree_->cost, 1)) +
                 " for this schema"}};
  }
  schema::Validation v = schema::ValidateTree(*tree_->root, doc, prefix, kMaxViolations);
  if (visits != nullptr) *visits = v.visits;
  return std::move(v.errors);
}

size_t JsonSchema::cost() const { return tree_->cost; }

}  // namespace webhookd
