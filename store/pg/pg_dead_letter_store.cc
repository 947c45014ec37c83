#include "store/pg/pg_dead_letter_store.h"

#include <algorithm>

#include "store/pg/exec.h"
#include "store/pg/rows.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

constexpr int kReplayChunk = 5000;

std::optional<std::string_view> ReasonParam(const DeadLetterFilter& filter) {
  if (!filter.reason) return std::nullopt;
  return DeadLetterReasonName(*filter.reason);
}

}  // namespace

Result<Listing<DeadLetter>> PgDeadLetterStore::ListDeadLetters(const DeadLetterFilter& filter,
                                                               const Page& page,
                                                               const Scope& scope) {
  return ListPage<DeadLetter>(pool_,
                              NamedParams(sql::kListDeadLetters)
                                  .Set("destination_id", filter.destination_id)
                                  .Set("reason", ReasonParam(filter))
                                  .Set("since", filter.since)
                                  .Set("until", filter.until)
                                  .Set("before_id", page.before_id)
                                  .Set("limit", page.limit + 1)
                                  .Set("tenant_id", filter.tenant_id)
                                  .Set("scope_tenant_id", scope.tenant_id),
                              page, ToDeadLetter);
}

Result<int64_t> PgDeadLetterStore::ReplayDeadLetter(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kReplayDeadLetter, Params().Add(id).Add(scope.tenant_id));
    if (!r.empty()) {
      NotifyWakeup(tx);
      tx.commit();
      return r[0][0].as<int64_t>();
    }
    auto state = Exec(tx, sql::kDeadLetterState, Params().Add(id).Add(scope.tenant_id));
    if (state.empty()) return Fail(ErrorKind::kNotFound, "no dead letter with that id");
    if (state[0][0].as<bool>())
      return Fail(ErrorKind::kConflict, "this dead letter was already replayed");
    if (state[0][2].as<bool>()) {
      return Fail(ErrorKind::kConflict, "this dead letter was dismissed");
    }
    if (state[0][1].as<bool>()) {
      return Fail(ErrorKind::kConflict, "the destination of this dead letter was deleted");
    }
    if (state[0][3].as<bool>()) {
      return Fail(ErrorKind::kConflict, "the event of this dead letter was erased");
    }
    return Fail(ErrorKind::kConflict, "the delivery of this dead letter is not dead-lettered");
  });
}

Result<DeadLetter> PgDeadLetterStore::DismissDeadLetter(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<DeadLetter> {
    pqxx::work tx(c);
    auto r = Exec(tx, sql::kDismissDeadLetter, Params().Add(id).Add(scope.tenant_id));
    if (!r.empty()) {
      NotifyWakeup(tx);
      tx.commit();
      return ToDeadLetter(r[0]);
    }
    auto state = Exec(tx, sql::kDeadLetterState, Params().Add(id).Add(scope.tenant_id));
    if (state.empty()) return Fail(ErrorKind::kNotFound, "no dead letter with that id");
    if (state[0][2].as<bool>()) {
      return Fail(ErrorKind::kConflict, "this dead letter was already dismissed");
    }
    return Fail(ErrorKind::kConflict, "this dead letter was replayed; it cannot be dismissed");
  });
}

Result<DeadLetterStore::BulkReplay> PgDeadLetterStore::ReplayDeadLetters(
    const DeadLetterFilter& filter, const Scope& scope, std::optional<int64_t> max) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<BulkReplay> {
    BulkReplay done;
    for (;;) {
      const int64_t chunk =
          max ? std::min<int64_t>(kReplayChunk, *max - done.replayed) : int64_t{kReplayChunk};
      if (chunk <= 0) {
        done.more = true;
        break;
      }
      pqxx::work tx(c);
      auto r = Exec(tx, NamedParams(sql::kReplayDeadLetterChunk)
                            .Set("destination_id", filter.destination_id)
                            .Set("reason", ReasonParam(filter))
                            .Set("since", filter.since)
                            .Set("until", filter.until)
                            .Set("limit", chunk)
                            .Set("tenant_id", filter.tenant_id)
                            .Set("scope_tenant_id", scope.tenant_id));
      const int64_t n = r[0][0].as<int64_t>();
      if (n > 0) NotifyWakeup(tx);
      tx.commit();
      done.replayed += n;
      if (n == 0) break;
    }
    return done;
  });
}

}  // namespace webhookd::pg
