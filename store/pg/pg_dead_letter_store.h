#pragma once

#include "store/dead_letter_store.h"
#include "store/pg/pg_pool.h"

namespace webhookd::pg {

// Dead letters: listing, replay, dismissal. Thread-safe: each call borrows a connection of the
// pool.
class PgDeadLetterStore final : public DeadLetterStore {
 public:
  explicit PgDeadLetterStore(PgPool& pool) : pool_(pool) {}

  Result<Listing<DeadLetter>> ListDeadLetters(const DeadLetterFilter& filter, const Page& page,
                                              const Scope& scope) override;
  Result<int64_t> ReplayDeadLetter(int64_t id, const Scope& scope) override;
  Result<DeadLetter> DismissDeadLetter(int64_t id, const Scope& scope) override;
  Result<BulkReplay> ReplayDeadLetters(const DeadLetterFilter& filter, const Scope& scope,
                                       std::optional<int64_t> max) override;

 private:
  PgPool& pool_;
};

}  // namespace webhookd::pg
