# Writes OUTPUT: a C++ file holding every file under ASSETS_DIR (the console's
# console/public/), each as {path relative to ASSETS_DIR, content type, bytes}, in name
# order, then every file of VENDOR_DIR (what the console bundles from npm) as
# vendor/<name>. The bytes are written as hex so that any file, text or binary, embeds
# as is.
include("${WEBHOOKD_CMAKE_DIR}/embed_write.cmake")
file(GLOB_RECURSE files RELATIVE "${ASSETS_DIR}" "${ASSETS_DIR}/*")
list(SORT files)
file(GLOB vendored RELATIVE "${VENDOR_DIR}" "${VENDOR_DIR}/*")
foreach(name IN LISTS vendored)
  if(EXISTS "${ASSETS_DIR}/vendor/${name}")
    message(FATAL_ERROR "embed_assets: vendor/${name} is both in public/ and bundled")
  endif()
  list(APPEND files "vendor/${name}")
endforeach()
# In name order: console/assets.cc finds a path by binary search.
list(SORT files)

function(content_type_of name out)
  string(TOLOWER "${name}" lower)
  if(lower MATCHES "\\.html$")
    set(type "text/html; charset=utf-8")
  elseif(lower MATCHES "\\.(m?js)$")
    set(type "text/javascript; charset=utf-8")
  elseif(lower MATCHES "\\.css$")
    set(type "text/css; charset=utf-8")
  elseif(lower MATCHES "\\.svg$")
    set(type "image/svg+xml")
  elseif(lower MATCHES "\\.png$")
    set(type "image/png")
  elseif(lower MATCHES "\\.ico$")
    set(type "image/x-icon")
  elseif(lower MATCHES "\\.json$")
    set(type "application/json")
  elseif(lower MATCHES "\\.txt$")
    set(type "text/plain; charset=utf-8")
  else()
    set(type "application/octet-stream")
  endif()
  set(${out} "${type}" PARENT_SCOPE)
endfunction()

set(arrays "")
set(table "")
set(index 0)
foreach(name IN LISTS files)
  set(source "${ASSETS_DIR}/${name}")
  if(name MATCHES "^vendor/(.*)$")
    # (A second if: ${CMAKE_MATCH_1} is expanded before the first one matches.)
    if(EXISTS "${VENDOR_DIR}/${CMAKE_MATCH_1}")
      set(source "${VENDOR_DIR}/${CMAKE_MATCH_1}")
    endif()
  endif()
  # Editor leftovers and hidden files are not part of the console.
  get_filename_component(base "${name}" NAME)
  if(base MATCHES "^\\." OR base MATCHES "~$" OR base MATCHES "\\.swp$")
    continue()
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9._/-]+$")
    message(FATAL_ERROR "embed_assets: ${name}: asset names may hold only A-Z a-z 0-9 . _ - /")
  endif()
  file(READ "${source}" hex HEX)
  file(SIZE "${source}" size)
  # 32 bytes a line (CMake's regular expressions have no {n}, hence the dots).
  string(REPEAT "." 64 line)
  string(REGEX REPLACE "(${line})" "\\1\n    " hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
  content_type_of("${name}" type)
  string(APPEND arrays "constexpr char kAsset${index}[] = {\n    ${bytes}'\\0'};\n")
  string(APPEND table "    {\"${name}\", \"${type}\", std::string_view(kAsset${index}, ${size})},\n")
  math(EXPR index "${index} + 1")
endforeach()

webhookd_write_generated(
"// Generated from console/public/ by console/embed_assets.cmake; do not edit.
#include \"console/assets.h\"

namespace webhookd {
namespace {

${arrays}
constexpr Asset kAssets[] = {
${table}};

}  // namespace

std::span<const Asset> UiAssets() { return kAssets; }

}  // namespace webhookd
")
