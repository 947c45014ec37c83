#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace webhookd::pg {

struct Migration {
  std::string version;  // the file name without ".sql", e.g. "0001_init"
  std::string sql;
};

// The files of migrations/, compiled into the binary in order, so `webhookd migrate` works
// from any directory. The first is the baseline (store/pg/baseline.h).
std::span<const Migration> EmbeddedMigrations();

struct SchemaFile {
  std::string name;  // the file name without ".sql", e.g. "claim_due"
  std::string sql;
};

// The live definitions of webhookd's functions, trigger functions, triggers and views,
// one file each; the migrations only build up to them. `hash` covers every name and text.
struct Schema {
  std::string hash;
  std::vector<SchemaFile> files;
};

// The files of store/pg/schema/, compiled into the binary in name order.
const Schema& EmbeddedSchema();

// What a run of Migrate applied.
struct Migrated {
  std::vector<std::string> versions;  // the migrations, in order
  bool definitions = false;           // the schema files (their hash was not recorded)
  // The database was at 0034 of the releases before the baseline: the baseline was
  // recorded, not run, and the definitions no schema file has were dropped.
  bool baseline_recorded = false;
};

// Applies, in order, each migration not yet recorded in schema_migrations: each in its own
// transaction with its record, so a failing file leaves no trace. Then, unless its hash is
// recorded in schema_definitions, every schema file and the hash in one transaction, so
// the definitions it leaves are the binary's whatever the migrations defined before. A
// session advisory lock makes concurrent runs wait for each other.
//
// A database migrated to 0034 by a release before the baseline gets the baseline recorded
// instead of run, in the transaction that applies the schema files and drops whatever
// function, trigger or view of theirs no file defines, so it ends with the catalog of a
// database made from the baseline. One part-way through 0001-0034, or still in schema
// public (before 0.2), is refused before anything is written, with what to do.
Result<Migrated> Migrate(const std::string& url, std::span<const Migration> migrations,
                         const Schema& schema = EmbeddedSchema());

}  // namespace webhookd::pg
