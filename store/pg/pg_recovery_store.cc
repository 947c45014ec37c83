#include "store/pg/pg_recovery_store.h"

#include <algorithm>
#include <string>
#include <vector>

#include "store/pg/exec.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

// The columns id .. finished_at of get_recovery.sql, from `first` on.
Recovery ToRecovery(const pqxx::row& r, int first = 0) {
  Recovery e;
  e.id = r[first].as<int64_t>();
  e.destination_id = r[first + 1].as<int64_t>();
  e.tenant_id = ToOptionalString(r[first + 2]);
  e.status = std::string_view(r[first + 3].c_str()) == "done" ? RecoveryStatus::kDone
                                                              : RecoveryStatus::kRunning;
  e.replayed = r[first + 4].as<int64_t>();
  e.since = ToTimestamp(r[first + 5]);
  e.until = ToTimestamp(r[first + 6]);
  e.created_at = ToTimestamp(r[first + 7]);
  e.finished_at = ToOptionalTimestamp(r[first + 8]);
  return e;
}

// What one page of a recovery did.
enum class PageEnd { kMore, kDone, kWaiting, kSkipped };

}  // namespace

Result<Recovery> PgRecoveryStore::RequestRecovery(int64_t destination_id, Timestamp since,
                                                  std::optional<Timestamp> until,
                                                  const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Recovery> {
    pqxx::work tx(c);
    auto r = Exec(
        tx, sql::kRequestRecovery,
        Params().Add(destination_id).Add(since).Add(until).Add(scope.tenant_id).Add(kMaxRunning));
    tx.commit();
    if (!r[0][0].as<bool>()) return Fail(ErrorKind::kNotFound, "no destination with that id");
    if (!r[0][1].as<bool>()) {
      return Invalid({{until ? "until" : "since",
                       until ? "must be after since, and since before now"
                             : "must be before until (now when until is not given)"}});
    }
    if (!r[0][2].as<bool>()) {
      return Fail(ErrorKind::kTooMany, std::to_string(kMaxRunning) +
                                           " recoveries of this destination are running "
                                           "already; retry when one is done "
                                           "(GET /v1/recoveries/{id})");
    }
    return ToRecovery(r[0], 3);
  });
}

Result<Recovery> PgRecoveryStore::GetRecovery(int64_t id, const Scope& scope) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<Recovery> {
    pqxx::nontransaction tx(c);
    auto r = Exec(tx, sql::kGetRecovery, Params().Add(id).Add(scope.tenant_id));
    if (r.empty()) return Fail(ErrorKind::kNotFound, "no recovery with that id");
    return ToRecovery(r[0]);
  });
}

Result<RecoveryRound> PgRecoveryStore::RunRecoveries(const RecoveryPace& pace, int max_pages) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<RecoveryRound> {
    std::vector<int64_t> running;
    {
      pqxx::nontransaction tx(c);
      for (const auto& row : Exec(tx, sql::kRunningRecoveries))
        running.push_back(row[0].as<int64_t>());
    }
    RecoveryRound round;
    int pages = 0;
    int waiting = 0;  // for their destinations' queues, or held by another process
    // A page of each in turn, so that a recovery of a million dead letters does not hold
    // up a small one behind it.
    while (!running.empty() && pages < max_pages) {
      std::vector<int64_t> still;
      for (int64_t id : running) {
        if (pages == max_pages) {
          still.push_back(id);
          continue;
        }
        ++pages;
        pqxx::work tx(c);
        auto locked = Exec(tx, sql::kLockRecovery, Params().Add(id).Add(pace.max_pending));
        if (locked.empty()) {
          // Done, or another process is carrying it out; it counts as running until a round
          // of this process sees it done.
          ++waiting;
          continue;
        }
        const auto& rec = locked[0];
        const int64_t room = pace.max_pending - rec[4].as<int64_t>();
        const int64_t limit = std::min<int64_t>(pace.page, room);
        if (limit <= 0) {
          ++waiting;
          continue;
        }
        auto r = Exec(tx, sql::kReplayRecoveryPage,
                      Params()
                          .Add(id)
                          .Add(rec[0].as<int64_t>())
                          .Add(ToTimestamp(rec[1]))
                          .Add(ToTimestamp(rec[2]))
                          .Add(rec[3].as<int64_t>())
                          .Add(limit));
        const int64_t replayed = r[0][0].as<int64_t>();
        if (replayed > 0) NotifyWakeup(tx);
        tx.commit();
        round.replayed += replayed;
        if (r[0][1].as<bool>()) {
          ++round.finished;
        } else {
          still.push_back(id);
        }
      }
      running = std::move(still);
    }
    round.more = !running.empty();
    round.running = static_cast<int>(running.size()) + waiting;
    return round;
  });
}

}  // namespace webhookd::pg
