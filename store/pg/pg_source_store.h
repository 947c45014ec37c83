#pragma once

#include "base/secret_box.h"
#include "store/pg/pg_pool.h"
#include "store/source_store.h"

namespace webhookd::pg {

// Inbound sources and the events their requests make; secrets are sealed by `box` on the
// way in and opened only for the ingest cache. Thread-safe: each call borrows a
// connection of the pool.
class PgSourceStore final : public SourceStore {
 public:
  PgSourceStore(PgPool& pool, const SecretBox& box) : pool_(pool), box_(box) {}

  Result<Source> CreateSource(const Source& source) override;
  Result<Source> GetSource(int64_t id, const Scope& scope) override;
  Result<Listing<Source>> ListSources(const SourceFilter& filter, const Page& page,
                                      const Scope& scope) override;
  Result<Source> UpdateSource(int64_t id, const SourcePatch& apply, const Scope& scope) override;
  Result<Timestamp> RotateSourceSecret(int64_t id, const std::string& secret, Duration grace,
                                       const Scope& scope) override;
  Result<void> DeleteSource(int64_t id, const Scope& scope) override;
  Result<SourceSnapshot> LoadSources() override;
  Result<int64_t> SourceGeneration() override;
  Result<InboundReceipt> InsertInboundEvent(const InboundEvent& event) override;

 private:
  PgPool& pool_;
  const SecretBox& box_;
};

}  // namespace webhookd::pg
