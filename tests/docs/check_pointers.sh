#!/usr/bin/env bash
# shellcheck disable=SC2016  # the backticks below are the document's, not the shell's
# docs/architecture.md takes a reader from a rule to the file that holds it: every path it
# names in backticks must exist in the tree (a glob or a numbered prefix such as
# `migrations/0024` must match a file), and every SQL function it names as
# `webhookd.<name>` or `webhookd.<name>(…)` must be defined in store/pg/schema/. Prints
# each pointer that leads nowhere and exits 1 if there is one.
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
doc=${root}/docs/architecture.md
rooms='base|core|net|store|server|worker|cmd|migrations|docs|tests|scripts|bench|fuzz|trace|client|deploy'
broken=0
checked=0

while IFS= read -r token; do
  checked=$((checked + 1))
  # shellcheck disable=SC2206  # the pointer may be a glob: let it expand
  matches=(${root}/${token} ${root}/${token}*)
  found=0
  for m in "${matches[@]}"; do
    [[ -e ${m} ]] && found=1 && break
  done
  if ((!found)); then
    echo "docs/architecture.md: \`${token}\` names nothing in the tree"
    broken=1
  fi
done < <(grep -o '`[^` ]*`' "${doc}" | tr -d '`' | grep -E "^(${rooms})/" | sort -u)

while IFS= read -r name; do
  checked=$((checked + 1))
  if ! grep -qiE "FUNCTION webhookd\\.${name}\\(" "${root}"/store/pg/schema/*.sql; then
    echo "docs/architecture.md: \`webhookd.${name}\` is defined in no file of store/pg/schema/"
    broken=1
  fi
done < <(grep -o '`webhookd\.[a-z_]*\(([^`]*)\)\?`' "${doc}" | sed -E 's/^`webhookd\.([a-z_]+).*/\1/' | sort -u)

((checked > 20)) || {
  echo "docs/architecture.md: only ${checked} pointers found; is the document there?"
  exit 1
}
exit "${broken}"
