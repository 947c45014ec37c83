# For the generator scripts run by webhookd_embed() (cmake/embed.cmake).
#
# webhookd_write_generated(<content>): writes <content> to OUTPUT, replacing the file only
# when it changed.
function(webhookd_write_generated content)
  file(WRITE "${OUTPUT}.tmp" "${content}")
  file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
endfunction()
