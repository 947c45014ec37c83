# Writes OUTPUT, a header naming every statement of store/pg/sql/: sql/<name>.sql becomes
# `inline constexpr Query k<Name>{"<name>", "<its text>"}`, and kPrepared lists the ones
# every connection prepares. sql/scripts/*.sql are run as they are (session set-up, the migrator)
# (DDL cannot be prepared); they become constants too but are not in kPrepared.
include("${WEBHOOKD_CMAKE_DIR}/embed_write.cmake")
function(webhookd_sql_constant file out_var)
  get_filename_component(name "${file}" NAME_WE)
  string(REPLACE "_" ";" parts "${name}")
  set(camel "")
  foreach(part IN LISTS parts)
    string(SUBSTRING "${part}" 0 1 first)
    string(TOUPPER "${first}" first)
    string(SUBSTRING "${part}" 1 -1 rest)
    string(APPEND camel "${first}${rest}")
  endforeach()
  file(READ "${file}" sql)
  set(${out_var} "inline constexpr Query k${camel}{\"${name}\", R\"webhookd_sql(${sql})webhookd_sql\"};\n" PARENT_SCOPE)
  set(${out_var}_name "k${camel}" PARENT_SCOPE)
endfunction()

file(GLOB statements "${SQL_DIR}/*.sql")
file(GLOB scripts "${SQL_DIR}/scripts/*.sql")
list(SORT statements)
list(SORT scripts)
set(body "")
set(prepared "")
foreach(f IN LISTS statements)
  webhookd_sql_constant("${f}" constant)
  string(APPEND body "${constant}")
  string(APPEND prepared "    ${constant_name},\n")
endforeach()
string(APPEND body "\n// Scripts run as they are, never prepared.\n")
foreach(f IN LISTS scripts)
  webhookd_sql_constant("${f}" constant)
  string(APPEND body "${constant}")
endforeach()
webhookd_write_generated(
"// Generated from store/pg/sql/ by embed_sql.cmake; do not edit.
#pragma once

#include \"store/pg/query.h\"

namespace webhookd::pg::sql {

${body}
inline constexpr Query kPrepared[] = {
${prepared}};

}  // namespace webhookd::pg::sql
")
