#include "store/pg/pg_erasure_store.h"

#include "store/pg/exec.h"
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
    auto r = Exec(tx, sql::kRequestErasure,
                  Params().Add(subject).Add(scope.tenant_id ? scope.tenant_id : tenant_id));
    tx.commit();
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

Result<int> PgErasureStore::RunErasures() {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int> {
    std::vector<int64_t> running;
    {
      pqxx::nontransaction tx(c);
      for (const auto& row : Exec(tx, sql::kRunningErasures))
        running.push_back(row[0].as<int64_t>());
    }
    int finished = 0;
    for (int64_t id : running) {
      pqxx::work tx(c);
      // Maintenance, not a request: WEBHOOKD_STATEMENT_TIMEOUT does not bound it.
      Exec(tx, sql::kLiftStatementTimeout);
      if (!Exec(tx, sql::kRunErasure, Params().Add(id)).empty()) ++finished;
      tx.commit();
    }
    return finished;
  });
}

}  // namespace webhookd::pg
