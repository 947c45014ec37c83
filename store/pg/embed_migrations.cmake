# Writes OUTPUT: a C++ file holding every migrations/*.sql, in name order.
include("${WEBHOOKD_CMAKE_DIR}/embed_write.cmake")
file(GLOB files "${MIGRATIONS_DIR}/*.sql")
list(SORT files)
set(body "")
foreach(f IN LISTS files)
  get_filename_component(version "${f}" NAME_WE)
  file(READ "${f}" sql)
  string(APPEND body "    {\"${version}\", R\"webhookd_sql(${sql})webhookd_sql\"},\n")
endforeach()
webhookd_write_generated(
"// Generated from migrations/ by embed_migrations.cmake; do not edit.
#include \"store/pg/migrator.h\"

namespace webhookd::pg {

std::span<const Migration> EmbeddedMigrations() {
  static const std::vector<Migration> kMigrations = {
${body}  };
  return kMigrations;
}

}  // namespace webhookd::pg
")
