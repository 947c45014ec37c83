#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/event.h"
#include "core/page.h"
#include "core/scope.h"

namespace webhookd {

// Events: ingest and reads; reads find nothing outside their Scope. Thread-safe; nothing
// here throws.
class EventStore {
 public:
  virtual ~EventStore() = default;
  // Writes the event, its fan-out and the idempotency record in one transaction and
  // wakes the workers once after commit. An unknown or deleted `destination_id` is
  // kInvalid, and so is one of another tenant than the event's (or of a tenant when the
  // event has none, or the reverse); an idempotency key seen within 24 h with another body is
  // kInvalid, with the same body the original receipt comes back with `replayed`.
  virtual Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                            const std::optional<IdempotencyKey>& key) = 0;
  // As InsertEvent without a key, for a caller that must not wait: true when the store
  // took `event` (moved from) and will call `done` exactly once, from a thread of its own
  // and never while the caller waits on it, so `done` must not block; false, with `event`
  // untouched, when this store or this event (a targeted one, say) needs InsertEvent.
  using InsertDone = std::function<void(Result<IngestReceipt>)>;
  virtual bool InsertEventLater(NewEvent& /*event*/, InsertDone& /*done*/) { return false; }
  virtual Result<Event> GetEvent(int64_t id, const Scope& scope) = 0;  // with its deliveries
  virtual Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page,
                                            const Scope& scope) = 0;
};
}  // namespace webhookd
