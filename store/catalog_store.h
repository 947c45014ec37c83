#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "core/event_type.h"

namespace webhookd {

// The event catalog and the payload filters' rule (the tables in
// migrations/0034_baseline.sql; the rules in store/pg/schema/filter_problem.sql and
// bump_catalog_generation.sql). Thread-safe; nothing here throws.
class CatalogStore {
 public:
  virtual ~CatalogStore() = default;
  // kConflict when the name exists.
  virtual Result<EventType> CreateEventType(const EventType& type) = 0;
  virtual Result<EventType> GetEventType(const std::string& name) = 0;
  virtual Result<EventTypeListing> ListEventTypes(const EventTypePage& page) = 0;
  // kNotFound for an unknown name, kForbidden for one of webhookd's own.
  virtual Result<EventType> UpdateEventType(const std::string& name,
                                            const EventTypeFields& fields) = 0;
  virtual Result<void> DeleteEventType(const std::string& name) = 0;
  // Every type's schema at one generation, for ingest's checks.
  virtual Result<CatalogSnapshotRows> LoadCatalog() = 0;
  // The generation alone: whether a cached catalog is still the current one.
  virtual Result<int64_t> CatalogGeneration() = 0;
  // Tells webhookd.publish() the mode (it has no configuration of its own).
  virtual Result<void> SetEventTypesMode(EventTypesMode mode) = 0;
  // Whether `filter` delivers `payload` (a JSON object's text), exactly as the fan-out
  // decides; kInvalid on `filter` for one that may not be a destination's filter.
  virtual Result<bool> TestFilter(const std::string& filter, const std::string& payload) = 0;
};

}  // namespace webhookd
