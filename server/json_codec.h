#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "core/json_scan.h"

namespace webhookd {

using Json = nlohmann::json;

// Parses a request body: kMalformed for anything that is not JSON (invalid UTF-8
// included), kInvalid for nesting deeper than kMaxJsonDepth.
Result<Json> ParseJsonBody(std::string_view body);

// The members a JSON object of a request may hold: those the route reads, and those of the
// resource's own view that it ignores (`read_only`), so that a body fetched with GET can be
// sent back unchanged. Any other member is a mistake the caller would not otherwise notice
// (a misspelt "filtr" would deliver every event), so it is refused.
struct KnownMembers {
  std::initializer_list<std::string_view> writable;
  std::initializer_list<std::string_view> read_only = {};
};

// One error per member of `names` that `known` does not list: field `prefix` + the name
// ("tls.expires", "event_type"), message "unknown member", with the nearest writable name
// when one is a slip of the keyboard away; at most 20 of them.
void CheckMembers(const std::vector<std::string_view>& names, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors);
void CheckMembers(const Json& object, const KnownMembers& known, std::string_view prefix,
                  std::vector<FieldError>& errors);
void CheckMembers(const std::vector<JsonMember>& members, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors);

// Compact JSON; invalid UTF-8 in stored text becomes U+FFFD rather than an exception.
std::string Dump(const Json& json);

// The members of a body that must be one JSON object, each with its value's raw bytes
// (core/json_scan.h): for bodies whose values are kept as written. kMalformed says where
// the JSON breaks.
Result<std::vector<JsonMember>> ScanJsonBody(std::string_view body);

// The optional body of a route that reads none (replaying or dismissing one dead letter):
// empty or {}.
Result<void> ParseEmptyBody(std::string_view body);

// The optional body of a POST that takes one: an empty body is {}; otherwise a JSON
// object.
Result<Json> OptionalObjectBody(std::string_view body);

// An optional duration field of `body` ("1h", "7d", ...; "0" when `zero_ok`): left as it
// is when absent or null; an error on `name` saying `rule` when malformed or out of range.
void DurationField(const Json& body, const char* name, bool zero_ok, Duration max, const char* rule,
                   Duration& out, std::vector<FieldError>& errors);

// A time of a view, or null.
inline Json TimeOrNull(const std::optional<Timestamp>& t) {
  return t ? Json(FormatRfc3339(*t)) : Json(nullptr);
}

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

}  // namespace webhookd
