#include "server/schema_bounds.h"

#include <string>
#include <string_view>

namespace webhookd::schema {
namespace {

using Json = nlohmann::json;

// Past this many levels the compile refuses the schema (schema_compile.cc); the walk stops
// there too.
constexpr int kMaxWalkDepth = 130;

size_t QuotedSize(std::string_view text) {
  size_t n = 2;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      n += 2;
    } else if (u < 0x20) {
      n += 6;  // \u00XX
    } else {
      ++n;
    }
  }
  return n;
}

void Size(const Json& v, size_t limit, size_t& total, int depth) {
  if (total > limit) return;
  if (depth > kMaxWalkDepth) {
    total = limit + 1;
    return;
  }
  switch (v.type()) {
    case Json::value_t::object: {
      total += 2 + (v.empty() ? 0 : v.size() - 1);  // {} and the commas
      for (const auto& [key, member] : v.items()) {
        total += QuotedSize(key) + 1;
        Size(member, limit, total, depth + 1);
        if (total > limit) return;
      }
      return;
    }
    case Json::value_t::array:
      total += 2 + (v.empty() ? 0 : v.size() - 1);
      for (const Json& item : v) {
        Size(item, limit, total, depth + 1);
        if (total > limit) return;
      }
      return;
    case Json::value_t::string:
      total += QuotedSize(v.get_ref<const std::string&>());
      return;
    case Json::value_t::boolean:
      total += v.get<bool>() ? 4 : 5;
      return;
    case Json::value_t::null:
      total += 4;
      return;
    default:
      total += v.dump().size();  // a number: a few bytes
      return;
  }
}

// The keywords whose value is one schema, a list of them, or a map of names to them.
bool OneSchemaKeyword(std::string_view k) {
  return k == "additionalItems" || k == "contains" || k == "additionalProperties" ||
         k == "propertyNames" || k == "not" || k == "if" || k == "then" || k == "else";
}
bool ListKeyword(std::string_view k) { return k == "allOf" || k == "anyOf" || k == "oneOf"; }
bool MapKeyword(std::string_view k) {
  return k == "properties" || k == "patternProperties" || k == "definitions" || k == "dependencies";
}

void Count(const Json& s, size_t limit, size_t& total, int depth) {
  if (!s.is_object() || total > limit || depth > kMaxWalkDepth) return;
  const auto sub = [&](const Json& child) {
    if (total > limit) return;
    // A value that is no schema (a dependency's list of names) is not one.
    if (!child.is_object() && !child.is_boolean()) return;
    ++total;
    Count(child, limit, total, depth + 1);
  };
  for (const auto& [key, value] : s.items()) {
    if (OneSchemaKeyword(key) || (key == "items" && !value.is_array())) {
      sub(value);
    } else if (ListKeyword(key) || key == "items") {
      if (!value.is_array()) continue;
      for (const Json& child : value) sub(child);
    } else if (MapKeyword(key)) {
      if (!value.is_object()) continue;
      for (const Json& child : value) sub(child);
    }
    if (total > limit) return;
  }
}

}  // namespace

size_t SerializedSize(const Json& value, size_t limit) {
  size_t total = 0;
  Size(value, limit, total, 0);
  return total;
}

size_t CountSubschemas(const Json& schema, size_t limit) {
  size_t total = 0;
  Count(schema, limit, total, 0);
  return total;
}

std::optional<Problem> CheckBounds(const Json& schema) {
  if (SerializedSize(schema, kMaxSchemaBytes) > kMaxSchemaBytes) {
    return Problem{"", "is larger than " + std::to_string(kMaxSchemaBytes) +
                           " bytes as compact JSON; split it or simplify it"};
  }
  if (CountSubschemas(schema, kMaxSubschemas) > kMaxSubschemas) {
    return Problem{"", "holds more than " + std::to_string(kMaxSubschemas) + " subschemas"};
  }
  return std::nullopt;
}

}  // namespace webhookd::schema
