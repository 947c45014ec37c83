#!/usr/bin/env bash
# Regenerates tests/inbound/vectors.json with the providers' SDKs into a temporary file and
# fails when it differs from the committed one: the vectors inbound_verify_test checks are
# what make_vectors.mjs makes. Skipped (77) without node or `npm ci` in tests/inbound
# (scripts/test runs it).
set -euo pipefail
root=${1:?usage: check_vectors.sh SOURCE_DIR}
dir=${root}/tests/inbound
if ! command -v node >/dev/null 2>&1 || [[ ! -d ${dir}/node_modules/stripe ]]; then
  echo "skipped: needs node and \`npm ci\` in tests/inbound (scripts/test runs it)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "${out}"' EXIT
node "${dir}/make_vectors.mjs" "${out}"
if ! diff -u "${dir}/vectors.json" "${out}"; then
  echo "tests/inbound/vectors.json is not what make_vectors.mjs makes: regenerate and commit it" >&2
  exit 1
fi
