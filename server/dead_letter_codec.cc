#include "server/dead_letter_codec.h"

#include "core/ids.h"

namespace webhookd {

Result<std::multimap<std::string, std::string>> ParseReplayFilterBody(std::string_view body) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, OptionalObjectBody(body));
  std::multimap<std::string, std::string> query;
  std::vector<FieldError> errors;
  CheckMembers(json, {{"destination_id", "since", "until", "reason", "tenant_id", "all"}}, "",
               errors);
  bool filtered = false;
  for (std::string_view name : {"destination_id", "since", "until", "reason", "tenant_id"}) {
    auto it = json.find(name);
    if (it == json.end() || it->is_null()) continue;
    filtered = true;
    if (!it->is_string()) {
      errors.push_back({std::string(name), "must be a string"});
    } else {
      query.emplace(name, it->get<std::string>());
    }
  }
  bool all = false;
  if (auto it = json.find("all"); it != json.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      errors.push_back({"all", "must be true or false"});
    } else {
      all = it->get<bool>();
    }
  }
  // An empty body replaying every dead letter there is was too easy to send by mistake.
  if (errors.empty() && !filtered && !all) {
    errors.push_back({"all",
                      "must be true to replay every dead letter; or give destination_id, since, "
                      "until, reason or tenant_id"});
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return query;
}

Json DeadLetterJson(const DeadLetter& d) {
  return {{"id", FormatId(kDeadLetterPrefix, d.id)},
          {"delivery_id", FormatId(kDeliveryPrefix, d.delivery_id)},
          {"event_id", FormatId(kEventPrefix, d.event_id)},
          {"destination_id", FormatId(kDestinationPrefix, d.destination_id)},
          {"reason", DeadLetterReasonName(d.reason)},
          {"attempt_count", d.attempt_count},
          {"last_status_code", OrNull(d.last_status_code)},
          {"last_error", OrNull(d.last_error)},
          {"dead_lettered_at", FormatRfc3339(d.dead_lettered_at)},
          {"replayed_at", TimeOrNull(d.replayed_at)},
          {"dismissed_at", TimeOrNull(d.dismissed_at)},
          {"tenant_id", OrNull(d.tenant_id)}};
}

Json ReplayedJson(int64_t delivery_id) {
  return Json{{"delivery_id", FormatId(kDeliveryPrefix, delivery_id)}};
}

Json BulkReplayedJson(int64_t count, bool more) {
  return Json{{"replayed", count}, {"more", more}};
}

}  // namespace webhookd
