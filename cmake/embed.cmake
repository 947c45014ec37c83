# Files compiled into webhookd (migrations, SQL statements, the console, the OpenAPI
# document) are generated at build time by a script per kind of file; this is the one way
# they are wired in.
#
# webhookd_embed(OUTPUT <file> SCRIPT <generator.cmake> INPUTS <files...>
#                [DEFINES <VAR=value>...] COMMENT <text>)
#   runs SCRIPT with OUTPUT and DEFINES whenever an input or the script changes. The
#   script writes OUTPUT with webhookd_write_generated() (cmake/embed_write.cmake), which
#   leaves an unchanged file alone so nothing that depends on it rebuilds.
function(webhookd_embed)
  cmake_parse_arguments(E "" "OUTPUT;SCRIPT;COMMENT" "INPUTS;DEFINES" ${ARGN})
  set(defines "")
  foreach(define IN LISTS E_DEFINES)
    list(APPEND defines "-D${define}")
  endforeach()
  add_custom_command(
    OUTPUT "${E_OUTPUT}"
    COMMAND ${CMAKE_COMMAND} ${defines} "-DOUTPUT=${E_OUTPUT}"
            "-DWEBHOOKD_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake" -P "${E_SCRIPT}"
    DEPENDS ${E_INPUTS} "${E_SCRIPT}" "${PROJECT_SOURCE_DIR}/cmake/embed_write.cmake"
    COMMENT "${E_COMMENT}")
endfunction()
