#pragma once

#include "store/catalog_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// The event catalog and filter checks. Thread-safe: each call borrows a connection of the pool.
class PgCatalogStore final : public CatalogStore {
 public:
  explicit PgCatalogStore(PgPool& pool) : pool_(pool) {}

  Result<EventType> CreateEventType(const EventType& type) override;
  Result<EventType> GetEventType(const std::string& name) override;
  Result<EventTypeListing> ListEventTypes(const EventTypePage& page) override;
  Result<EventType> UpdateEventType(const std::string& name,
                                    const EventTypeFields& fields) override;
  Result<void> DeleteEventType(const std::string& name) override;
  Result<CatalogSnapshotRows> LoadCatalog() override;
  Result<int64_t> CatalogGeneration() override;
  Result<void> SetEventTypesMode(EventTypesMode mode) override;
  Result<bool> TestFilter(const std::string& filter, const std::string& payload) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
