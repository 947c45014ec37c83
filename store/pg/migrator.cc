#include "store/pg/migrator.h"

#include <pqxx/pqxx>
#include <regex>
#include <set>

#include "store/pg/baseline.h"
#include "store/pg/locks.h"
#include "store/pg/statements.h"

namespace webhookd::pg {
namespace {

std::string Text(const Query& q) { return std::string(q.sql); }

// Where a database stands against the baseline (migrations/0034_baseline.sql).
enum class Start {
  kFromBaseline,  // empty, or made from the baseline: apply what it lacks
  kAt0034,        // migrated to 0034 by an earlier release: record the baseline, not run it
  kPartWay,       // some of 0001-0034 only: refused
};

Start Classify(const std::set<std::string>& applied) {
  if (applied.empty() || applied.contains(std::string(kBaselineVersion))) {
    return Start::kFromBaseline;
  }
  for (std::string_view v : kReplacedVersions) {
    if (!applied.contains(std::string(v))) return Start::kPartWay;
  }
  return Start::kAt0034;
}

// The files in the order they are applied. Function bodies are not checked at creation
// (defer_function_body_checks.sql), so functions and their triggers go in name order; a
// view's query is checked at creation, so the views come after every function they may
// call (delivery_rows calls fifo_blocked_by, which sorts after it).
std::vector<const SchemaFile*> ApplyOrder(const Schema& schema) {
  static const std::regex kView(R"(CREATE\s+(OR\s+REPLACE\s+)?VIEW)", std::regex::icase);
  std::vector<const SchemaFile*> order;
  for (const SchemaFile& f : schema.files) {
    if (!std::regex_search(f.sql, kView)) order.push_back(&f);
  }
  for (const SchemaFile& f : schema.files) {
    if (std::regex_search(f.sql, kView)) order.push_back(&f);
  }
  return order;
}

}  // namespace

Result<Migrated> Migrate(const std::string& url, std::span<const Migration> migrations,
                         const Schema& schema) {
  Migrated applied_now;
  try {
    pqxx::connection conn(url);
    {
      pqxx::nontransaction tx(conn);
      tx.exec_params(Text(sql::kLockMigrations), kMigrateLock);
      // Before anything is created: a pre-0.2 installation is not an empty database.
      if (tx.exec1(Text(sql::kPublicInstall))[0].as<bool>()) {
        return Fail(ErrorKind::kInvalid,
                    "this database holds a webhookd installation from before 0.2, in schema "
                    "public: run `webhookd migrate` of the last release before the baseline "
                    "(its migrations end at 0034_plain_values_that_read_as_sealed) first, then "
                    "this one");
      }
      tx.exec(Text(sql::kCreateSchema));
      tx.exec(Text(sql::kCreateMigrationsTable));
    }
    std::set<std::string> applied;
    {
      pqxx::nontransaction tx(conn);
      for (const auto& row : tx.exec(Text(sql::kAppliedMigrations))) {
        applied.insert(row[0].c_str());
      }
    }
    const Start start = Classify(applied);
    if (start == Start::kPartWay) {
      return Fail(ErrorKind::kInvalid,
                  "this database is part-way through migrations 0001-0034 (the last applied is " +
                      *applied.rbegin() + "), which this release replaced by migrations/" +
                      std::string(kBaselineVersion) +
                      ".sql: run `webhookd migrate` of the last release before the baseline (its "
                      "migrations end at 0034_plain_values_that_read_as_sealed) first, then this "
                      "one; nothing was applied");
    }
    const bool adopting = start == Start::kAt0034;
    {
      pqxx::nontransaction tx(conn);
      tx.exec(Text(sql::kCreateSchemaDefinitionsTable));
    }
    for (const Migration& m : migrations) {
      if (applied.contains(m.version)) continue;
      // Recorded below, with the definitions, for a database at 0034.
      if (adopting && m.version == kBaselineVersion) continue;
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
      // A database at 0034 gets the files whatever its recorded hash, since its leftovers
      // are told apart by the files being applied in this transaction; the baseline is
      // recorded with them, so a failure leaves it at 0034 to be taken up again.
      if (adopting ||
          !tx.exec_params1(Text(sql::kSchemaDefinitionsApplied), schema.hash)[0].as<bool>()) {
        tx.exec(Text(sql::kDeferFunctionBodyChecks));
        for (const SchemaFile* f : ApplyOrder(schema)) {
          try {
            tx.exec(f->sql);
          } catch (const pqxx::sql_error& e) {
            return Fail(ErrorKind::kInvalid,
                        "schema file " + f->name + ".sql failed: " + std::string(e.what()));
          }
        }
        tx.exec(Text(sql::kRecountQueue));
        if (adopting) {
          tx.exec(Text(sql::kDropLeftoverDefinitions));
          tx.exec_params(Text(sql::kRecordMigration), std::string(kBaselineVersion));
        }
        tx.exec_params(Text(sql::kRecordSchemaDefinitions), schema.hash);
        tx.commit();
        applied_now.definitions = true;
        applied_now.baseline_recorded = adopting;
      }
    } catch (const pqxx::sql_error& e) {
      return Fail(ErrorKind::kInvalid, std::string("schema definitions: ") + e.what());
    }
    // The history's days a week ahead (docs/retention.md), so that the processes started
    // after this never insert into a day without a partition; retention rounds keep it so.
    try {
      pqxx::work tx(conn);
      tx.exec_params(Text(sql::kAddHistoryDays), kHistoryDaysAhead);
      tx.commit();
    } catch (const pqxx::sql_error& e) {
      return Fail(ErrorKind::kInvalid, std::string("the history's days: ") + e.what());
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
