#!/usr/bin/env bash
# Runs the console's browser tests (console.test.mjs) in Debian's Chromium against a
# webhookd started here, then stops it. Exits with the tests' status.
#
# The caller gives:
#   DATABASE_URL     a fresh database (this script migrates it)
#   WEBHOOKD_BIN     the webhookd binary under test
# Optional:
#   SCREENSHOT_DIR        where the screenshots go (default: a temporary directory)
#   WEBHOOKD_TEST_LOG_DIR where webhookd's log goes (default: the temporary directory)
#
# When Chromium is missing and cannot be installed, or does not start, the tests are
# skipped: a SKIP line is printed and the exit status is 0.
# shellcheck disable=SC2317  # cleanup runs from a trap
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "${here}/../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "${root}/scripts/lib/common.sh"

: "${DATABASE_URL:?set DATABASE_URL to a fresh database}"
: "${WEBHOOKD_BIN:?set WEBHOOKD_BIN to the webhookd binary}"
[[ -x ${WEBHOOKD_BIN} ]] || die "WEBHOOKD_BIN is not an executable: ${WEBHOOKD_BIN}"
chromium_bin=${CHROMIUM:-/usr/bin/chromium}

skip() {
  printf 'SKIP: browser tests not run: %s\n' "$*"
  exit 0
}

command -v node >/dev/null 2>&1 || skip "node is not installed"
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= 20)) || skip "playwright-core needs Node.js 20 or newer (found $(node --version))"

if [[ ! -x ${chromium_bin} ]]; then
  ensure_packages chromium || true
fi
[[ -x ${chromium_bin} ]] || skip "Chromium is not installed at ${chromium_bin} (apt-get install chromium)"

cd "${here}"
if [[ ! -d node_modules/playwright-core ]]; then
  log "installing the test's npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi

if ! timeout 90 node --input-type=module \
  -e "import { launchChromium } from './browser.mjs'; const b = await launchChromium(); await b.close();" \
  >/dev/null 2>&1; then
  skip "Chromium (${chromium_bin}) does not start headless here"
fi

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/webhookd-browser.XXXXXX")
log_dir=${WEBHOOKD_TEST_LOG_DIR:-${tmpdir}}
mkdir -p "${log_dir}"
server_log=${log_dir}/webhookd-browser.log
pid=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  if [[ -n ${pid} ]] && kill -0 "${pid}" 2>/dev/null; then
    kill -TERM "${pid}" 2>/dev/null || true
    local i
    for ((i = 0; i < 150; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "${pid}" 2>/dev/null; then
      echo "error: webhookd did not stop within 15 s of SIGTERM; killing it" >&2
      kill -KILL "${pid}" 2>/dev/null || true
      status=1
    fi
    wait "${pid}" 2>/dev/null || true
  fi
  rm -rf "${tmpdir}"
  exit "${status}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

log "migrating the database"
"${WEBHOOKD_BIN}" migrate >"${tmpdir}/migrate.log" 2>&1 || {
  cat "${tmpdir}/migrate.log" >&2
  die "webhookd migrate failed"
}

port=$(_free_port)
admin_key=whk_browser_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
base=http://127.0.0.1:${port}

log "starting webhookd all on ${base}"
WEBHOOKD_ADDR=127.0.0.1:${port} \
  WEBHOOKD_PUBLIC_URL=${base} \
  WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS=true \
  WEBHOOKD_BOOTSTRAP_ADMIN_KEY=${admin_key} \
  WEBHOOKD_RETRY_SCHEDULE=100ms,100ms \
  WEBHOOKD_UI=true \
  "${WEBHOOKD_BIN}" all >"${server_log}" 2>&1 &
pid=$!

# Ready when /healthz answers and the bootstrap admin key (made in the background) works.
auth_header=${tmpdir}/auth-header
(umask 077 && printf 'Authorization: Bearer %s\n' "${admin_key}" >"${auth_header}")
ready=""
for ((i = 0; i < 150; i++)); do
  kill -0 "${pid}" 2>/dev/null || break
  if curl -fsS -o /dev/null --max-time 2 "${base}/healthz" 2>/dev/null &&
    curl -fsS -o /dev/null --max-time 2 -H "@${auth_header}" "${base}/v1/admin/stats" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.2
done
if [[ -z ${ready} ]]; then
  echo "error: webhookd did not become ready on ${base}; the end of its log:" >&2
  tail -n 30 "${server_log}" >&2
  exit 1
fi

publisher_key=$("${WEBHOOKD_BIN}" keys create --role publisher --name browser-test 2>/dev/null | tail -n 1) || publisher_key=""

log "running the browser tests"
status=0
WEBHOOKD_URL=${base} \
  WEBHOOKD_ADMIN_KEY=${admin_key} \
  WEBHOOKD_PUBLISHER_KEY=${publisher_key} \
  SCREENSHOT_DIR=${SCREENSHOT_DIR:-${tmpdir}/screenshots} \
  timeout 600 node --test console.test.mjs || status=$?
if ((status != 0)); then
  echo "error: browser tests failed (exit ${status}); the end of webhookd's log:" >&2
  tail -n 20 "${server_log}" >&2
fi
exit "${status}"
