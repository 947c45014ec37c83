#include "server/schema_validate.h"

#include <re2/re2.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "server/schema_compile.h"
#include "server/schema_values.h"

namespace webhookd::schema {
namespace {

using Json = nlohmann::json;

uint8_t TypeBits(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return kNullType;
    case Json::value_t::boolean:
      return kBooleanType;
    case Json::value_t::object:
      return kObjectType;
    case Json::value_t::array:
      return kArrayType;
    case Json::value_t::string:
      return kStringType;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return IsIntegerValue(v) ? (kNumberType | kIntegerType) : kNumberType;
    default:
      return 0;
  }
}

std::string TypeNames(uint8_t bits) {
  // null last: "integer or null" reads as the optional integer it usually is.
  static constexpr std::pair<uint8_t, const char*> kNames[] = {
      {kStringType, "string"},   {kNumberType, "number"}, {kIntegerType, "integer"},
      {kBooleanType, "boolean"}, {kObjectType, "object"}, {kArrayType, "array"},
      {kNullType, "null"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

// The JSON type of `v` as a schema names it: a number without a fraction is an integer.
std::string TypeName(const Json& v) {
  const uint8_t bits = TypeBits(v);
  return TypeNames((bits & kIntegerType) != 0 ? static_cast<uint8_t>(kIntegerType) : bits);
}

// "must be one of" the values, when they are few and short enough to read in a message.
std::string EnumMessage(const std::vector<Json>& values) {
  constexpr size_t kMaxListed = 10;
  constexpr size_t kMaxText = 200;
  std::string listed;
  for (size_t i = 0; i < values.size() && i < kMaxListed && listed.size() <= kMaxText; ++i) {
    if (i > 0) listed += i + 1 == values.size() ? " or " : ", ";
    listed += values[i].dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (values.size() > kMaxListed || listed.size() > kMaxText) {
    return "must be one of the " + std::to_string(values.size()) + " values the schema lists";
  }
  return "must be " + listed;
}

class Validator {
 public:
  Validator(std::string_view prefix, size_t max_errors) : prefix_(prefix), max_(max_errors) {}

  Validation result;

  // Whether `v` is valid against `n`. With `collect`, each violation is recorded (until
  // there are max_errors); without, the first one ends the check.
  bool Check(const SchemaNode& n, const Json& v, bool collect) {
    ++result.visits;
    if (n.boolean) return *n.boolean || Fail(collect, [] { return "is not allowed"; });
    if (n.ref != nullptr) return Check(*n.ref, v, collect);
    bool ok = true;
    // Records a violation; true when checking should stop.
    auto fail = [&](auto message) {
      ok = false;
      Fail(collect, message);
      return !collect || Full();
    };
    if (n.types != 0 && (TypeBits(v) & n.types) == 0) {
      if (fail([&] { return "expected " + TypeNames(n.types) + ", got " + TypeName(v); })) {
        return false;
      }
    }
    if ((n.groups & kValueChecks) != 0 && !CheckValue(n, v, fail)) return false;
    const uint8_t g = n.groups;
    if ((g & kNumberChecks) && v.is_number() && !CheckNumber(n, v, fail)) return false;
    if ((g & kStringChecks) && v.is_string() &&
        !CheckString(n, v.get_ref<const std::string&>(), fail)) {
      return false;
    }
    if ((g & kArrayChecks) && v.is_array() && !CheckArray(n, v, collect, ok, fail)) return false;
    if ((g & kObjectChecks) && v.is_object() && !CheckObject(n, v, collect, ok, fail)) return false;
    if ((g & kCombinators) == 0) return ok;
    return CheckCombinators(n, v, collect, ok, fail);
  }

  bool Full() const { return result.errors.size() >= max_ || too_costly_; }

  // Once a scan would pass kMaxPatternWork, the one error that says so, and nothing else.
  void Finish() {
    if (too_costly_) result.errors = {std::move(*too_costly_)};
  }

 private:
  template <typename F>
  bool CheckValue(const SchemaNode& n, const Json& v, F& fail) {
    if (n.has_enum &&
        !std::binary_search(n.enum_values.begin(), n.enum_values.end(), v,
                            [](const Json& a, const Json& b) { return CompareValues(a, b) < 0; })) {
      if (fail([&] { return EnumMessage(n.enum_values); })) return false;
    }
    if (n.const_value && CompareValues(*n.const_value, v) != 0) {
      if (fail([&] { return "must be " + n.const_value->dump(); })) return false;
    }
    return true;
  }

  template <typename F>
  bool CheckCombinators(const SchemaNode& n, const Json& v, bool collect, bool& ok, F& fail) {
    for (const SchemaNode* s : n.all_of) {
      if (!Check(*s, v, collect)) {
        ok = false;
        if (!collect || Full()) return false;
      }
    }
    if (!n.any_of.empty() &&
        std::none_of(n.any_of.begin(), n.any_of.end(),
                     [&](const SchemaNode* s) { return Check(*s, v, false); })) {
      if (fail([] { return "matches none of the alternatives the schema allows (anyOf)"; })) {
        return false;
      }
    }
    if (!n.one_of.empty()) {
      size_t matched = 0;
      for (const SchemaNode* s : n.one_of) {
        if (Check(*s, v, false) && ++matched > 1) break;
      }
      if (matched != 1) {
        if (fail([matched] {
              return matched == 0
                         ? std::string("matches none of the alternatives the schema allows (oneOf)")
                         : std::string(
                               "matches more than one of the alternatives the schema "
                               "allows, and must match exactly one (oneOf)");
            })) {
          return false;
        }
      }
    }
    if (n.not_schema != nullptr && Check(*n.not_schema, v, false)) {
      if (fail([] { return "matches what the schema forbids (not)"; })) return false;
    }
    if (n.if_schema != nullptr) {
      const SchemaNode* branch = Check(*n.if_schema, v, false) ? n.then_schema : n.else_schema;
      if (branch != nullptr && !Check(*branch, v, collect)) {
        ok = false;
        if (!collect || Full()) return false;
      }
    }
    return ok;
  }

  struct Segment {
    const std::string* key = nullptr;
    size_t index = 0;
  };

  std::string Here() const {
    std::string out(prefix_);
    for (const Segment& s : path_) {
      out += '/';
      out += s.key != nullptr ? PointerToken(*s.key) : std::to_string(s.index);
    }
    return out;
  }

  // Records the violation `message()` at the current value (when collecting); false.
  template <typename M>
  bool Fail(bool collect, const M& message) {
    if (!collect || Full()) return false;
    FieldError e{Here(), std::string(message())};
    if (std::find(result.errors.begin(), result.errors.end(), e) == result.errors.end()) {
      result.errors.push_back(std::move(e));
    }
    return false;
  }

  // The check of a member or item, with the path to it.
  bool Below(const SchemaNode& n, const Json& v, Segment s, bool collect) {
    path_.push_back(s);
    const bool ok = Check(n, v, collect);
    path_.pop_back();
    return ok;
  }

  template <typename F>
  bool CheckNumber(const SchemaNode& n, const Json& v, F& fail) {
    if (n.multiple_of && !IsMultipleOf(v, *n.multiple_of)) {
      if (fail([&] { return "must be a multiple of " + n.multiple_of->dump(); })) return false;
    }
    if (n.minimum && CompareNumbers(v, *n.minimum) < 0) {
      if (fail([&] { return "must be at least " + n.minimum->dump(); })) return false;
    }
    if (n.maximum && CompareNumbers(v, *n.maximum) > 0) {
      if (fail([&] { return "must be at most " + n.maximum->dump(); })) return false;
    }
    if (n.exclusive_minimum && CompareNumbers(v, *n.exclusive_minimum) <= 0) {
      if (fail([&] { return "must be greater than " + n.exclusive_minimum->dump(); })) {
        return false;
      }
    }
    if (n.exclusive_maximum && CompareNumbers(v, *n.exclusive_maximum) >= 0) {
      if (fail([&] { return "must be less than " + n.exclusive_maximum->dump(); })) return false;
    }
    return true;
  }

  template <typename F>
  bool CheckString(const SchemaNode& n, const std::string& s, F& fail) {
    if (n.min_length || n.max_length) {
      const size_t length = CodePoints(s);
      if (n.min_length && length < *n.min_length) {
        if (fail([&] {
              return "must be at least " + std::to_string(*n.min_length) + " characters long";
            })) {
          return false;
        }
      }
      if (n.max_length && length > *n.max_length) {
        if (fail([&] {
              return "must be at most " + std::to_string(*n.max_length) + " characters long";
            })) {
          return false;
        }
      }
    }
    if (n.pattern && !Matches(*n.pattern, s)) {
      if (fail([&] { return "must match the pattern " + n.pattern->source; })) return false;
    }
    if (n.format != Format::kNone && !MatchesFormat(n.format, s)) {
      if (fail([&] {
            return "must be a " + std::string(FormatName(n.format)) + " (" +
                   std::string(FormatStandard(n.format)) + ")";
          })) {
        return false;
      }
    }
    return true;
  }

  template <typename F>
  bool CheckArray(const SchemaNode& n, const Json& v, bool collect, bool& ok, F& fail) {
    if (n.min_items && v.size() < *n.min_items) {
      if (fail([&] { return "must have at least " + std::to_string(*n.min_items) + " items"; })) {
        return false;
      }
    }
    if (n.max_items && v.size() > *n.max_items) {
      if (fail([&] { return "must have at most " + std::to_string(*n.max_items) + " items"; })) {
        return false;
      }
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const SchemaNode* s = n.items;
      if (!n.items_list.empty()) {
        s = i < n.items_list.size() ? n.items_list[i] : n.additional_items;
      }
      if (s != nullptr && !Below(*s, v[i], {nullptr, i}, collect)) {
        ok = false;
        if (!collect || Full()) return false;
      }
    }
    if (n.contains != nullptr && std::none_of(v.begin(), v.end(), [&](const Json& item) {
          return Check(*n.contains, item, false);
        })) {
      if (fail([] { return "has no item of the kind the schema asks for (contains)"; })) {
        return false;
      }
    }
    if (n.unique_items && v.size() > 1) {
      // Sorted by value, equal items are neighbours: n log n comparisons.
      std::vector<size_t> order(v.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return CompareValues(v[a], v[b]) < 0; });
      for (size_t i = 1; i < order.size(); ++i) {
        if (CompareValues(v[order[i - 1]], v[order[i]]) == 0) {
          const size_t first = order[i - 1];
          const size_t second = order[i];
          if (fail([&] {
                return "must not contain equal items (items " + std::to_string(first) + " and " +
                       std::to_string(second) + " are equal)";
              })) {
            return false;
          }
          break;
        }
      }
    }
    return true;
  }

  template <typename F>
  bool CheckObject(const SchemaNode& n, const Json& v, bool collect, bool& ok, F& fail) {
    if (n.min_properties && v.size() < *n.min_properties) {
      if (fail([&] {
            return "must have at least " + std::to_string(*n.min_properties) + " members";
          })) {
        return false;
      }
    }
    if (n.max_properties && v.size() > *n.max_properties) {
      if (fail([&] {
            return "must have at most " + std::to_string(*n.max_properties) + " members";
          })) {
        return false;
      }
    }
    for (const std::string& name : n.required) {
      if (v.contains(name)) continue;
      ok = false;
      if (!collect) return false;
      path_.push_back({&name, 0});
      Fail(collect, [] { return "is required"; });
      path_.pop_back();
      if (Full()) return false;
    }
    const bool per_member = !n.properties.empty() || !n.pattern_properties.empty() ||
                            n.additional_properties != nullptr || n.property_names != nullptr ||
                            !n.dependency_names.empty() || !n.dependency_schemas.empty();
    if (!per_member) return true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& key = it.key();
      const Segment here{&key, 0};
      bool matched = false;
      bool member_ok = true;
      if (auto p = n.properties.find(key); p != n.properties.end()) {
        matched = true;
        member_ok = Below(*p->second, it.value(), here, collect) && member_ok;
      }
      for (const auto& [pattern, s] : n.pattern_properties) {
        if (!member_ok && (!collect || Full())) break;
        if (!Matches(pattern, key)) continue;
        matched = true;
        member_ok = Below(*s, it.value(), here, collect) && member_ok;
      }
      if (!matched && n.additional_properties != nullptr && (member_ok || (collect && !Full()))) {
        member_ok = Below(*n.additional_properties, it.value(), here, collect) && member_ok;
      }
      if (n.property_names != nullptr && !Check(*n.property_names, Json(key), false)) {
        member_ok = false;
        path_.push_back(here);
        Fail(collect, [] { return "is not an allowed member name"; });
        path_.pop_back();
      }
      if (auto d = n.dependency_names.find(key); d != n.dependency_names.end()) {
        for (const std::string& name : d->second) {
          if (v.contains(name)) continue;
          member_ok = false;
          if (!collect) break;
          path_.push_back({&name, 0});
          Fail(collect, [&] { return "is required when " + key + " is present"; });
          path_.pop_back();
        }
      }
      if (auto d = n.dependency_schemas.find(key); d != n.dependency_schemas.end()) {
        if (member_ok || (collect && !Full()))
          member_ok = Check(*d->second, v, collect) && member_ok;
      }
      if (!member_ok) {
        ok = false;
        if (!collect || Full()) return false;
      }
    }
    return true;
  }

  // `text` matches `p`, within the pattern work left; past it, false without a scan, and
  // checking stops.
  bool Matches(const Pattern& p, std::string_view text) {
    if (too_costly_) return false;
    const size_t program = std::max<size_t>(p.program_size, 1);
    const size_t work = (text.size() + 1) * program;
    if (work > kMaxPatternWork - pattern_work_) {
      too_costly_ = FieldError{Here(),
                               "is too long to be checked against its event type's "
                               "patterns: the schema's patterns may scan about " +
                                   std::to_string(kMaxPatternWork / program) +
                                   " bytes with this one (pattern " + p.source + ")"};
      return false;
    }
    pattern_work_ += work;
    return RE2::PartialMatch(text, *p.re);
  }

  std::string_view prefix_;
  size_t max_;
  std::vector<Segment> path_;
  size_t pattern_work_ = 0;
  std::optional<FieldError> too_costly_;
};

}  // namespace

Validation ValidateTree(const SchemaNode& root, const Json& doc, std::string_view prefix,
                        size_t max_errors) {
  Validator v(prefix, max_errors);
  v.Check(root, doc, /*collect=*/true);
  v.Finish();
  return std::move(v.result);
}

}  // namespace webhookd::schema
