#include "store/pg/migrator.h"

#include <pqxx/pqxx>
#include <set>

namespace webhookd::pg {
namespace {
constexpr int64_t kMigrateLockKey = 7252010;
}  // namespace

Result<std::vector<std::string>> Migrate(const std::string& url,
                                         std::span<const Migration> migrations) {
  std::vector<std::string> applied_now;
  try {
    pqxx::connection conn(url);
    {
      pqxx::nontransaction tx(conn);
      tx.exec("SET client_min_messages = warning");
      tx.exec("SELECT pg_advisory_lock(" + std::to_string(kMigrateLockKey) + ")");
      tx.exec(
          "CREATE TABLE IF NOT EXISTS schema_migrations ("
          " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    }
    std::set<std::string> applied;
    {
      pqxx::nontransaction tx(conn);
      for (const auto& row : tx.exec("SELECT version FROM schema_migrations")) {
        applied.insert(row[0].c_str());
      }
    }
    for (const Migration& m : migrations) {
      if (applied.contains(m.version)) continue;
      try {
        pqxx::work tx(conn);
        tx.exec(m.sql);
        tx.exec_params("INSERT INTO schema_migrations (version) VALUES ($1)", m.version);
        tx.commit();
      } catch (const pqxx::sql_error& e) {
        return Fail(ErrorKind::kInvalid, "migration " + m.version + " failed: " + e.what());
      }
      applied_now.push_back(m.version);
    }
    // The session lock ends with the connection.
  } catch (const pqxx::broken_connection& e) {
    return Fail(ErrorKind::kUnavailable, std::string("cannot reach the database: ") + e.what());
  } catch (const std::exception& e) {
    return Fail(ErrorKind::kInternal, std::string("migrate: ") + e.what());
  }
  return applied_now;
}

}  // namespace webhookd::pg
