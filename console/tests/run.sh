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
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "${here}/../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "${root}/scripts/lib/common.sh"

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

cd "${here}/.."
if [[ ! -d node_modules/playwright-core ]]; then
  log "installing the test's npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi

if ! timeout 90 node --input-type=module \
  -e "import { launchChromium } from './tests/browser.mjs'; const b = await launchChromium(); await b.close();" \
  >/dev/null 2>&1; then
  skip "Chromium (${chromium_bin}) does not start headless here"
fi

# shellcheck source=tests/lib/webhookd_under_test.sh
source "${root}/tests/lib/webhookd_under_test.sh"
start_webhookd browser WEBHOOKD_RETRY_SCHEDULE=100ms,100ms WEBHOOKD_UI=true

publisher_key=$("${WEBHOOKD_BIN}" keys create --role publisher --name browser-test 2>/dev/null | tail -n 1) || publisher_key=""

log "running the browser tests"
status=0
WEBHOOKD_URL=${base} \
  WEBHOOKD_ADMIN_KEY=${admin_key} \
  WEBHOOKD_PUBLISHER_KEY=${publisher_key} \
  SCREENSHOT_DIR=${SCREENSHOT_DIR:-${tmpdir}/screenshots} \
  timeout 600 node --test tests/console.test.mjs || status=$?
if ((status != 0)); then
  echo "error: browser tests failed (exit ${status}); the end of webhookd's log:" >&2
  tail -n 20 "${server_log}" >&2
fi
exit "${status}"
