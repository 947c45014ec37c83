// The routes of destinations' recoveries (docs/operations.md "An endpoint was down"):
// POST /v1/destinations/{id}/recover and GET /v1/recoveries/{id}.
#include "base/log.h"
#include "core/ids.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/recovery_codec.h"

namespace webhookd {

using namespace api;

namespace {

// A process with no recovery store (a command's Api) knows no recovery.
std::unexpected<Error> NoRecoveries() {
  return Fail(ErrorKind::kNotFound, "no recovery with that id");
}

}  // namespace

Result<Reply> Api::RecoverDestination(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t destination, PathId(req, kDestinationPrefix, "destination"));
  WEBHOOKD_ASSIGN_OR_RETURN(RecoveryRequest request, ParseRecoveryRequest(req.body));
  if (stores_.recoveries == nullptr) return NoRecoveries();
  // A tenant's key finds its own destinations alone: another's is not found.
  WEBHOOKD_ASSIGN_OR_RETURN(
      Recovery recovery,
      stores_.recoveries->RequestRecovery(destination, request.since, request.until, req.scope));
  Log(LogLevel::kInfo, "recovery requested",
      {{"recovery_id", FormatId(kRecoveryPrefix, recovery.id)},
       {"destination_id", req.path_args[0]},
       {"since", FormatRfc3339(recovery.since)},
       {"until", FormatRfc3339(recovery.until)}});
  if (options_.recovery_requested) options_.recovery_requested();
  return JsonReply(202, Json{{"id", FormatId(kRecoveryPrefix, recovery.id)},
                             {"status", RecoveryStatusName(recovery.status)}});
}

Result<Reply> Api::GetRecovery(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kRecoveryPrefix, "recovery"));
  if (stores_.recoveries == nullptr) return NoRecoveries();
  WEBHOOKD_ASSIGN_OR_RETURN(Recovery recovery, stores_.recoveries->GetRecovery(id, req.scope));
  return JsonReply(200, RecoveryJson(recovery));
}

}  // namespace webhookd
