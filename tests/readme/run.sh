#!/usr/bin/env bash
# Runs the README's walkthrough as written, in order, against `webhookd all` on a fresh
# database, then the README's console steps in Chromium. The README is the fixture: every
# fenced block preceded by the line `<!-- walkthrough -->` is run, in one shell, from a
# directory laid out as the repository is after `scripts/run` (build/webhookd and
# .data/env). The only change made to the text: the receiver's port 9999 becomes a free
# one, so that two runs on one machine do not collide.
#
# The caller gives DATABASE_URL (a fresh database) and WEBHOOKD_BIN, as for
# console/tests/run.sh. Exits non-zero, naming what the walkthrough got wrong, when
#   - a command of a block fails (the blocks run under `set -euo pipefail`),
#   - an answer is a 5xx, or a 4xx other than the one 422 the README shows on purpose,
#   - a delivery the README promises does not reach the receiver.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "${here}/../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "${root}/scripts/lib/common.sh"
# shellcheck source=tests/lib/webhookd_under_test.sh
source "${root}/tests/lib/webhookd_under_test.sh"

command -v jq >/dev/null 2>&1 || ensure_packages jq
command -v python3 >/dev/null 2>&1 || ensure_packages python3
command -v openssl >/dev/null 2>&1 || ensure_packages openssl

start_webhookd readme

work=${tmpdir}/repository
mkdir -p "${work}/build" "${work}/.data"
ln -s "$(realpath "${WEBHOOKD_BIN}")" "${work}/build/webhookd"
write_shell_env "${work}/.data/env" "${base}" "${admin_key}" "${DATABASE_URL}"
receiver_port=$(_free_port)

walkthrough=${tmpdir}/walkthrough.sh
{
  echo 'set -euo pipefail'
  # Whatever the blocks start in the background (the receiver) ends with them.
  echo "trap 'kill \$(jobs -p) 2>/dev/null || true' EXIT"
  # Every answer's status, on stderr where the checks below read it; what curl prints
  # on stdout (and so what the blocks capture) is unchanged.
  printf '%s\n' "curl() { command curl -w '%{stderr}HTTP %{http_code} %{method} %{url_effective}\n' \"\$@\"; }"
  python3 - "${root}/README.md" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
blocks, i = 0, 0
while i < len(lines):
    if lines[i].strip() == "<!-- walkthrough -->":
        i += 1
        if i >= len(lines) or not lines[i].startswith("```sh"):
            sys.exit(f"README.md:{i + 1}: a walkthrough marker not followed by a ```sh block")
        i += 1
        print(f"# README.md:{i + 1}")
        while lines[i] != "```":
            print(lines[i])
            i += 1
        blocks += 1
    i += 1
if blocks < 5:
    sys.exit(f"README.md: only {blocks} walkthrough blocks found")
PY
} | sed -e "s/127\.0\.0\.1:9999/127.0.0.1:${receiver_port}/g" \
  -e "s/(\"127\.0\.0\.1\", 9999)/(\"127.0.0.1\", ${receiver_port})/" >"${walkthrough}"
grep -q "${receiver_port}" "${walkthrough}" || die "the walkthrough names no receiver on port 9999"

log "running the README's walkthrough ($(grep -c '^# README.md:' "${walkthrough}") blocks)"
out=${tmpdir}/walkthrough.out
err=${tmpdir}/walkthrough.err
status=0
(cd "${work}" && timeout 120 bash "${walkthrough}") >"${out}" 2>"${err}" || status=$?

failures=()
fail() { failures+=("$*"); }

# The README's console section in Debian's Chromium, driven as console/tests drives it
# (its npm packages, its launcher). Skipped, saying so, where Chromium cannot run.
console_steps() {
  local chromium_bin=${CHROMIUM:-/usr/bin/chromium}
  [[ -x ${chromium_bin} ]] || ensure_packages chromium || true
  if [[ ! -x ${chromium_bin} ]] || ! command -v node >/dev/null 2>&1; then
    echo "SKIP: the README's console steps: no Chromium or Node.js here"
    return 0
  fi
  if [[ ! -d ${root}/console/node_modules/playwright-core ]]; then
    (cd "${root}/console" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  fi
  WEBHOOKD_URL=${base} WEBHOOKD_ADMIN_KEY=${admin_key} PORTAL_URL=${portal_url} \
    RECEIVER=http://127.0.0.1:${receiver_port} timeout 300 node --test "${here}/console.test.mjs"
}

((status == 0)) || fail "the walkthrough stopped with status ${status}"
mapfile -t answers < <(grep '^HTTP ' "${err}" || true)
((${#answers[@]} >= 15)) || fail "only ${#answers[@]} requests were answered"
refused=0
for answer in "${answers[@]}"; do
  code=${answer#HTTP }
  code=${code%% *}
  case ${code} in
    2??) ;;
    422)
      refused=$((refused + 1))
      [[ ${answer} == *" POST ${base}/v1/events" ]] || fail "unexpected 422: ${answer}"
      ;;
    *) fail "unexpected answer: ${answer}" ;;
  esac
done
((refused == 1)) || fail "expected the one 422 the README shows on purpose, got ${refused}"
grep -q '"replayed":1' "${out}" || fail 'the bulk replay did not answer {"replayed":1}'
grep -q '"/payload/total"' "${out}" || fail "the schema's 422 does not name /payload/total"
grep -q '"outcome":"duplicate"' "${out}" || fail "the source's redelivery was not answered as a duplicate"

# What reached the receiver, by destination, as webhookd recorded it (the receiver's own
# lines share stdout with curl's answers, which end without a newline).
auth_header=${tmpdir}/auth-header
succeeded() {
  local id
  id=$(curl -fsS -H "@${auth_header}" "${base}/v1/destinations?limit=100" |
    jq -r --arg url "http://127.0.0.1:${receiver_port}$1" '.data[] | select(.url == $url) | .id')
  [[ -n ${id} ]] || {
    echo "none"
    return
  }
  curl -fsS -H "@${auth_header}" "${base}/v1/deliveries?destination_id=${id}&status=succeeded" |
    jq '.data | length'
}
# /hook takes order.* (the order and both refunds); /big's filter passes none of them;
# /acme has acme's event; /refunds (the rejecting destination, pointed elsewhere) the
# two replays; /github the one event GitHub's request and its redelivery made. Deliveries
# take a moment after their 202: wait up to 15 s for them.
expected=(/hook=3 /big=0 /acme=1 /refunds=2 /github=1)
for ((i = 0; i < 75; i++)); do
  wrong=()
  for want in "${expected[@]}"; do
    got=$(succeeded "${want%=*}")
    [[ ${got} == "${want#*=}" ]] || wrong+=("${want%=*}: ${got} deliveries succeeded, expected ${want#*=}")
  done
  ((${#wrong[@]} == 0)) && break
  sleep 0.2
done
for problem in "${wrong[@]}"; do fail "${problem}"; done

portal_url=$(grep -o '"url":"[^"]*/ui/#key=[^"]*"' "${out}" | head -n 1 | cut -d'"' -f4 || true)
[[ -n ${portal_url} ]] || fail "the walkthrough printed no portal link"

if ((${#failures[@]} == 0)); then
  log "the walkthrough ran as written; now the README's console steps"
  console_steps || fail "the README's console steps failed"
fi

if ((${#failures[@]} > 0)); then
  printf 'error: the README walkthrough: %s\n' "${failures[@]}" >&2
  echo "--- its output:" >&2
  cat "${out}" >&2
  echo "--- its errors and answers:" >&2
  cat "${err}" >&2
  echo "--- the end of webhookd's log:" >&2
  tail -n 20 "${server_log}" >&2
  exit 1
fi
log "the README's walkthrough passed"
