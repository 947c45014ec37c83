#include "server/erasure_codec.h"

#include "core/ids.h"
#include "core/validation.h"

namespace webhookd {

Result<ErasureRequest> ParseErasureRequest(std::string_view body) {
  WEBHOOKD_ASSIGN_OR_RETURN(Json json, ParseJsonBody(body));
  if (!json.is_object()) return Invalid({{"body", "must be a JSON object"}});
  std::vector<FieldError> errors;
  CheckMembers(json, {{"subject", "tenant_id"}}, "", errors);
  ErasureRequest request;
  const auto subject = json.find("subject");
  if (subject == json.end() || subject->is_null()) {
    errors.push_back({"subject", "is required"});
  } else if (!subject->is_string() || !IsValidSubject(subject->get_ref<const std::string&>())) {
    errors.push_back({"subject", "must be 1-256 bytes of UTF-8 without control characters"});
  } else {
    request.subject = subject->get<std::string>();
  }
  if (const auto tenant = json.find("tenant_id"); tenant != json.end() && !tenant->is_null()) {
    if (!tenant->is_string() || !IsValidTenantId(tenant->get_ref<const std::string&>())) {
      errors.push_back({"tenant_id", kTenantIdRule});
    } else {
      request.tenant_id = tenant->get<std::string>();
    }
  }
  if (!errors.empty()) return Invalid(std::move(errors));
  return request;
}

Json ErasureJson(const Erasure& e) {
  return {{"id", FormatId(kErasurePrefix, e.id)},
          {"status", ErasureStatusName(e.status)},
          {"events", e.events},
          {"cancelled_deliveries", e.cancelled_deliveries},
          {"created_at", FormatRfc3339(e.created_at)},
          {"finished_at", TimeOrNull(e.finished_at)},
          {"tenant_id", OrNull(e.tenant_id)}};
}

}  // namespace webhookd
