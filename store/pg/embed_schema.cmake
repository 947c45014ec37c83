# Writes OUTPUT: a C++ file holding every store/pg/schema/*.sql, in name order, and one
# hash over their names and texts, which `webhookd migrate` records once it applied them.
include("${WEBHOOKD_CMAKE_DIR}/embed_write.cmake")
file(GLOB files "${SCHEMA_DIR}/*.sql")
list(SORT files)
set(body "")
set(all "")
foreach(f IN LISTS files)
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" sql)
  string(APPEND all "${name}\n${sql}\n")
  string(APPEND body "        {\"${name}\", R\"webhookd_sql(${sql})webhookd_sql\"},\n")
endforeach()
string(SHA256 hash "${all}")
webhookd_write_generated(
"// Generated from store/pg/schema/ by embed_schema.cmake; do not edit.
#include \"store/pg/migrator.h\"

namespace webhookd::pg {

const Schema& EmbeddedSchema() {
  static const Schema kSchema{
      \"${hash}\",
      {
${body}      }};
  return kSchema;
}

}  // namespace webhookd::pg
")
