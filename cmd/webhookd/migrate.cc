// `webhookd migrate`.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cmd/webhookd/cli.h"
#include "cmd/webhookd/commands.h"
#include "core/ids.h"

namespace webhookd::cmd {
namespace {

constexpr const char* kMigrateHelp = R"(Usage: webhookd migrate

Applies migrations/NNNN_name.sql (compiled into the binary) in order, each once, recording
them in schema_migrations; then, once per set, the live SQL definitions of
store/pg/schema/, recording their hash in schema_definitions. Safe to run concurrently and
repeatedly.

The first migration, 0034_baseline, stands for 0001-0034 of earlier releases: a database
they migrated to 0034 gets it recorded, not run, and loses the functions, triggers and
views no file of store/pg/schema/ defines. A database part-way through 0001-0034 is
refused: migrate it with the last release before the baseline first (docs/operations.md).
Environment: DATABASE_URL.
)";

}  // namespace

int Migrate(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::fputs(kMigrateHelp, stdout);
    return 0;
  }
  if (!args.empty()) return Usage("migrate takes no arguments; see webhookd migrate --help");
  auto config = LoadOrComplain();
  if (!config) return 2;
  auto applied = ApplyMigrations(config->database_url);
  if (!applied) {
    std::fprintf(stderr, "webhookd: %s\n", applied.error().message.c_str());
    return 1;
  }
  if (applied->baseline_recorded) {
    std::puts(
        "recorded 0034_baseline: the database was at 0034 of an earlier release; definitions "
        "no file of store/pg/schema/ has were dropped");
  }
  for (const auto& version : applied->versions) std::printf("applied %s\n", version.c_str());
  if (applied->definitions) std::puts("applied the SQL definitions of store/pg/schema/");
  if (applied->versions.empty() && !applied->definitions) {
    std::puts("nothing to apply: the schema is up to date");
  }
  return 0;
}

}  // namespace webhookd::cmd
