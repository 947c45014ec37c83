#pragma once

// A JSON Schema compiled into an immutable tree (a DAG where $refs share a node): every
// keyword read, every regular expression built and every $ref resolved once, at
// compile time, so validation only walks it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/schema_formats.h"

namespace re2 {
class RE2;
}

namespace webhookd::schema {

// The bits of `SchemaNode::types`.
enum TypeBit : uint8_t {
  kNullType = 1,
  kBooleanType = 2,
  kObjectType = 4,
  kArrayType = 8,
  kNumberType = 16,
  kStringType = 32,
  kIntegerType = 64,
};

struct Pattern {
  std::string source;
  std::shared_ptr<const re2::RE2> re;  // shared by every use of the same source
  // RE2's instructions for it: a scan of n bytes costs at most about n times this, when
  // its automaton falls back to the NFA (see kMaxPatternWork).
  size_t program_size = 0;
};

// The bits of `SchemaNode::groups`: which families of keywords a node has, so that a
// check skips the others at once.
enum GroupBit : uint8_t {
  kNumberChecks = 1,
  kStringChecks = 2,
  kArrayChecks = 4,
  kObjectChecks = 8,
  kCombinators = 16,
  kValueChecks = 32,  // enum, const
};

struct SchemaNode {
  using Json = nlohmann::json;

  // The node's JSON, and its $ref as written: valid while the schema's JSON is, that is
  // during compilation alone, to resolve $refs and name a problem (PointerTo). No node
  // copies its path: a long member name would be copied into every node below it.
  const Json* source = nullptr;
  const std::string* ref_text = nullptr;

  std::optional<bool> boolean;      // a `true` or `false` schema
  const SchemaNode* ref = nullptr;  // $ref: the keywords beside it are ignored (draft 7)

  uint8_t groups = 0;
  uint8_t types = 0;              // 0: any
  std::vector<Json> enum_values;  // sorted by CompareValues, for a binary search
  bool has_enum = false;
  std::optional<Json> const_value;

  std::optional<Json> multiple_of, minimum, maximum, exclusive_minimum, exclusive_maximum;
  std::optional<uint64_t> min_length, max_length;
  std::optional<Pattern> pattern;
  Format format = Format::kNone;

  const SchemaNode* items = nullptr;             // one schema for every item
  std::vector<const SchemaNode*> items_list;     // or one per position
  const SchemaNode* additional_items = nullptr;  // past the list
  std::optional<uint64_t> min_items, max_items;
  bool unique_items = false;
  const SchemaNode* contains = nullptr;

  std::optional<uint64_t> min_properties, max_properties;
  std::vector<std::string> required;
  std::map<std::string, const SchemaNode*, std::less<>> properties;
  std::vector<std::pair<Pattern, const SchemaNode*>> pattern_properties;
  const SchemaNode* additional_properties = nullptr;
  const SchemaNode* property_names = nullptr;
  std::map<std::string, std::vector<std::string>, std::less<>> dependency_names;
  std::map<std::string, const SchemaNode*, std::less<>> dependency_schemas;

  std::vector<const SchemaNode*> all_of, any_of, one_of;
  const SchemaNode* not_schema = nullptr;
  const SchemaNode* if_schema = nullptr;
  const SchemaNode* then_schema = nullptr;
  const SchemaNode* else_schema = nullptr;
};

struct CompiledTree {
  std::vector<std::unique_ptr<SchemaNode>> nodes;  // owns them all
  const SchemaNode* root = nullptr;
  // The most nodes one payload value can be checked against (see schema_graph.h).
  size_t cost = 0;
};

}  // namespace webhookd::schema
