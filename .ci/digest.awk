# Reads scripts/test's output and prints what failed, short enough to survive a log that
# keeps only its tail: each failed ctest test's name, the lines of its output that say why
# (a gtest failure and the lines after it, sanitizer reports), and every "error:" line.
function emit(line) {
  gsub(/\.\.\.\.+/, " ... ", line)
  if (length(line) > 240) line = substr(line, 1, 240) " [cut]"
  print line
}
/^ *Start +[0-9]+: / || /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / { in_failed = 0; after = 0 }
/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: .*(\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Failed +[0-9.]+ sec)/ {
  in_failed = 1; shown = 0; emit("FAILED: " $0); next
}
in_failed && shown < 30 {
  if (/: Failure$|Sanitizer|runtime error|terminate called|what\(\)/) after = 8
  if (after > 0 || /\[  FAILED  \]|SUMMARY/) { after--; shown++; emit("  " $0) }
  next
}
/^error: |^not ok / { emit($0) }
