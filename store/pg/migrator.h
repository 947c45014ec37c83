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
// from any directory.
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
};

// Applies, in order, each migration not yet recorded in schema_migrations: each in its own
// transaction with its record, so a failing file leaves no trace. Then, unless its hash is
// recorded in schema_definitions, every schema file and the hash in one transaction, so
// the definitions it leaves are the binary's whatever the migrations defined before. A
// session advisory lock makes concurrent runs wait for each other.
Result<Migrated> Migrate(const std::string& url, std::span<const Migration> migrations,
                         const Schema& schema = EmbeddedSchema());

}  // namespace webhookd::pg
