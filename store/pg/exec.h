#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/pg/pg_values.h"
#include "store/pg/query.h"

namespace webhookd::pg {

// Runs a statement of sql/ (prepared on every connection under its name).
pqxx::result Exec(pqxx::transaction_base& tx, const Query& q, const Params& params = Params());

// Wakes the workers when `tx` commits (NOTIFY is transactional).
void NotifyWakeup(pqxx::transaction_base& tx);

// The connection broke during COMMIT, so the outcome is unknown: asks a fresh connection
// whether the events exist, for a few seconds while the database comes back. False when
// they do not exist or the question cannot be answered.
//
// The ids alone do not name the transaction: a sequence advance is written to WAL but not
// flushed until a commit, so after a crash the sequence can hand the same ids to a later
// transaction. `created_at` is the in-doubt transaction's now() (every event of one
// transaction has it), which a transaction begun after the restart cannot share.
bool CommittedAfterDoubt(const std::string& url, const std::vector<int64_t>& event_ids,
                         Timestamp created_at);

// An ingest whose deferred API key check (NewEvent::verify_key_hash) failed.
std::unexpected<Error> KeyNotLive();

// An ingest checked against an event catalog that has changed since (kStale).
std::unexpected<Error> CatalogChanged();

// kInvalid on `filter` when filter_problem (store/pg/schema/filter_problem.sql) refuses it.
Result<void> CheckFilter(pqxx::transaction_base& tx, const std::string& filter);

}  // namespace webhookd::pg
