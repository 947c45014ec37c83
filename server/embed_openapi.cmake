# Writes OUTPUT: a C++ file whose OpenApiJson() returns the bytes of INPUT.
file(READ "${INPUT}" json)
file(WRITE "${OUTPUT}.tmp"
"// Generated from docs/openapi.json by embed_openapi.cmake; do not edit.
#include \"server/openapi.h\"

namespace webhookd {

std::string_view OpenApiJson() {
  static constexpr std::string_view kJson = R\"webhookd_json(${json})webhookd_json\";
  return kJson;
}

}  // namespace webhookd
")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
