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

// Applies, in order, each migration not yet recorded in schema_migrations: each in its own
// transaction with its record, so a failing file leaves no trace. A session advisory lock
// makes concurrent runs wait for each other. Returns the versions it applied.
Result<std::vector<std::string>> Migrate(const std::string& url,
                                         std::span<const Migration> migrations);

}  // namespace webhookd::pg
