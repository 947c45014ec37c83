#pragma once

#include "store/event_store.h"
#include "store/pg/committer.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Ingest and event reads. Un-keyed, untargeted ingest goes through `committer` (group
// commit) when there is one. Thread-safe: each call borrows a connection of the pool.
class PgEventStore final : public EventStore {
 public:
  PgEventStore(PgPool& pool, GroupCommitter* committer) : pool_(pool), committer_(committer) {}

  Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                    const std::optional<IdempotencyKey>& key) override;
  bool InsertEventLater(NewEvent& event, InsertDone& done) override;
  Result<Event> GetEvent(int64_t id, const Scope& scope) override;
  Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page,
                                    const Scope& scope) override;

 private:
  PgPool& pool_;
  GroupCommitter* committer_;
};

}  // namespace webhookd::pg
