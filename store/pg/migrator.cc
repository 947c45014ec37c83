#include "store/pg/migrator.h"

#include <pqxx/pqxx>
#include <set>

#include "store/pg/locks.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

std::string Text(const Query& q) { return std::string(q.sql); }

}  // namespace

Result<Migrated> Migrate(const std::string& url, std::span<const Migration> migrations,
                         const Schema& schema) {
  Migrated applied_now;
  try {
    pqxx::connection conn(url);
    {
      pqxx::nontransaction tx(conn);
      tx.exec_params(Text(sql::kLockMigrations), kMigrateLock);
      tx.exec(Text(sql::kCreateSchema));
      tx.exec(Text(sql::kAdoptPublicInstall));
      tx.exec(Text(sql::kCreateMigrationsTable));
      tx.exec(Text(sql::kCreateSchemaDefinitionsTable));
    }
    std::set<std::string> applied;
    {
      pqxx::nontransaction tx(conn);
      for (const auto& row : tx.exec(Text(sql::kAppliedMigrations))) {
        applied.insert(row[0].c_str());
      }
    }
    for (const Migration& m : migrations) {
      if (applied.contains(m.version)) continue;
      try {
        pqxx::work tx(conn);
        tx.exec(m.sql);
        tx.exec_params(Text(sql::kRecordMigration), m.version);
        tx.commit();
      } catch (const pqxx::sql_error& e) {
        return Fail(ErrorKind::kInvalid, "migration " + m.version + " failed: " + e.what());
      }
      applied_now.versions.push_back(m.version);
    }
    try {
      pqxx::work tx(conn);
      if (!tx.exec_params1(Text(sql::kSchemaDefinitionsApplied), schema.hash)[0].as<bool>()) {
        tx.exec(Text(sql::kDeferFunctionBodyChecks));
        for (const SchemaFile& f : schema.files) {
          try {
            tx.exec(f.sql);
          } catch (const pqxx::sql_error& e) {
            return Fail(ErrorKind::kInvalid,
                        "schema file " + f.name + ".sql failed: " + std::string(e.what()));
          }
        }
        tx.exec_params(Text(sql::kRecordSchemaDefinitions), schema.hash);
        tx.commit();
        applied_now.definitions = true;
      }
    } catch (const pqxx::sql_error& e) {
      return Fail(ErrorKind::kInvalid, std::string("schema definitions: ") + e.what());
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
