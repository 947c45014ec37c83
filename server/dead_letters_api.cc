// The dead-letter routes: /v1/admin/dead-letters, replay one, replay in bulk.
#include "base/log.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/dead_letter_codec.h"

namespace webhookd {

using namespace api;

namespace {

// Dead letters one bulk replay request replays at most (in chunks of their own
// transactions); the answer's `more` asks the caller to send it again.
constexpr int64_t kBulkReplayPerRequest = 10000;

// The list's filter, from the query string (or from a bulk replay's body, in the same
// names).
Result<DeadLetterFilter> DeadLetterFilterFrom(const ApiRequest& req) {
  DeadLetterFilter filter;
  WEBHOOKD_ASSIGN_OR_RETURN(filter.destination_id,
                            QueryId(req, "destination_id", kDestinationPrefix));
  if (auto reason = QueryValue(req, "reason"); reason && !reason->empty()) {
    filter.reason = ParseDeadLetterReason(*reason);
    if (!filter.reason) return Invalid({{"reason", "must be exhausted or permanent_failure"}});
  }
  WEBHOOKD_ASSIGN_OR_RETURN(filter.since, QueryTime(req, "since"));
  WEBHOOKD_ASSIGN_OR_RETURN(filter.until, QueryTime(req, "until"));
  WEBHOOKD_ASSIGN_OR_RETURN(filter.tenant_id, QueryTenant(req));
  return filter;
}

}  // namespace

Result<Reply> Api::ListDeadLetters(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Page page, ParsePage(req, kDeadLetterPrefix));
  WEBHOOKD_ASSIGN_OR_RETURN(DeadLetterFilter filter, DeadLetterFilterFrom(req));
  WEBHOOKD_ASSIGN_OR_RETURN(auto listing,
                            stores_.dead_letters.ListDeadLetters(filter, page, req.scope));
  return ListReply(listing, kDeadLetterPrefix, DeadLetterJson);
}

Result<Reply> Api::ReplayDeadLetter(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDeadLetterPrefix, "dead letter"));
  WEBHOOKD_RETURN_IF_ERROR(ParseEmptyBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t delivery, stores_.dead_letters.ReplayDeadLetter(id, req.scope));
  if (metrics_ != nullptr) metrics_->replays.Inc();
  Log(LogLevel::kInfo, "replayed a dead letter",
      {{"dead_letter_id", req.path_args[0]}, {"delivery_id", FormatId(kDeliveryPrefix, delivery)}});
  return JsonReply(202, ReplayedJson(delivery));
}

Result<Reply> Api::DismissDeadLetter(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDeadLetterPrefix, "dead letter"));
  WEBHOOKD_RETURN_IF_ERROR(ParseEmptyBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(DeadLetter dismissed,
                            stores_.dead_letters.DismissDeadLetter(id, req.scope));
  Log(LogLevel::kInfo, "dismissed a dead letter", {{"dead_letter_id", req.path_args[0]}});
  return JsonReply(200, DeadLetterJson(dismissed));
}

Result<Reply> Api::ReplayDeadLetters(const ApiRequest& req) {
  // The filter comes in the body here, with the same names as the list's query.
  ApiRequest as_query(req.scope);
  WEBHOOKD_ASSIGN_OR_RETURN(as_query.query, ParseReplayFilterBody(req.body));
  WEBHOOKD_ASSIGN_OR_RETURN(DeadLetterFilter filter, DeadLetterFilterFrom(as_query));
  // Bounded per request, so one request cannot hold a thread and a connection for a
  // million rows; `more` tells the caller to ask again.
  WEBHOOKD_ASSIGN_OR_RETURN(
      auto done, stores_.dead_letters.ReplayDeadLetters(filter, req.scope, kBulkReplayPerRequest));
  if (metrics_ != nullptr) metrics_->replays.Inc(static_cast<uint64_t>(done.replayed));
  Log(LogLevel::kInfo, "replayed dead letters in bulk",
      {{"count", done.replayed}, {"more", done.more}});
  return JsonReply(202, BulkReplayedJson(done.replayed, done.more));
}

}  // namespace webhookd
