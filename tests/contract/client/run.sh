#!/usr/bin/env bash
# Generates a TypeScript client from docs/openapi.json (openapi-typescript + openapi-fetch),
# type-checks the test that uses it, and runs it against a webhookd started here. Exits
# with the test's status. The caller gives DATABASE_URL (a fresh database) and WEBHOOKD_BIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "${here}/../../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "${root}/scripts/lib/common.sh"
command -v node >/dev/null 2>&1 || die "node is not installed"

cd "${here}"
if [[ ! -d node_modules/openapi-fetch ]]; then
  log "installing the generated client's npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
log "generating the client from docs/openapi.json and type-checking its use"
rm -rf generated build
npm run -s generate >/dev/null
npx --no-install tsc -p tsconfig.json

# shellcheck source=tests/lib/webhookd_under_test.sh
source "${root}/tests/lib/webhookd_under_test.sh"
start_webhookd tsclient

log "running the generated client's test"
WEBHOOKD_URL=${base} WEBHOOKD_API_KEY=${admin_key} timeout 120 node --test build/client.test.js
