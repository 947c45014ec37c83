#include "server/json_schema.h"

// valijson reports a bad schema or pattern by throwing, and by abort() without this.
#define VALIJSON_USE_EXCEPTIONS 1
#include <exception>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace webhookd {
namespace {

using Json = nlohmann::json;

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

// Parses `schema` alone; the reason it cannot be, if any.
std::optional<std::string> ParseError(const Json& schema) {
  try {
    valijson::Schema parsed;
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(schema);
    parser.populateSchema(adapter, parsed);
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

// Where draft 7 puts subschemas: in maps of them, alone, or in lists ("items" is either).
const std::set<std::string> kSchemaMaps = {"properties", "patternProperties", "definitions",
                                           "dependencies"};
const std::set<std::string> kSchemaOne = {"additionalProperties",
                                          "additionalItems",
                                          "contains",
                                          "propertyNames",
                                          "not",
                                          "if",
                                          "then",
                                          "else",
                                          "items"};
const std::set<std::string> kSchemaLists = {"allOf", "anyOf", "oneOf", "items"};

// Calls `f` on `schema` and on every subschema below it.
template <typename J, typename F>
void ForEachSubschema(J& schema, const F& f) {
  if (!schema.is_object()) return;
  f(schema);
  for (auto& [key, value] : schema.items()) {
    if (kSchemaMaps.contains(key) && value.is_object()) {
      for (auto& [name, sub] : value.items()) ForEachSubschema(sub, f);
    } else if (kSchemaLists.contains(key) && value.is_array()) {
      for (auto& sub : value) ForEachSubschema(sub, f);
    } else if (kSchemaOne.contains(key)) {
      ForEachSubschema(value, f);
    }
  }
}

// valijson checks the formats date, time and date-time with a std::regex it builds on
// every check (hundreds of microseconds each); a pattern is built once per thread. So
// those formats are handed to it as the patterns they stand for, the days of each month
// included (February up to 29, as valijson has it). Other formats are not checked, as
// draft 7 allows.
void FormatsAsPatterns(Json& schema) {
  static const std::string kDate =
      "[0-9]+-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|"
      "02-(0[1-9]|[12][0-9]))";
  static const std::string kTime =
      "([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):"
      "[0-5][0-9])";
  ForEachSubschema(schema, [](Json& s) {
    auto format = s.find("format");
    if (format == s.end() || !format->is_string()) return;
    const std::string name = format->get<std::string>();
    std::string pattern;
    if (name == "date") pattern = "^" + kDate + "$";
    if (name == "time") pattern = "^" + kTime + "$";
    if (name == "date-time") pattern = "^" + kDate + "[Tt]" + kTime + "$";
    if (pattern.empty()) return;
    s.erase("format");
    if (!s.contains("pattern")) {
      s["pattern"] = pattern;
    } else {
      if (!s.contains("allOf") || !s["allOf"].is_array()) s["allOf"] = Json::array();
      s["allOf"].push_back({{"pattern", pattern}});
    }
  });
}

// Why `value` cannot be the value of draft-7 keyword `key`, for the keywords whose value
// is a plain type; nullopt when it can (or when `key` is not one of them).
std::optional<std::string> KeywordTypeProblem(const std::string& key, const Json& value) {
  static const std::set<std::string> kNumbers = {"multipleOf", "maximum", "exclusiveMaximum",
                                                 "minimum", "exclusiveMinimum"};
  static const std::set<std::string> kCounts = {"maxLength", "minLength",     "maxItems",
                                                "minItems",  "maxProperties", "minProperties"};
  static const std::set<std::string> kStrings = {"pattern", "format", "$ref",    "$id",
                                                 "$schema", "title",  "$comment"};
  if (kNumbers.contains(key) && !value.is_number()) return "must be a number";
  if (key == "multipleOf" && value.is_number() && value.get<double>() <= 0) {
    return "must be a number above 0";
  }
  if (kCounts.contains(key) &&
      !(value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0))) {
    return "must be an integer of 0 or more";
  }
  if (kStrings.contains(key) && !value.is_string()) return "must be a string";
  if (key == "uniqueItems" && !value.is_boolean()) return "must be true or false";
  if (key == "enum" && !value.is_array()) return "must be an array";
  if (key == "required") {
    std::set<std::string> names;
    if (!value.is_array()) return "must be an array of distinct strings";
    for (const Json& name : value) {
      if (!name.is_string() || !names.insert(name.get<std::string>()).second) {
        return "must be an array of distinct strings";
      }
    }
  }
  if (key == "type" && !value.is_string() && !value.is_array()) {
    return "must be a type name or an array of them";
  }
  return std::nullopt;
}

// The keyword that makes a schema invalid, as (pointer, reason): subschemas are searched
// first, then each keyword of this one is parsed on its own (valijson's messages rarely
// say where). Regular expressions (pattern, patternProperties) are compiled here, and
// the value types the draft-7 meta-schema gives the keywords valijson reads leniently
// (it takes "minimum": "0") are held; `checks_only` does those two alone.
std::optional<std::pair<std::string, std::string>> Locate(const Json& schema, const std::string& at,
                                                          bool checks_only) {
  if (!schema.is_object()) {
    if (schema.is_boolean()) return std::nullopt;
    return std::pair(at, "a schema must be an object or a boolean");
  }
  for (const auto& [key, value] : schema.items()) {
    const std::string here = at + "/" + PointerToken(key);
    if (kSchemaMaps.contains(key) && value.is_object()) {
      for (const auto& [name, sub] : value.items()) {
        if (key == "patternProperties") {
          try {
            std::regex re(name, std::regex::ECMAScript);
          } catch (const std::regex_error&) {
            return std::pair(here + "/" + PointerToken(name), "is not a valid regular expression");
          }
        }
        if (key == "dependencies" && sub.is_array()) continue;
        if (auto bad = Locate(sub, here + "/" + PointerToken(name), checks_only)) return bad;
      }
    } else if (kSchemaLists.contains(key) && value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        if (auto bad = Locate(value[i], here + "/" + std::to_string(i), checks_only)) return bad;
      }
    } else if (kSchemaOne.contains(key) && (value.is_object() || value.is_boolean())) {
      if (auto bad = Locate(value, here, checks_only)) return bad;
    }
    if (auto why = KeywordTypeProblem(key, value)) return std::pair(here, *why);
    if (key == "pattern" && value.is_string()) {
      try {
        std::regex re(value.get<std::string>(), std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        return std::pair(here, "is not a valid regular expression");
      }
    }
  }
  if (checks_only) return std::nullopt;
  for (const auto& [key, value] : schema.items()) {
    if (key == "$ref" || key == "definitions") continue;  // a local $ref needs its document
    if (auto reason = ParseError(Json{{key, value}})) {
      return std::pair(at + "/" + PointerToken(key), *reason);
    }
  }
  return std::nullopt;
}

// valijson's nlohmann adapter reads an unsigned integer as an int64_t, so one of 2^63 or
// more would be checked as a negative number. Such integers are checked as floating
// point instead (a copy is made only when the document has one).
bool HasHugeUnsigned(const Json& j) {
  if (j.is_number_unsigned()) {
    return j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  if (j.is_structured()) {
    for (const Json& v : j) {
      if (HasHugeUnsigned(v)) return true;
    }
  }
  return false;
}

void HugeUnsignedToFloat(Json& j) {
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      j = static_cast<double>(j.get<uint64_t>());
    }
  } else if (j.is_structured()) {
    for (Json& v : j) HugeUnsignedToFloat(v);
  }
}

// valijson's context ("<root>", "[amount]", "[0]") as a JSON Pointer.
std::string ContextPointer(const std::vector<std::string>& context) {
  std::string out;
  for (size_t i = 1; i < context.size(); ++i) {
    std::string_view token = context[i];
    if (token.size() >= 2 && token.front() == '[' && token.back() == ']') {
      token = token.substr(1, token.size() - 2);
    }
    out += "/" + PointerToken(token);
  }
  return out;
}

}  // namespace

JsonSchema::JsonSchema(std::unique_ptr<valijson::Schema> schema) : schema_(std::move(schema)) {}
JsonSchema::~JsonSchema() = default;

Result<std::shared_ptr<const JsonSchema>> JsonSchema::Compile(const Json& schema,
                                                              std::string_view field) {
  if (!schema.is_object()) return Invalid({{std::string(field), "must be a JSON object"}});
  auto parsed = std::make_unique<valijson::Schema>();
  Json effective = schema;
  FormatsAsPatterns(effective);
  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(effective);
    parser.populateSchema(adapter, *parsed);
  } catch (const std::exception& e) {
    // Where it went wrong, if a keyword alone shows it; else valijson's word for it.
    if (auto bad = Locate(schema, std::string(field), /*checks_only=*/false)) {
      return Invalid({{bad->first, bad->second}});
    }
    return Invalid({{std::string(field), e.what()}});
  }
  // valijson compiles patterns only when it first meets them in a document, and reads a
  // definition only where a $ref uses it.
  if (auto bad = Locate(schema, std::string(field), /*checks_only=*/true)) {
    return Invalid({{bad->first, bad->second}});
  }
  if (auto defs = schema.find("definitions"); defs != schema.end() && defs->is_object()) {
    for (const auto& [name, sub] : defs->items()) {
      const std::string at = std::string(field) + "/definitions/" + PointerToken(name);
      if (auto bad = Locate(sub, at, /*checks_only=*/false)) {
        return Invalid({{bad->first, bad->second}});
      }
      if (auto reason = sub.contains("$ref") ? std::nullopt : ParseError(sub)) {
        return Invalid({{at, *reason}});
      }
    }
  }
  return std::shared_ptr<const JsonSchema>(new JsonSchema(std::move(parsed)));
}

std::vector<FieldError> JsonSchema::Validate(const Json& doc, std::string_view prefix) const {
  // A Validator caches the regular expressions it compiles and is not thread-safe: one
  // per thread, shared by every schema (the cache is keyed by pattern).
  thread_local valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  std::optional<Json> copy;
  if (HasHugeUnsigned(doc)) {
    copy = doc;
    HugeUnsignedToFloat(*copy);
  }
  valijson::adapters::NlohmannJsonAdapter adapter(copy ? *copy : doc);
  std::vector<FieldError> errors;
  try {
    if (validator.validate(*schema_, adapter, &results)) return errors;
  } catch (const std::exception& e) {
    errors.push_back({std::string(prefix), std::string("could not be checked: ") + e.what()});
    return errors;
  }
  // A few constraints (propertyNames) fail without saying why.
  if (results.numErrors() == 0) {
    errors.push_back({std::string(prefix), "does not match its event type's schema"});
    return errors;
  }
  std::set<std::pair<std::string, std::string>> seen;
  valijson::ValidationResults::Error error;
  while (results.popError(error) && errors.size() < kMaxViolations) {
    const std::string& text = error.description;
    // Summaries of an inner violation that is reported on its own.
    if (text.starts_with("Failed to validate against schema associated with") ||
        text.starts_with("Failed to validate item #") ||
        text.starts_with("Failed to validate against child schema") ||
        text.starts_with("Failed to validate against additional properties schema")) {
      continue;
    }
    std::string field = std::string(prefix) + ContextPointer(error.context);
    std::string message = text;
    constexpr std::string_view kMissing = "Missing required property '";
    if (text.starts_with(kMissing) && text.size() > kMissing.size() + 2) {
      // The missing member's own pointer: where the producer must put it.
      field += "/" + PointerToken(text.substr(kMissing.size(), text.size() - kMissing.size() - 2));
      message = "is required";
    }
    if (seen.emplace(field, message).second) errors.push_back({field, message});
  }
  return errors;
}

}  // namespace webhookd
