#include "server/recovery_codec.h"

#include <string>
#include <vector>

#include "core/ids.h"

namespace webhookd {
namespace {

constexpr const char* kTimeRule = "must be an RFC 3339 time such as 2026-01-02T03:04:05Z";

// `name` of `json` as a time: nullopt when absent or null (an error when `required`), or an
// error when it is not an RFC 3339 string.
std::optional<Timestamp> TimeMember(const Json& json, const char* name, bool required,
                                    std::vector<FieldError>& errors) {
  const auto it = json.find(name);
  if (it == json.end() || it->is_null()) {
    if (required) errors.push_back({name, "is required"});
    return std::nullopt;
  }
  std::optional<Timestamp> t;
  if (it->is_string()) t = ParseRfc3339(it->get_ref<const std::string&>());
  if (!t) errors.push_back({name, kTimeRule});
  return t;
}

}  // namespace

Result<RecoveryRequest> ParseRecoveryRequest(std::string_view body) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, ParseJsonBody(body));
  if (!json.is_object()) return Invalid({{"body", "must be a JSON object"}});
  std::vector<FieldError> errors;
  CheckMembers(json, {{"since", "until"}}, "", errors);
  const auto since = TimeMember(json, "since", true, errors);
  const auto until = TimeMember(json, "until", false, errors);
  if (since && until && *since >= *until) errors.push_back({"until", "must be after since"});
  if (!errors.empty()) return Invalid(std::move(errors));
  return RecoveryRequest{*since, until};
}

Json RecoveryJson(const Recovery& r) {
  return {{"id", FormatId(kRecoveryPrefix, r.id)},
          {"destination_id", FormatId(kDestinationPrefix, r.destination_id)},
          {"status", RecoveryStatusName(r.status)},
          {"replayed", r.replayed},
          {"since", FormatRfc3339(r.since)},
          {"until", FormatRfc3339(r.until)},
          {"created_at", FormatRfc3339(r.created_at)},
          {"finished_at", TimeOrNull(r.finished_at)}};
}

}  // namespace webhookd
