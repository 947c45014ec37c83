#include "store/pg/exec.h"

#include <chrono>
#include <thread>

#include "store/pg/locks.h"
#include "store/pg/pg_pool.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

pqxx::result Exec(pqxx::transaction_base& tx, const Query& q, const Params& params) {
  return tx.exec_prepared(std::string(q.name), params.dynamic());
}

pqxx::result Exec(pqxx::transaction_base& tx, const NamedParams& params) {
  return Exec(tx, params.query(), params.Positional());
}

void NotifyWakeup(pqxx::transaction_base& tx) {
  Exec(tx, sql::kNotifyWakeup, Params().Add(kWakeupChannel));
}

bool CommittedAfterDoubt(const std::string& url, const std::vector<int64_t>& event_ids,
                         Timestamp created_at) {
  ArrayLiteral ids;
  for (int64_t id : event_ids) ids.Add(id);
  const std::string array = ids.Finish();
  for (int attempt = 0; attempt < 40; ++attempt) {
    try {
      auto conn = PgPool::Connect(url);
      pqxx::nontransaction tx(*conn);
      auto r = Exec(tx, sql::kCountEvents, Params().Add(array).Add(created_at));
      return r[0][0].as<int64_t>() > 0;  // one transaction: all or none
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  return false;
}

std::unexpected<Error> KeyNotLive() {
  return Fail(ErrorKind::kUnauthorized, "the API key is not valid");
}

std::unexpected<Error> CatalogChanged() {
  return Fail(ErrorKind::kStale, "the event catalog changed while the event was checked");
}

Result<void> CheckFilter(pqxx::transaction_base& tx, const std::string& filter) {
  auto r = Exec(tx, sql::kFilterProblem, Params().Add(filter));
  if (!r[0][0].is_null()) return Invalid({{"filter", r[0][0].c_str()}});
  return {};
}

}  // namespace webhookd::pg
