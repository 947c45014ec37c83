#include "server/schema_compile.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "server/schema_values.h"

namespace webhookd::schema {
namespace {

using Json = nlohmann::json;

// Schemas nest no deeper than this in the JSON itself (request bodies are held to 64
// levels before parsing; this guards every other caller).
constexpr int kMaxNesting = 128;

std::optional<uint8_t> TypeNamed(std::string_view name) {
  static const std::map<std::string_view, uint8_t> kTypes = {
      {"null", kNullType},      {"boolean", kBooleanType}, {"object", kObjectType},
      {"array", kArrayType},    {"number", kNumberType},   {"string", kStringType},
      {"integer", kIntegerType}};
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

// A non-negative integer (2.0 counts, as draft 7 says).
std::optional<uint64_t> Count(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) return std::nullopt;
    return static_cast<uint64_t>(v.get<int64_t>());
  }
  if (v.is_number_float() && IsIntegerValue(v) && v.get<double>() >= 0 &&
      v.get<double>() < 1.8e19) {
    return static_cast<uint64_t>(v.get<double>());
  }
  return std::nullopt;
}

// ECMAScript's \uHHHH, which RE2 spells \x{HHHH}; everything else is left to RE2, which
// refuses what it cannot run in linear time (backreferences, lookaround).
std::string ToRe2Syntax(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'u' && i + 6 <= pattern.size() &&
          std::all_of(pattern.begin() + i + 2, pattern.begin() + i + 6,
                      [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
        out += "\\x{";
        out += pattern.substr(i + 2, 4);
        out += '}';
        i += 5;
        continue;
      }
      out += pattern.substr(i, 2);
      ++i;
      continue;
    }
    out += pattern[i];
  }
  return out;
}

uint8_t Groups(const SchemaNode& n) {
  uint8_t g = 0;
  if (n.multiple_of || n.minimum || n.maximum || n.exclusive_minimum || n.exclusive_maximum) {
    g |= kNumberChecks;
  }
  if (n.min_length || n.max_length || n.pattern || n.format != Format::kNone) g |= kStringChecks;
  if (n.items || !n.items_list.empty() || n.min_items || n.max_items || n.unique_items ||
      n.contains) {
    g |= kArrayChecks;
  }
  if (n.min_properties || n.max_properties || !n.required.empty() || !n.properties.empty() ||
      !n.pattern_properties.empty() || n.additional_properties || n.property_names ||
      !n.dependency_names.empty() || !n.dependency_schemas.empty()) {
    g |= kObjectChecks;
  }
  if (!n.all_of.empty() || !n.any_of.empty() || !n.one_of.empty() || n.not_schema || n.if_schema) {
    g |= kCombinators;
  }
  if (n.has_enum || n.const_value) g |= kValueChecks;
  return g;
}

class Builder {
 public:
  explicit Builder(const Json& doc, CompiledTree& tree) : doc_(doc), tree_(tree) {}

  std::optional<Problem> Run() {
    tree_.root = Node(doc_, "", 0);
    // Resolving a $ref may compile a part of the schema no keyword reaches, which may hold
    // $refs of its own: until there are none left.
    while (!problem_ && !unresolved_.empty()) {
      SchemaNode* n = unresolved_.back();
      unresolved_.pop_back();
      n->ref = Resolve(*n);
    }
    return problem_;
  }

 private:
  bool Fail(std::string pointer, std::string message) {
    if (!problem_) problem_ = Problem{std::move(pointer), std::move(message)};
    return false;
  }

  const SchemaNode* Node(const Json& s, const std::string& at, int depth) {
    if (problem_) return nullptr;
    if (auto it = by_pointer_.find(at); it != by_pointer_.end()) return it->second;
    if (depth > kMaxNesting) {
      Fail(at, "nests deeper than " + std::to_string(kMaxNesting) + " levels");
      return nullptr;
    }
    auto owned = std::make_unique<SchemaNode>();
    SchemaNode* n = owned.get();
    tree_.nodes.push_back(std::move(owned));
    by_pointer_[at] = n;
    n->pointer = at;
    if (s.is_boolean()) {
      n->boolean = s.get<bool>();
      return n;
    }
    if (!s.is_object()) {
      Fail(at, "a schema must be an object or a boolean");
      return nullptr;
    }
    for (const auto& [key, value] : s.items()) {
      if (!Keyword(*n, key, value, at + "/" + PointerToken(key), depth)) return nullptr;
    }
    n->groups = Groups(*n);
    return n;
  }

  // A keyword whose value is one schema.
  bool One(const Json& v, const std::string& at, int depth, const SchemaNode*& out) {
    out = Node(v, at, depth + 1);
    return out != nullptr;
  }

  bool List(const Json& v, const std::string& at, int depth, std::vector<const SchemaNode*>& out) {
    if (!v.is_array() || v.empty()) return Fail(at, "must be a non-empty array of schemas");
    for (size_t i = 0; i < v.size(); ++i) {
      const SchemaNode* sub = nullptr;
      if (!One(v[i], at + "/" + std::to_string(i), depth, sub)) return false;
      out.push_back(sub);
    }
    return true;
  }

  bool Number(const Json& v, const std::string& at, std::optional<Json>& out) {
    if (!v.is_number()) return Fail(at, "must be a number");
    out = v;
    return true;
  }

  bool CountOf(const Json& v, const std::string& at, std::optional<uint64_t>& out) {
    out = Count(v);
    return out ? true : Fail(at, "must be an integer of 0 or more");
  }

  bool StringList(const Json& v, const std::string& at, std::vector<std::string>& out) {
    std::set<std::string> names;
    if (!v.is_array()) return Fail(at, "must be an array of distinct strings");
    for (const Json& name : v) {
      if (!name.is_string() || !names.insert(name.get<std::string>()).second) {
        return Fail(at, "must be an array of distinct strings");
      }
      out.push_back(name.get<std::string>());
    }
    return true;
  }

  bool Regex(const std::string& source, const std::string& at, Pattern& out) {
    out.source = source;
    if (auto it = patterns_.find(source); it != patterns_.end()) {
      out.re = it->second;
      return true;
    }
    if (patterns_.size() >= kMaxPatterns) {
      return Fail(at, "is one regular expression too many: a schema may hold " +
                          std::to_string(kMaxPatterns) + " distinct ones");
    }
    RE2::Options options;
    options.set_log_errors(false);
    options.set_never_capture(true);
    options.set_max_mem(kPatternMemory);
    auto re = std::make_shared<const RE2>(ToRe2Syntax(source), options);
    if (!re->ok()) {
      if (re->error_code() == RE2::ErrorPatternTooLarge) {
        return Fail(at, "is too large a regular expression");
      }
      return Fail(at, "is not a regular expression webhookd can check in linear time (" +
                          re->error() + "; backreferences and lookaround are not supported)");
    }
    patterns_.emplace(source, re);
    out.re = std::move(re);
    return true;
  }

  // `type`: a name or an array of distinct names.
  bool Types(const Json& v, const std::string& at, SchemaNode& n) {
    if (v.is_string()) {
      auto bit = TypeNamed(v.get_ref<const std::string&>());
      if (!bit) return Fail(at, "is not a JSON Schema type");
      n.types = *bit;
      return true;
    }
    if (!v.is_array() || v.empty()) return Fail(at, "must be a type name or an array of them");
    for (const Json& name : v) {
      auto bit = name.is_string() ? TypeNamed(name.get_ref<const std::string&>()) : std::nullopt;
      if (!bit || (n.types & *bit)) return Fail(at, "must be a type name or an array of them");
      n.types |= *bit;
    }
    return true;
  }

  // The keywords whose value maps names to subschemas (`dependencies` also to lists of
  // names).
  bool SchemaMap(SchemaNode& n, const std::string& key, const Json& v, const std::string& at,
                 int depth) {
    if (!v.is_object()) return Fail(at, "must be an object");
    for (const auto& [name, sub] : v.items()) {
      const std::string here = at + "/" + PointerToken(name);
      if (key == "dependencies" && sub.is_array()) {
        if (!StringList(sub, here, n.dependency_names[name])) return false;
        continue;
      }
      const SchemaNode* node = nullptr;
      if (!One(sub, here, depth, node)) return false;
      if (key == "properties") n.properties[name] = node;
      if (key == "dependencies") n.dependency_schemas[name] = node;
      if (key == "patternProperties") {
        Pattern p;
        if (!Regex(name, here, p)) return false;
        n.pattern_properties.emplace_back(std::move(p), node);
      }
    }
    return true;
  }

  bool Keyword(SchemaNode& n, const std::string& key, const Json& v, const std::string& at,
               int depth) {
    if (key == "$ref") {
      if (!v.is_string()) return Fail(at, "must be a string");
      n.ref_text = v.get<std::string>();
      unresolved_.push_back(&n);
    } else if (key == "type") {
      return Types(v, at, n);
    } else if (key == "enum") {
      if (!v.is_array()) return Fail(at, "must be an array");
      n.has_enum = true;
      n.enum_values.assign(v.begin(), v.end());
      std::sort(n.enum_values.begin(), n.enum_values.end(),
                [](const Json& a, const Json& b) { return CompareValues(a, b) < 0; });
    } else if (key == "const") {
      n.const_value = v;
    } else if (key == "multipleOf") {
      if (!v.is_number() || !(v.get<double>() > 0)) return Fail(at, "must be a number above 0");
      n.multiple_of = v;
    } else if (key == "minimum") {
      return Number(v, at, n.minimum);
    } else if (key == "maximum") {
      return Number(v, at, n.maximum);
    } else if (key == "exclusiveMinimum") {
      return Number(v, at, n.exclusive_minimum);
    } else if (key == "exclusiveMaximum") {
      return Number(v, at, n.exclusive_maximum);
    } else if (key == "minLength") {
      return CountOf(v, at, n.min_length);
    } else if (key == "maxLength") {
      return CountOf(v, at, n.max_length);
    } else if (key == "minItems") {
      return CountOf(v, at, n.min_items);
    } else if (key == "maxItems") {
      return CountOf(v, at, n.max_items);
    } else if (key == "minProperties") {
      return CountOf(v, at, n.min_properties);
    } else if (key == "maxProperties") {
      return CountOf(v, at, n.max_properties);
    } else if (key == "pattern") {
      if (!v.is_string()) return Fail(at, "must be a string");
      n.pattern.emplace();
      return Regex(v.get<std::string>(), at, *n.pattern);
    } else if (key == "format") {
      if (!v.is_string()) return Fail(at, "must be a string");
      n.format = FormatNamed(v.get_ref<const std::string&>());
    } else if (key == "uniqueItems") {
      if (!v.is_boolean()) return Fail(at, "must be true or false");
      n.unique_items = v.get<bool>();
    } else if (key == "required") {
      return StringList(v, at, n.required);
    } else if (key == "items") {
      if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i) {
          const SchemaNode* sub = nullptr;
          if (!One(v[i], at + "/" + std::to_string(i), depth, sub)) return false;
          n.items_list.push_back(sub);
        }
        return true;
      }
      return One(v, at, depth, n.items);
    } else if (key == "additionalItems") {
      return One(v, at, depth, n.additional_items);
    } else if (key == "contains") {
      return One(v, at, depth, n.contains);
    } else if (key == "additionalProperties") {
      return One(v, at, depth, n.additional_properties);
    } else if (key == "propertyNames") {
      return One(v, at, depth, n.property_names);
    } else if (key == "not") {
      return One(v, at, depth, n.not_schema);
    } else if (key == "if") {
      return One(v, at, depth, n.if_schema);
    } else if (key == "then") {
      return One(v, at, depth, n.then_schema);
    } else if (key == "else") {
      return One(v, at, depth, n.else_schema);
    } else if (key == "allOf") {
      return List(v, at, depth, n.all_of);
    } else if (key == "anyOf") {
      return List(v, at, depth, n.any_of);
    } else if (key == "oneOf") {
      return List(v, at, depth, n.one_of);
    } else if (key == "properties" || key == "patternProperties" || key == "definitions" ||
               key == "dependencies") {
      return SchemaMap(n, key, v, at, depth);
    } else if (key == "$id" || key == "$schema" || key == "title" || key == "$comment") {
      if (!v.is_string()) return Fail(at, "must be a string");
    }
    // Any other keyword is allowed and ignored, as draft 7 says.
    return true;
  }

  // The node a $ref names: "#" or "#/a/b" (a JSON Pointer, percent-encoded in the URI
  // fragment) within this schema.
  const SchemaNode* Resolve(const SchemaNode& n) {
    const std::string at = n.pointer + "/$ref";
    const std::string& text = n.ref_text;
    if (text.empty() || text[0] != '#') {
      Fail(at,
           "must refer within this schema (\"#\" or \"#/definitions/...\"); remote "
           "references are not supported");
      return nullptr;
    }
    std::string fragment;
    for (size_t i = 1; i < text.size(); ++i) {
      if (text[i] == '%' && i + 2 < text.size() &&
          std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
        fragment += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        fragment += text[i];
      }
    }
    if (!fragment.empty() && fragment[0] != '/') {
      Fail(at,
           "must be \"#\" or a JSON Pointer (\"#/definitions/...\"); named anchors are "
           "not supported");
      return nullptr;
    }
    const Json* target = &doc_;
    std::string pointer;
    for (size_t start = 1; start <= fragment.size() && !fragment.empty();) {
      size_t end = fragment.find('/', start);
      if (end == std::string::npos) end = fragment.size();
      std::string token;
      for (size_t i = start; i < end; ++i) {
        if (fragment[i] == '~' && i + 1 < end &&
            (fragment[i + 1] == '0' || fragment[i + 1] == '1')) {
          token += fragment[i + 1] == '0' ? '~' : '/';
          ++i;
        } else if (fragment[i] == '~') {
          Fail(at, "is not a valid JSON Pointer (~ must be followed by 0 or 1)");
          return nullptr;
        } else {
          token += fragment[i];
        }
      }
      if (target->is_object()) {
        auto it = target->find(token);
        target = it == target->end() ? nullptr : &*it;
      } else if (target->is_array() && !token.empty() &&
                 std::all_of(token.begin(), token.end(), ::isdigit) &&
                 (token == "0" || token[0] != '0') && token.size() < 10 &&
                 std::stoul(token) < target->size()) {
        target = &(*target)[std::stoul(token)];
      } else {
        target = nullptr;
      }
      if (target == nullptr) {
        Fail(at, "refers to nothing in this schema");
        return nullptr;
      }
      pointer += "/" + PointerToken(token);
      start = end + 1;
    }
    return Node(*target, pointer, 0);
  }

  const Json& doc_;
  CompiledTree& tree_;
  std::map<std::string, SchemaNode*> by_pointer_;
  std::map<std::string, std::shared_ptr<const RE2>> patterns_;
  std::vector<SchemaNode*> unresolved_;
  std::optional<Problem> problem_;
};

}  // namespace

std::string PointerToken(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::unique_ptr<CompiledTree> BuildTree(const Json& schema, Problem& problem) {
  auto tree = std::make_unique<CompiledTree>();
  if (auto bad = Builder(schema, *tree).Run()) {
    problem = std::move(*bad);
    return nullptr;
  }
  return tree;
}

}  // namespace webhookd::schema
