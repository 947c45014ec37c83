# Writes OUTPUT: a C++ file whose OpenApiJson() returns the bytes of INPUT.
include("${WEBHOOKD_CMAKE_DIR}/embed_write.cmake")
file(READ "${INPUT}" json)
webhookd_write_generated(
"// Generated from docs/openapi.json by embed_openapi.cmake; do not edit.
#include \"server/openapi.h\"

namespace webhookd {

std::string_view OpenApiJson() {
  static constexpr std::string_view kJson = R\"webhookd_json(${json})webhookd_json\";
  return kJson;
}

}  // namespace webhookd
")
