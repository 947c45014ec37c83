#include "store/pg/pg_erasure_store.h"

#include "store/pg/exec.h"
#include "store/pg/locks.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

Erasure ToErasure(const pqxx::row& r) {
  Erasure e;
  e.id = r[0].as<int64_t>();
  e.status =
      std::string_view(r[1].c_str()) == "done" ? ErasureStatus::kDone : ErasureStatus::kRunning;
  e.events = r[2].as<int>();
  e.cancelled_deliveries = r[3].as<int>();
  e.created_at = ToTimestamp(r[4]);
  e.finished_at = ToOptionalTimestamp(r[5]);
  e.tenant_id = ToOptionalString(r[6]);
  return e;
}

}  // namespace

Result<Erasure> PgErasureStore::RequestErasure(const std::string& subject,
                                               const std::optional<std::string>& tenant_id,
                                               const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Erasure> {
    pqxx::work tx(c);
    auto r = Exec(
        tx, sql::kRequestErasure,
        Params().Add(subject).Add(scope.tenant_id ? scope.tenant_id : tenant_id).Add(kMaxRunning));
    tx.commit();
    if (r.empty()) {
      return Fail(ErrorKind::kTooMany, std::to_string(kMaxRunning) +
                                           " erasures are running already; retry when one is "
                                           "done (GET /v1/erasures/{id})");
    }
    return ToErasure(r[0]);
  });
}

Result<Erasure> PgErasureStore::GetErasure(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Erasure> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetErasure, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no erasure with that id");
    return ToErasure(r[0]);
  });
}

Result<ErasureRound> PgErasureStore::RunErasures(int batch, int max_batches) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<ErasureRound> {
    std::vector<int64_t> running;
    {
      pqxx::nontransaction tx(c);
      for (const auto& row : Exec(tx, sql::kRunningErasures))
        running.push_back(row[0].as<int64_t>());
    }
    // One batch of each in turn, so that a subject with a million events does not hold
    // up an erasure of a few behind it.
    ErasureRound round;
    int batches = 0;
    while (!running.empty() && batches < max_batches && !round.held_back) {
      std::vector<int64_t> still;
      for (int64_t id : running) {
        if (batches == max_batches || round.held_back) {
          still.push_back(id);
          continue;
        }
        ++batches;
        pqxx::work tx(c);
        // Maintenance, not a request: WEBHOOKD_STATEMENT_TIMEOUT does not bound it (a batch
        // of events with a thousand destinations each cancels a million deliveries).
        Exec(tx, sql::kLiftStatementTimeout);
        // A day of the history being carried, detached and dropped is out of an erasure's
        // reach until it is dropped, and what of it is kept is copied back from the
        // detached tables: no batch runs across that step (PgRetentionStore::DropAgedDays).
        if (!Exec(tx, sql::kShareHistoryMoveLock, Params().Add(kHistoryMoveLock))[0][0]
                 .as<bool>()) {
          round.held_back = true;
          still.push_back(id);
          continue;
        }
        auto chosen = Exec(tx, sql::kLockErasureBatch, Params().Add(id).Add(batch));
        // No row: done already, or another process is carrying it out.
        if (chosen.empty()) continue;
        const std::string events = chosen[0][0].as<std::string>();
        auto r = Exec(tx, sql::kRunErasure, Params().Add(id).Add(events).Add(batch));
        Exec(tx, sql::kEraseErrorTexts, Params().Add(events));
        tx.commit();
        if (r.empty()) continue;
        if (r[0][0].as<bool>()) {
          ++round.finished;
        } else {
          still.push_back(id);
        }
      }
      running = std::move(still);
    }
    round.running = static_cast<int>(running.size());
    return round;
  });
}

}  // namespace webhookd::pg
