#pragma once

#include "base/secret_box.h"
#include "store/destination_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Destinations and their signing secrets; credentials are sealed by `box` on the way in
// and opened on the way out. Thread-safe: each call borrows a connection of the pool.
class PgDestinationStore final : public DestinationStore {
 public:
  PgDestinationStore(PgPool& pool, const SecretBox& box) : pool_(pool), box_(box) {}

  Result<Destination> CreateDestination(const Destination& d, int max_per_tenant) override;
  Result<Destination> GetDestination(int64_t id, const Scope& scope) override;
  Result<std::vector<DestinationStatsBucket>> GetDestinationStats(
      int64_t id, const DestinationStatsWindow& window, const Scope& scope) override;
  Result<Listing<Destination>> ListDestinations(const DestinationFilter& filter, const Page& page,
                                                const Scope& scope) override;
  Result<Destination> UpdateDestination(int64_t id, const DestinationFields& fields,
                                        const Scope& scope,
                                        const UpdateCheck& check = nullptr) override;
  Result<void> DeleteDestination(int64_t id, const Scope& scope) override;
  Result<Timestamp> RotateSecret(int64_t id, const std::string& secret, Duration grace,
                                 const Scope& scope) override;

 private:
  // A destination as stored, with its credentials sealed for the database or opened
  // for the caller.
  Destination Sealed(Destination d) const;
  Result<Destination> Opened(Destination d) const;
  PgPool& pool_;
  const SecretBox& box_;
};

}  // namespace webhookd::pg
