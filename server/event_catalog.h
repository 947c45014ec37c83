#pragma once

// The event catalog as ingest checks it: each type's schema compiled once, cached with
// the catalog generation it was read at. The store refuses an event checked against an
// older generation (kStale), and the caller then drops the cache and checks again, so a
// schema changed through another server process is never missed.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/result.h"
#include "core/event.h"
#include "server/json_schema.h"
#include "store/catalog_store.h"

namespace webhookd {

class EventCatalog {
 public:
  // Borrows `store`, which must outlive this.
  EventCatalog(CatalogStore& store, bool strict);

  // Checks `event`'s type and payload: kInvalid with one error per schema violation (or
  // for a type missing from the catalog when strict); otherwise the generation checked
  // at, for NewEvent::catalog_generation. Thread-safe.
  Result<int64_t> Check(const NewEvent& event);
  // Check's answer when the cached catalog gives it, else nullopt (the catalog is not
  // cached, or a refusal must be confirmed against the store): never waits on the store.
  std::optional<Result<int64_t>> CheckIfCached(const NewEvent& event);

  // The store found `generation` stale: the next Check reads the catalog again.
  void Invalidate(int64_t generation);

 private:
  struct Type {
    std::optional<std::string> schema_text;
    std::once_flag once;
    std::shared_ptr<const JsonSchema> schema;  // set by `once`; null: no schema
    // Set by `once` when a schema stored by an earlier version is one this version refuses
    // (its bounds are newer than the schema): why, for the 422 its events get.
    std::optional<std::string> refusal;
  };
  struct Snapshot {
    int64_t generation = 0;
    std::unordered_map<std::string, std::unique_ptr<Type>> types;
  };
  Result<std::shared_ptr<const Snapshot>> Current();
  Result<void> CheckAgainst(const Snapshot& snapshot, const NewEvent& event);

  CatalogStore& store_;
  const bool strict_;
  std::mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_;  // guarded by mu_; null: read it again
};

}  // namespace webhookd
