#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/model.h"

namespace webhookd {

// Events: ingest and reads. Thread-safe; nothing here throws.
class EventStore {
 public:
  virtual ~EventStore() = default;
  // Writes the event, its fan-out and the idempotency record in one transaction and
  // wakes the workers once after commit. An unknown or deleted `destination_id` is
  // kInvalid; an idempotency key seen within 24 h with another body is kInvalid, with the
  // same body the original receipt comes back with `replayed`.
  virtual Result<IngestReceipt> InsertEvent(const NewEvent& event,
                                            const std::optional<IdempotencyKey>& key) = 0;
  virtual Result<Event> GetEvent(int64_t id) = 0;  // with its deliveries
  virtual Result<Listing<Event>> ListEvents(const EventFilter& filter, const Page& page) = 0;
};
}  // namespace webhookd
