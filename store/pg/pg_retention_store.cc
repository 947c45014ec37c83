#include "store/pg/pg_retention_store.h"

#include <chrono>
#include <string>
#include <vector>

#include "store/pg/exec.h"
#include "store/pg/locks.h"
#include "store/pg/statements.h"

namespace webhookd::pg {

Result<int> PgRetentionStore::AddHistoryDays(int days_ahead) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int> {
    pqxx::work tx(c);
    Exec(tx, sql::kLiftStatementTimeout);
    auto r = Exec(tx, sql::kAddHistoryDays, Params().Add(days_ahead));
    tx.commit();
    return r[0][0].as<int>();
  });
}

Result<DroppedDays> PgRetentionStore::DropAgedDays(Timestamp cutoff, int max_days) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<DroppedDays> {
    {
      pqxx::nontransaction tx(c);
      if (!Exec(tx, sql::kTryHistoryDropLock, Params().Add(kHistoryDropLock))[0][0].as<bool>()) {
        return DroppedDays{};
      }
    }
    // The session's lock and statement bound are given back however this ends; a
    // connection an exception leaves suspect is discarded, which ends both anyway.
    std::string bound = "0";
    bool moving = false;
    struct Restore {
      pqxx::connection& c;
      std::string& bound;
      bool& moving;
      ~Restore() {
        try {
          pqxx::nontransaction tx(c);
          Exec(tx, sql::kSetStatementTimeout, Params().Add(bound));
          if (moving) Exec(tx, sql::kReleaseHistoryMoveLock, Params().Add(kHistoryMoveLock));
          Exec(tx, sql::kReleaseHistoryDropLock, Params().Add(kHistoryDropLock));
        } catch (...) {  // NOLINT(bugprone-empty-catch): the connection is discarded
        }
      }
    } restore{c, bound, moving};
    {
      pqxx::nontransaction tx(c);
      bound = Exec(tx, sql::kLiftSessionStatementTimeout)[0][0].as<std::string>();
    }

    DroppedDays out;
    for (int i = 0; i < max_days; ++i) {
      std::string day;
      if (!moving) {
        // No erasure batch runs from the carry to the drop: a detached day is out of its
        // reach, and what of the day is kept is copied back from the detached tables as it
        // was (docs/privacy.md). Taken only when a day is due, so a round with nothing to
        // drop never holds erasures up.
        pqxx::nontransaction tx(c);
        if (Exec(tx, sql::kHistoryDayDue, Params().Add(cutoff)).empty()) break;
        Exec(tx, sql::kTakeHistoryMoveLock, Params().Add(kHistoryMoveLock));
        moving = true;
      }
      {
        pqxx::work tx(c);
        auto due = Exec(tx, sql::kHistoryDayDue, Params().Add(cutoff));
        if (due.empty()) break;
        day = due[0][0].as<std::string>();
        out.kept_events += Exec(tx, sql::kCarryHistoryDay, Params().Add(day))[0][0].as<int64_t>();
        tx.commit();
      }
      // Each detach on its own, outside a transaction, as DETACH ... CONCURRENTLY must be.
      std::vector<std::string> detaches;
      {
        pqxx::nontransaction tx(c);
        for (const auto& row : Exec(tx, sql::kHistoryDayDetaches, Params().Add(day))) {
          detaches.push_back(row[0].as<std::string>());
        }
      }
      for (const std::string& statement : detaches) {
        pqxx::nontransaction tx(c);
        tx.exec(statement);
      }
      {
        pqxx::work tx(c);
        auto bounds = Exec(tx, sql::kHistoryDayEventBounds, Params().Add(day));
        out.kept_events +=
            Exec(tx, sql::kDropDetachedHistoryDay, Params().Add(day))[0][0].as<int64_t>();
        // The inbound events' duplicate keys go with their day (docs/inbound.md).
        if (!bounds.empty()) {
          Exec(tx, sql::kDropDaySourceKeys,
               Params().Add(bounds[0][0].as<int64_t>()).Add(bounds[0][1].as<int64_t>()));
        }
        tx.commit();
      }
      ++out.days;
    }
    return out;
  });
}

Result<int64_t> PgRetentionStore::PurgeExpired(Duration retention, int batch) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<int64_t> {
    pqxx::work tx(c);
    // Maintenance, not a request: WEBHOOKD_STATEMENT_TIMEOUT does not bound it.
    Exec(tx, sql::kLiftStatementTimeout);
    if (!Exec(tx, sql::kTryPurgeLock, Params().Add(kPurgeLock))[0][0].as<bool>()) return 0;
    Exec(tx, sql::kPurgeIdempotencyKeys);
    Exec(tx, sql::kEraseExpiredSecrets, Params().AddNull());
    if (retention <= Duration::zero()) {
      tx.commit();
      return 0;
    }
    // Under a day, rows go one by one from every day; from a day on, whole days go, and
    // only the rows kept past their day are purged here.
    const bool short_retention = retention < std::chrono::hours(24);
    auto r = Exec(tx, short_retention ? sql::kPurgeExpiredEvents : sql::kPurgeKeptEvents,
                  Params().Add(static_cast<int64_t>(retention.count())).Add(batch));
    tx.commit();
    return r[0][0].as<int64_t>();
  });
}

Result<std::vector<HistoryPartition>> PgRetentionStore::ListHistoryPartitions(Duration retention) {
  return RunOn(pool_, [&](pqxx::connection& c) -> Result<std::vector<HistoryPartition>> {
    pqxx::read_transaction tx(c);
    std::vector<HistoryPartition> out;
    for (const auto& row :
         Exec(tx, sql::kHistoryPartitions, Params().Add(static_cast<int64_t>(retention.count())))) {
      HistoryPartition p;
      p.table = row[0].as<std::string>();
      if (!row[1].is_null()) p.day = row[1].as<std::string>();
      p.rows = row[2].as<int64_t>();
      p.bytes = row[3].as<int64_t>();
      p.goes_at = ToOptionalTimestamp(row[4]);
      p.dropping = row[5].as<bool>();
      out.push_back(std::move(p));
    }
    return out;
  });
}

}  // namespace webhookd::pg
