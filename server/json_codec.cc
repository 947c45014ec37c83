#include "server/json_codec.h"

#include <algorithm>

#include "base/config.h"
#include "base/duration.h"
#include "core/json_scan.h"
#include "core/validation.h"

namespace webhookd {
namespace {

// Edits (insert, delete, replace, swap two neighbours) between `a` and `b`.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The writable name `name` most likely stands for: a typo away, or its start ("tenant"
// for "tenant_id"); empty when none is close.
std::string_view NearestName(std::string_view name, const KnownMembers& known) {
  // Names are short; a long one is no slip of the keyboard, and not worth the table.
  if (name.size() > 64) return {};
  const size_t farthest = name.size() < 4 ? 1 : 2;
  std::string_view best;
  size_t best_distance = farthest + 1;
  for (std::string_view candidate : known.writable) {
    size_t distance = EditDistance(name, candidate);
    if (name.size() >= 3 && candidate.starts_with(name)) distance = std::min<size_t>(distance, 1);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

Result<Json> OptionalObjectBody(std::string_view body) {
  if (body.empty()) return Json::object();
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, ParseJsonBody(body));
  if (!json.is_object()) return Invalid({{"body", "must be a JSON object"}});
  return json;
}

void DurationField(const Json& body, const char* name, bool zero_ok, Duration max, const char* rule,
                   Duration& out, std::vector<FieldError>& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return;
  Result<Duration> parsed = std::unexpected(Error{});
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    parsed = zero_ok && text == "0" ? Result<Duration>(Duration::zero()) : ParseDuration(text);
  }
  if (!parsed || *parsed > max || (!zero_ok && *parsed <= Duration::zero())) {
    errors.push_back({name, rule});
    return;
  }
  out = *parsed;
}

void CheckMembers(const std::vector<std::string_view>& names, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors) {
  const auto listed = [](std::initializer_list<std::string_view> list, std::string_view name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  // A body of a thousand made-up names hears of the first few: enough to fix it.
  constexpr size_t kMaxReported = 20;
  std::vector<std::string_view> reported;
  for (std::string_view name : names) {
    if (listed(known.writable, name) || listed(known.read_only, name)) continue;
    if (std::find(reported.begin(), reported.end(), name) != reported.end()) continue;
    if (reported.size() == kMaxReported) break;
    reported.push_back(name);
    std::string message = "unknown member";
    if (std::string_view nearest = NearestName(name, known); !nearest.empty()) {
      message += "; did you mean ";
      message += nearest;
      message += '?';
    }
    errors.push_back({std::string(prefix) + std::string(name), std::move(message)});
  }
}

void CheckMembers(const Json& object, const KnownMembers& known, std::string_view prefix,
                  std::vector<FieldError>& errors) {
  if (!object.is_object()) return;
  std::vector<std::string_view> names;
  for (auto it = object.begin(); it != object.end(); ++it) names.push_back(it.key());
  CheckMembers(names, known, prefix, errors);
}

void CheckMembers(const std::vector<JsonMember>& members, const KnownMembers& known,
                  std::string_view prefix, std::vector<FieldError>& errors) {
  std::vector<std::string_view> names;
  names.reserve(members.size());
  for (const JsonMember& m : members) names.push_back(m.key);
  CheckMembers(names, known, prefix, errors);
}

Result<void> ParseEmptyBody(std::string_view body) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  std::vector<FieldError> errors;
  CheckMembers(json, {{}}, "", errors);
  if (!errors.empty()) return Invalid(std::move(errors));
  return {};
}

Result<Json> ParseJsonBody(std::string_view body) {
  if (JsonDepth(body, kMaxJsonDepth) > kMaxJsonDepth) {
    // accept() does not recurse: a deep body that is not JSON at all is still malformed.
    if (!Json::accept(body)) return Fail(ErrorKind::kMalformed, "the body is not valid JSON");
    return Invalid({{"body", "JSON nested deeper than 64 levels"}});
  }
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Fail(ErrorKind::kMalformed, "the body is not valid JSON");
  return json;
}

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<std::vector<JsonMember>> ScanJsonBody(std::string_view body) {
  auto members = ScanJsonObject(body, kMaxJsonDepth);
  if (!members && members.error().kind == ErrorKind::kMalformed) {
    return Fail(ErrorKind::kMalformed,
                "the body is not valid JSON (" + members.error().message + ")");
  }
  return members;
}

}  // namespace webhookd
