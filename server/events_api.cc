// The event and delivery routes: /v1/events, /v1/deliveries and a delivery's attempts.
#include "base/encoding.h"
#include "base/random.h"
#include "core/signing.h"
#include "core/validation.h"
#include "server/api.h"
#include "server/api_request.h"
#include "server/event_codec.h"
#include "server/ingest_trace.h"

namespace webhookd {

using namespace api;

Result<Reply> Api::CreateEvent(const ApiRequest& req) {
  std::optional<IdempotencyKey> key;
  if (req.idempotency_key) {
    if (!IsValidIdempotencyKey(*req.idempotency_key)) {
      return Invalid({{"Idempotency-Key", "must be 1-255 visible ASCII characters"}});
    }
    key = IdempotencyKey{*req.idempotency_key, HexEncode(Sha256(req.body))};
  }
  const Timestamp received = SystemClock().Now();
  WEBHOOKD_ASSIGN_OR_RETURN(NewEvent event, ParseNewEvent(req.body));
  if (req.unverified_key_hash) event.verify_key_hash = *req.unverified_key_hash;
  const SpanStart trace =
      StartSpan(req.traceparent, req.tracestate, options_.sampler, SecureRandomBytes(24));
  event.traceparent = trace.traceparent();
  if (!trace.tracestate.empty()) event.tracestate = trace.tracestate;
  // Checked against the catalog as cached; the store refuses the event (kStale) if the
  // catalog has changed since, and it is checked again against the new one.
  Result<IngestReceipt> inserted;
  for (int tries = 1;; ++tries) {
    WEBHOOKD_ASSIGN_OR_RETURN(event.catalog_generation, catalog_.Check(event));
    inserted = stores_.events.InsertEvent(event, key);
    if (inserted || inserted.error().kind != ErrorKind::kStale || tries == 3) break;
    catalog_.Invalidate(event.catalog_generation);
  }
  WEBHOOKD_ASSIGN_OR_RETURN(IngestReceipt receipt, std::move(inserted));
  return Accepted(receipt, trace, received);
}

bool Api::CreateEventLater(ApiRequest& req, Answer answer) {
  if (req.idempotency_key) return false;
  const Timestamp received = SystemClock().Now();
  // A refusal is CreateEvent's to answer: with a key not looked up, only after a lookup
  // (HttpServer::Call), so a revoked key hears 401, not what was wrong with its body.
  Result<NewEvent> parsed = ParseNewEvent(req.body);
  if (!parsed || parsed->destination_id) return false;
  NewEvent& event = *parsed;
  std::optional<Result<int64_t>> generation = catalog_.CheckIfCached(event);
  if (!generation || !*generation) return false;
  event.catalog_generation = **generation;
  if (req.unverified_key_hash) event.verify_key_hash = *req.unverified_key_hash;
  auto trace = std::make_shared<const SpanStart>(
      StartSpan(req.traceparent, req.tracestate, options_.sampler, SecureRandomBytes(24)));
  event.traceparent = trace->traceparent();
  if (!trace->tracestate.empty()) event.tracestate = trace->tracestate;
  const int64_t checked_at = event.catalog_generation;
  EventStore::InsertDone done = [this, answer = std::move(answer), trace, received,
                                 checked_at](Result<IngestReceipt> inserted) {
    if (!inserted && inserted.error().kind == ErrorKind::kStale) {
      catalog_.Invalidate(checked_at);
      return answer(std::nullopt);
    }
    if (!inserted) return answer(Propagate(inserted));
    answer(Accepted(*inserted, *trace, received));
  };
  return stores_.events.InsertEventLater(event, done);
}

Reply Api::Accepted(const IngestReceipt& receipt, const SpanStart& trace, Timestamp received) {
  Reply reply = JsonReply(202, ReceiptJson(receipt.event));
  if (receipt.replayed) {
    reply.headers.emplace_back("Idempotent-Replayed", "true");
  } else {
    if (metrics_ != nullptr) {
      metrics_->events_ingested.Inc();
      metrics_->deliveries_created.Inc(receipt.event.deliveries.size());
    }
    if (options_.spans != nullptr && trace.sampled) {
      options_.spans->Emit(IngestSpan(
          trace, received, SystemClock().Now(),
          {FormatId(kEventPrefix, receipt.event.id), receipt.event.tenant_id, receipt.event.type}));
    }
  }
  return reply;
}

Result<Reply> Api::GetEvent(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kEventPrefix, "event"));
  WEBHOOKD_ASSIGN_OR_RETURN(Event event, stores_.events.GetEvent(id, req.scope));
  return Reply{200, EventText(event, /*with_deliveries=*/true), "application/json", {}};
}

Result<Reply> Api::ListEvents(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Page page, ParsePage(req, kEventPrefix));
  EventFilter filter;
  if (auto type = QueryValue(req, "type"); type && !type->empty()) {
    if (!IsValidEventType(*type)) return Invalid({{"type", "is not a valid event type"}});
    filter.type = *type;
  }
  WEBHOOKD_ASSIGN_OR_RETURN(filter.after, QueryTime(req, "after"));
  WEBHOOKD_ASSIGN_OR_RETURN(filter.before, QueryTime(req, "before"));
  WEBHOOKD_ASSIGN_OR_RETURN(filter.tenant_id, QueryTenant(req));
  if (auto subject = QueryValue(req, "subject"); subject && !subject->empty()) {
    if (!IsValidSubject(*subject)) {
      return Invalid({{"subject", "must be 1-256 bytes of UTF-8 without control characters"}});
    }
    filter.subject = *subject;
  }
  WEBHOOKD_ASSIGN_OR_RETURN(filter.source_id, QueryId(req, "source_id", kSourcePrefix));
  WEBHOOKD_ASSIGN_OR_RETURN(auto listing, stores_.events.ListEvents(filter, page, req.scope));
  return Reply{200, EventListText(listing), "application/json", {}};
}

Result<Reply> Api::GetDelivery(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDeliveryPrefix, "delivery"));
  WEBHOOKD_ASSIGN_OR_RETURN(Delivery d, stores_.deliveries.GetDelivery(id, req.scope));
  return JsonReply(200, DeliveryJson(d));
}

Result<Reply> Api::ListDeliveries(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(Page page, ParsePage(req, kDeliveryPrefix));
  DeliveryFilter filter;
  WEBHOOKD_ASSIGN_OR_RETURN(filter.destination_id,
                            QueryId(req, "destination_id", kDestinationPrefix));
  if (auto status = QueryValue(req, "status"); status && !status->empty()) {
    filter.status = ParseDeliveryStatus(*status);
    if (!filter.status) {
      return Invalid(
          {{"status", "must be pending, in_flight, succeeded, dead_lettered or cancelled"}});
    }
  }
  WEBHOOKD_ASSIGN_OR_RETURN(filter.tenant_id, QueryTenant(req));
  WEBHOOKD_ASSIGN_OR_RETURN(auto listing,
                            stores_.deliveries.ListDeliveries(filter, page, req.scope));
  return ListReply(listing, kDeliveryPrefix, DeliveryJson);
}

Result<Reply> Api::ListAttempts(const ApiRequest& req) {
  WEBHOOKD_ASSIGN_OR_RETURN(int64_t id, PathId(req, kDeliveryPrefix, "delivery"));
  WEBHOOKD_ASSIGN_OR_RETURN(AttemptPage page, ParseAttemptPage(req));
  WEBHOOKD_ASSIGN_OR_RETURN(auto attempts, stores_.deliveries.ListAttempts(id, page, req.scope));
  return JsonReply(200, AttemptsJson(attempts));
}

}  // namespace webhookd
