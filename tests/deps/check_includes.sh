#!/usr/bin/env bash
# The dependency gate: every #include "room/..." of a room's sources must name a room it
# may depend on (docs/architecture.md, "The pieces"). Run by ctest as include_rooms_test.
#
#   tests/deps/check_includes.sh SOURCE_DIR
#
# Prints every forbidden include as file:line and exits 1 when there is one.
set -euo pipefail
cd "${1:?usage: check_includes.sh SOURCE_DIR}"

# room: the rooms it may include, lowest floor first. Its own room is always allowed.
declare -A allowed=(
  [base]=""
  [net]="base"
  [core]="base"
  [store]="base core"
  [store/pg]="base core store"
  [console]=""
  [server]="base core net store trace console"
  [worker]="base core net store trace"
  [trace]="base core"
  [client]="base core net"
  [cmd/webhookd]="base core net store store/pg server worker client trace"
)

# The room an include path or a file belongs to.
room_of() {
  case $1 in
    store/pg/*) echo store/pg ;;
    cmd/webhookd/*) echo cmd/webhookd ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

bad=0
for room in "${!allowed[@]}"; do
  for file in $(find "${room}" -maxdepth 1 -type f \( -name '*.cc' -o -name '*.h' \) | sort); do
    while IFS=: read -r line include; do
      target=$(room_of "${include}")
      [[ -z ${target} || ${target} == "${room}" ]] && continue
      [[ ${target} == tests ]] && { echo "${file}:${line}: product code includes a test header: ${include}"; bad=1; continue; }
      [[ -v allowed[${target}] ]] || continue # not a room (a generated or third-party path)
      if [[ " ${allowed[${room}]} " != *" ${target} "* ]]; then
        echo "${file}:${line}: ${room} may not include ${target}: ${include}"
        bad=1
      fi
    done < <(grep -n '^#include "' "${file}" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
  done
done
if ((bad)); then
  echo "error: includes that break the rooms' floors (see docs/architecture.md)" >&2
  exit 1
fi
echo "every include stays within its room's floors"
