#include "server/schema_compile.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

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

// ECMAScript's white space and line terminators, what its \s matches (RE2's \s is ASCII
// alone), as the inside of a character class.
constexpr std::string_view kEcmaSpace =
    "\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}"
    "\\x{3000}\\x{FEFF}";

// ECMAScript's \uHHHH, which RE2 spells \x{HHHH}, and its \s and \S, which RE2 reads as
// ASCII alone; everything else is left to RE2, which refuses what it cannot run in linear
// time (backreferences, lookaround). Nothing for a \S inside a character class, which no
// RE2 class can say.
std::optional<std::string> ToRe2Syntax(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (next == 'u' && i + 6 <= pattern.size() &&
          std::all_of(pattern.begin() + i + 2, pattern.begin() + i + 6,
                      [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
        out += "\\x{";
        out += pattern.substr(i + 2, 4);
        out += '}';
        i += 5;
        continue;
      }
      if (next == 's' || next == 'S') {
        if (in_class && next == 'S') return std::nullopt;
        out += in_class ? "" : (next == 's' ? "[" : "[^");
        out += kEcmaSpace;
        out += in_class ? "" : "]";
        ++i;
        continue;
      }
      out += pattern.substr(i, 2);
      ++i;
      continue;
    }
    if (pattern[i] == '[' && !in_class) in_class = true;
    if (pattern[i] == ']' && in_class) in_class = false;
    out += pattern[i];
  }
  return out;
}

// Whether RE2's DFA starts for `pattern` within its memory: it refuses to when 20 of its
// states do not fit what is left after the program, and RE2 then runs the NFA on every
// text. PossibleMatchRange is the one public call that says so (false). The pattern is
// probed behind one character of any kind, so that neither a literal prefix nor a match of
// every string makes it answer false for a reason of its own; the character's byte
// classes make the probe a little stricter than the pattern.
bool DfaFits(const std::string& pattern, const RE2::Options& options) {
  const RE2 probe("(?s:.)(?:" + pattern + ")", options);
  std::string min, max;
  return probe.ok() && probe.PossibleMatchRange(&min, &max, 1);
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
    tree_.root = Node(doc_, 0);
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
  // `at` is the JSON value at fault, within doc_: its pointer is found only now, once, so
  // that no node carries its (possibly long) path.
  bool Fail(const Json& at, std::string message) {
    if (!problem_) problem_ = Problem{PointerTo(doc_, &at), std::move(message)};
    return false;
  }

  const SchemaNode* Node(const Json& s, int depth) {
    if (problem_) return nullptr;
    if (auto it = by_source_.find(&s); it != by_source_.end()) return it->second;
    if (depth > kMaxNesting) {
      Fail(s, "nests deeper than " + std::to_string(kMaxNesting) + " levels");
      return nullptr;
    }
    auto owned = std::make_unique<SchemaNode>();
    SchemaNode* n = owned.get();
    tree_.nodes.push_back(std::move(owned));
    by_source_[&s] = n;
    n->source = &s;
    if (s.is_boolean()) {
      n->boolean = s.get<bool>();
      return n;
    }
    if (!s.is_object()) {
      Fail(s, "a schema must be an object or a boolean");
      return nullptr;
    }
    for (const auto& [key, value] : s.items()) {
      if (!Keyword(*n, key, value, depth)) return nullptr;
    }
    n->groups = Groups(*n);
    return n;
  }

  // A keyword whose value is one schema.
  bool One(const Json& v, int depth, const SchemaNode*& out) {
    out = Node(v, depth + 1);
    return out != nullptr;
  }

  bool List(const Json& v, int depth, std::vector<const SchemaNode*>& out) {
    if (!v.is_array() || v.empty()) return Fail(v, "must be a non-empty array of schemas");
    for (const Json& item : v) {
      const SchemaNode* sub = nullptr;
      if (!One(item, depth, sub)) return false;
      out.push_back(sub);
    }
    return true;
  }

  bool Number(const Json& v, std::optional<Json>& out) {
    if (!v.is_number()) return Fail(v, "must be a number");
    out = v;
    return true;
  }

  bool CountOf(const Json& v, std::optional<uint64_t>& out) {
    out = Count(v);
    return out ? true : Fail(v, "must be an integer of 0 or more");
  }

  bool StringList(const Json& v, std::vector<std::string>& out) {
    std::set<std::string_view> names;
    if (!v.is_array()) return Fail(v, "must be an array of distinct strings");
    for (const Json& name : v) {
      if (!name.is_string() || !names.insert(name.get_ref<const std::string&>()).second) {
        return Fail(v, "must be an array of distinct strings");
      }
      out.push_back(name.get<std::string>());
    }
    return true;
  }

  bool Regex(const std::string& source, const Json& at, Pattern& out) {
    out.source = source;
    if (auto it = patterns_.find(source); it != patterns_.end()) {
      out.re = it->second;
      out.program_size =
          static_cast<size_t>(std::max(out.re->ProgramSize(), out.re->ReverseProgramSize()));
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
    const std::optional<std::string> translated = ToRe2Syntax(source);
    if (!translated) {
      return Fail(at,
                  "has \\S inside a character class, which webhookd cannot check as "
                  "ECMAScript reads it (Unicode white space); write it outside the class");
    }
    auto re = std::make_shared<const RE2>(*translated, options);
    if (!re->ok()) {
      if (re->error_code() == RE2::ErrorPatternTooLarge) {
        return Fail(at, "is too large a regular expression");
      }
      return Fail(at, "is not a regular expression webhookd can check in linear time (" +
                          re->error() + "; backreferences and lookaround are not supported)");
    }
    const int program = std::max(re->ProgramSize(), re->ReverseProgramSize());
    if (program > kMaxPatternProgram) {
      return Fail(at, "compiles to " + std::to_string(program) + " instructions, more than the " +
                          std::to_string(kMaxPatternProgram) +
                          " whose linear-time automaton fits the memory a pattern is given "
                          "(a long counted repetition such as [a-z]{0,500} is the usual cause; "
                          "maxLength bounds a length at no cost)");
    }
    if (!DfaFits(*translated, options)) {
      return Fail(at, "is too large for RE2's linear-time automaton in the " +
                          std::to_string(kPatternMemory >> 10) +
                          " KiB a pattern is given (many character classes over a long "
                          "repetition are the usual cause)");
    }
    patterns_.emplace(source, re);
    out.re = std::move(re);
    out.program_size = static_cast<size_t>(program);
    return true;
  }

  // `type`: a name or an array of distinct names.
  bool Types(const Json& v, SchemaNode& n) {
    if (v.is_string()) {
      auto bit = TypeNamed(v.get_ref<const std::string&>());
      if (!bit) return Fail(v, "is not a JSON Schema type");
      n.types = *bit;
      return true;
    }
    if (!v.is_array() || v.empty()) return Fail(v, "must be a type name or an array of them");
    for (const Json& name : v) {
      auto bit = name.is_string() ? TypeNamed(name.get_ref<const std::string&>()) : std::nullopt;
      if (!bit || (n.types & *bit)) return Fail(v, "must be a type name or an array of them");
      n.types |= *bit;
    }
    return true;
  }

  // The keywords whose value maps names to subschemas (`dependencies` also to lists of
  // names).
  bool SchemaMap(SchemaNode& n, const std::string& key, const Json& v, int depth) {
    if (!v.is_object()) return Fail(v, "must be an object");
    for (const auto& [name, sub] : v.items()) {
      if (key == "dependencies" && sub.is_array()) {
        if (!StringList(sub, n.dependency_names[name])) return false;
        continue;
      }
      const SchemaNode* node = nullptr;
      if (!One(sub, depth, node)) return false;
      if (key == "properties") n.properties[name] = node;
      if (key == "dependencies") n.dependency_schemas[name] = node;
      if (key == "patternProperties") {
        Pattern p;
        if (!Regex(name, sub, p)) return false;
        n.pattern_properties.emplace_back(std::move(p), node);
      }
    }
    return true;
  }

  bool Keyword(SchemaNode& n, const std::string& key, const Json& v, int depth) {
    if (key == "$ref") {
      if (!v.is_string()) return Fail(v, "must be a string");
      n.ref_text = &v.get_ref<const std::string&>();
      unresolved_.push_back(&n);
    } else if (key == "type") {
      return Types(v, n);
    } else if (key == "enum") {
      if (!v.is_array()) return Fail(v, "must be an array");
      n.has_enum = true;
      n.enum_values.assign(v.begin(), v.end());
      std::sort(n.enum_values.begin(), n.enum_values.end(),
                [](const Json& a, const Json& b) { return CompareValues(a, b) < 0; });
    } else if (key == "const") {
      n.const_value = v;
    } else if (key == "multipleOf") {
      if (!v.is_number() || !(v.get<double>() > 0)) return Fail(v, "must be a number above 0");
      n.multiple_of = v;
    } else if (key == "minimum") {
      return Number(v, n.minimum);
    } else if (key == "maximum") {
      return Number(v, n.maximum);
    } else if (key == "exclusiveMinimum") {
      return Number(v, n.exclusive_minimum);
    } else if (key == "exclusiveMaximum") {
      return Number(v, n.exclusive_maximum);
    } else if (key == "minLength") {
      return CountOf(v, n.min_length);
    } else if (key == "maxLength") {
      return CountOf(v, n.max_length);
    } else if (key == "minItems") {
      return CountOf(v, n.min_items);
    } else if (key == "maxItems") {
      return CountOf(v, n.max_items);
    } else if (key == "minProperties") {
      return CountOf(v, n.min_properties);
    } else if (key == "maxProperties") {
      return CountOf(v, n.max_properties);
    } else if (key == "pattern") {
      if (!v.is_string()) return Fail(v, "must be a string");
      n.pattern.emplace();
      return Regex(v.get<std::string>(), v, *n.pattern);
    } else if (key == "format") {
      if (!v.is_string()) return Fail(v, "must be a string");
      n.format = FormatNamed(v.get_ref<const std::string&>());
    } else if (key == "uniqueItems") {
      if (!v.is_boolean()) return Fail(v, "must be true or false");
      n.unique_items = v.get<bool>();
    } else if (key == "required") {
      return StringList(v, n.required);
    } else if (key == "items") {
      if (v.is_array()) {
        for (const Json& item : v) {
          const SchemaNode* sub = nullptr;
          if (!One(item, depth, sub)) return false;
          n.items_list.push_back(sub);
        }
        return true;
      }
      return One(v, depth, n.items);
    } else if (key == "additionalItems") {
      return One(v, depth, n.additional_items);
    } else if (key == "contains") {
      return One(v, depth, n.contains);
    } else if (key == "additionalProperties") {
      return One(v, depth, n.additional_properties);
    } else if (key == "propertyNames") {
      return One(v, depth, n.property_names);
    } else if (key == "not") {
      return One(v, depth, n.not_schema);
    } else if (key == "if") {
      return One(v, depth, n.if_schema);
    } else if (key == "then") {
      return One(v, depth, n.then_schema);
    } else if (key == "else") {
      return One(v, depth, n.else_schema);
    } else if (key == "allOf") {
      return List(v, depth, n.all_of);
    } else if (key == "anyOf") {
      return List(v, depth, n.any_of);
    } else if (key == "oneOf") {
      return List(v, depth, n.one_of);
    } else if (key == "properties" || key == "patternProperties" || key == "definitions" ||
               key == "dependencies") {
      return SchemaMap(n, key, v, depth);
    } else if (key == "$id" || key == "$schema" || key == "title" || key == "$comment") {
      if (!v.is_string()) return Fail(v, "must be a string");
    }
    // Any other keyword is allowed and ignored, as draft 7 says.
    return true;
  }

  // The node a $ref names: "#" or "#/a/b" (a JSON Pointer, percent-encoded in the URI
  // fragment) within this schema.
  const SchemaNode* Resolve(const SchemaNode& n) {
    const Json& at = n.source->at("$ref");
    const std::string& text = *n.ref_text;
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
      start = end + 1;
    }
    return Node(*target, 0);
  }

  const Json& doc_;
  CompiledTree& tree_;
  // A schema's JSON value is compiled once, however many $refs name it.
  std::unordered_map<const Json*, SchemaNode*> by_source_;
  std::map<std::string, std::shared_ptr<const RE2>> patterns_;
  std::vector<SchemaNode*> unresolved_;
  std::optional<Problem> problem_;
};

// Finds `target` below `at`, leaving the tokens of its path in `tokens`.
bool FindPath(const Json& at, const Json* target, std::vector<std::string>& tokens) {
  if (&at == target) return true;
  if (at.is_object()) {
    for (const auto& [key, member] : at.items()) {
      tokens.push_back(PointerToken(key));
      if (FindPath(member, target, tokens)) return true;
      tokens.pop_back();
    }
  } else if (at.is_array()) {
    for (size_t i = 0; i < at.size(); ++i) {
      tokens.push_back(std::to_string(i));
      if (FindPath(at[i], target, tokens)) return true;
      tokens.pop_back();
    }
  }
  return false;
}

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

std::string PointerTo(const Json& doc, const Json* target) {
  std::vector<std::string> tokens;
  if (!FindPath(doc, target, tokens)) return "";
  std::string out;
  for (const std::string& t : tokens) out += "/" + t;
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
