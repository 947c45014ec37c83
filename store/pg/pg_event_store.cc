#include "store/pg/pg_event_store.h"

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

// An event's subjects as a text[] parameter, NULL for none.
std::optional<std::string> SubjectsArray(const std::vector<std::string>& subjects) {
  if (subjects.empty()) return std::nullopt;
  ArrayLiteral array;
  for (const std::string& s : subjects) array.Add(std::string_view(s));
  return array.Finish();
}

}  // namespace

bool PgEventStore::InsertEventLater(NewEvent& event, InsertDone& done) {
  if (event.destination_id || !committer_) return false;
  committer_->Submit(std::move(event), std::move(done));
  return true;
}

Result<IngestReceipt> PgEventStore::InsertEvent(const NewEvent& event,
                                                const std::optional<IdempotencyKey>& key) {
  // Keyed and targeted ingests have their own checks and answers: one transaction each.
  if (!key && !event.destination_id && committer_) return committer_->Insert(event);
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<IngestReceipt> {
    IngestReceipt receipt;
    bool key_taken = true;
    {
      pqxx::work tx(c);
      if (!event.verify_key_hash.empty()) {
        // A tenant key never publishes; the caller then looks the key up and answers 403.
        auto live = Exec(tx, sql::kFindApiKey, Params().Add(event.verify_key_hash));
        if (live.empty() || ToApiKey(live[0]).role == Role::kTenant) return KeyNotLive();
      }
      auto ev = Exec(tx, NamedParams(sql::kInsertEvent)
                             .Set("type", event.type)
                             .Set("payload", event.payload)
                             .Set("tenant_id", event.tenant_id)
                             .Set("ordering_key", event.ordering_key)
                             .Set("catalog_generation", event.catalog_generation)
                             .Set("traceparent", event.traceparent)
                             .Set("tracestate", event.tracestate)
                             .Set("subjects", SubjectsArray(event.subjects)));
      if (ev.empty()) return CatalogChanged();
      receipt.event = Event{
          ev[0][0].as<int64_t>(), event.type,         event.payload, ToTimestamp(ev[0][1]), {},
          event.tenant_id,        event.ordering_key, event.subjects};
      if (key) {
        key_taken = !Exec(tx, sql::kTakeIdempotencyKey,
                          Params()
                              .Add(key->key)
                              .Add(key->request_hash)
                              .Add(receipt.event.id)
                              .Add(event.tenant_id))
                         .empty();
      }
      if (key_taken) {
        // Checked after the key, so a replay answers as the original did even if the
        // destination was deleted since. Returning aborts the transaction.
        if (event.destination_id) {
          auto target = Exec(tx, sql::kLiveDestinationExists,
                             Params().Add(*event.destination_id).Add(event.tenant_id));
          if (target.empty()) return Invalid({{"destination_id", "no destination with that id"}});
          if (!target[0][0].as<bool>()) {
            return Invalid(
                {{"destination_id", event.tenant_id ? "is not a destination of the event's tenant"
                                                    : "is a tenant's destination; the event has no "
                                                      "tenant_id"}});
          }
        }
        const pqxx::result rows = event.destination_id ? Exec(tx, sql::kFanOutTargeted,
                                                              Params()
                                                                  .Add(receipt.event.id)
                                                                  .Add(*event.destination_id)
                                                                  .Add(event.ordering_key))
                                                       : Exec(tx, sql::kFanOut,
                                                              Params()
                                                                  .Add(receipt.event.id)
                                                                  .Add(event.type)
                                                                  .Add(event.tenant_id)
                                                                  .Add(event.ordering_key)
                                                                  .Add(event.payload));
        for (const auto& row : rows) {
          receipt.event.deliveries.push_back(NewDelivery(row[0].as<int64_t>(), receipt.event.id,
                                                         row[1].as<int64_t>(), ToTimestamp(row[2]),
                                                         event.tenant_id));
        }
        // One notification per transaction, however many deliveries it made.
        if (!receipt.event.deliveries.empty()) NotifyWakeup(tx);
        try {
          tx.commit();
        } catch (const pqxx::in_doubt_error&) {
          // Only a 202 for what committed, and a 202 for everything that did.
          if (CommittedAfterDoubt(pool_.url(), {receipt.event.id}, receipt.event.created_at))
            return receipt;
          throw;
        }
        return receipt;
      }
    }
    // The key is held by an earlier request that committed: answer as it was answered.
    pqxx::nontransaction tx(c);
    auto held = Exec(tx, sql::kGetIdempotencyKey, Params().Add(key->key).Add(event.tenant_id));
    if (held.empty()) return Fail(ErrorKind::kConflict, "the Idempotency-Key is in use; retry");
    if (held[0][0].c_str() != key->request_hash) {
      return Invalid({{"Idempotency-Key", "was already used with a different request body"}});
    }
    auto ev = Exec(tx, sql::kGetEvent, Params().Add(held[0][1].as<int64_t>()).AddNull());
    if (ev.empty()) return Fail(ErrorKind::kInternal, "idempotency record without its event");
    receipt.event = ToEvent(ev[0]);
    for (const auto& row : Exec(tx, sql::kEventDeliveries, Params().Add(receipt.event.id))) {
      Delivery d = ToDelivery(row);
      d.status = DeliveryStatus::kPending;  // as the original 202 said
      receipt.event.deliveries.push_back(d);
    }
    receipt.replayed = true;
    return receipt;
  });
}

Result<Event> PgEventStore::GetEvent(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Event> {
    pqxx::work tx(c);  // one snapshot for the event and its deliveries
    auto r = Exec(tx, sql::kGetEvent, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no event with that id");
    Event event = ToEvent(r[0]);
    for (const auto& row : Exec(tx, sql::kEventDeliveries, Params().Add(id))) {
      event.deliveries.push_back(ToDelivery(row));
    }
    return event;
  });
}

Result<Listing<Event>> PgEventStore::ListEvents(const EventFilter& filter, const Page& page,
                                                const Scope& scope) {
  // Both statements take the list's filters; the subject's adds the subject.
  NamedParams params(filter.subject ? sql::kListEventsOfSubject : sql::kListEvents);
  params.Set("before_id", page.before_id)
      .Set("type", filter.type)
      .Set("after", filter.after)
      .Set("before", filter.before)
      .Set("limit", page.limit + 1)
      .Set("tenant_id", filter.tenant_id)
      .Set("scope_tenant_id", scope.tenant_id)
      .Set("source_id", filter.source_id);
  if (filter.subject) params.Set("subject", *filter.subject);
  return ListPage<Event>(pool_, params, page, ToEvent);
}

}  // namespace webhookd::pg
