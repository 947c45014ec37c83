// The routes of subjects' erasure (docs/privacy.md): /v1/subjects/erase and /v1/erasures.
#include "base/log.h"
#include "core/ids.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/erasure_codec.h"

namespace webhookd {

using namespace api;

Result<Reply> Api::EraseSubject(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(ErasureRequest request, ParseErasureRequest(req.body));
  // A tenant's key erases within its tenant, whatever the body says.
  WEBHOOKD_ASSIGN_OR_RETURN(Erasure erasure, stores_.erasures.RequestErasure(
                                                 request.subject, request.tenant_id, req.scope));
  // The subject is personal data: it goes in no log line, only the erasure's id.
  Log(LogLevel::kInfo, "erasure requested", {{"erasure_id", FormatId(kErasurePrefix, erasure.id)}});
  if (options_.erasure_requested) options_.erasure_requested();
  return JsonReply(202, Json{{"id", FormatId(kErasurePrefix, erasure.id)},
                             {"status", ErasureStatusName(erasure.status)}});
}

Result<Reply> Api::GetErasure(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kErasurePrefix, "erasure"));
  WEBHOOKD_ASSIGN_OR_RETURN(Erasure erasure, stores_.erasures.GetErasure(id, req.scope));
  return JsonReply(200, ErasureJson(erasure));
}

}  // namespace webhookd
