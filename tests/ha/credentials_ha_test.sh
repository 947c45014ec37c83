#!/usr/bin/env bash
# What a local user on the database host can do to `scripts/ha up`'s cluster without its
# passwords: nothing. No connection without a password (TCP or unix socket), no change
# through Patroni's REST API, no read of etcd, no secret in a file others can read, no
# listener beyond loopback. Then the same with the passwords: each one works.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "${root}/scripts/lib/common.sh"

dir=$(mktemp -d /tmp/webhookd-ha.XXXXXX)
chmod 755 "${dir}" # Patroni runs as postgres when the test is root
export WEBHOOKD_HA_DIR=${dir}
ha() { timeout -k 5 300 "${root}/scripts/ha" "$@"; }
cleanup() {
  ha down >/dev/null 2>&1 || true
  rm -rf "${dir}"
}
trap cleanup EXIT

failures=0
check() {
  local what=$1
  shift
  if "$@"; then
    printf 'ok: %s\n' "${what}"
  else
    printf 'FAIL: %s\n' "${what}"
    failures=$((failures + 1))
  fi
}
refused() { ! "$@"; }

ha up >"${dir}.up.out" 2>&1 || {
  cat "${dir}.up.out"
  rm -f "${dir}.up.out"
  exit 1
}
printed=$(sed -n 's/^DATABASE_URL=//p' "${dir}.up.out")
rm -f "${dir}.up.out"
# shellcheck source=/dev/null
source "${dir}/ports.env"
# shellcheck source=/dev/null
source "${dir}/secrets.env"
psql_bin=$(pg_bin_dir)/psql
sql() { "${psql_bin}" -X -q -tA -w -v ON_ERROR_STOP=1 -d "$1" -c 'SELECT 1' >/dev/null 2>&1; }
api_status() { curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }
nopw() { (unset PGPASSFILE PGPASSWORD && "$@"); }
wrong_pw() { (unset PGPASSFILE && PGPASSWORD=wrong-password-0123456789 "$@"); }
pgpass() { (unset PGPASSWORD && PGPASSFILE=${dir}/pgpass "$@"); }

# Without a password.
check "TCP without a password is refused" \
  refused nopw sql "host=127.0.0.1 port=${NODE1_PG_PORT} user=webhookd dbname=postgres"
check "the unix socket without a password is refused" \
  refused nopw sql "host=${SOCKET_DIR} port=${NODE1_PG_PORT} user=webhookd dbname=postgres"
check "replicator without a password is refused" \
  refused nopw sql "host=127.0.0.1 port=${NODE1_PG_PORT} user=replicator dbname=postgres replication=true"
check "a wrong password is refused" \
  refused wrong_pw sql "host=127.0.0.1 port=${NODE1_PG_PORT} user=webhookd dbname=postgres"
check "the printed URL holds no password" [ "${printed}" = "${printed/${SUPERUSER_PASSWORD}/}" ]
check "Patroni's REST API refuses a restart without credentials" \
  [ "$(api_status -X POST -d '{}' "http://127.0.0.1:${NODE1_API_PORT}/restart")" = 401 ]
check "Patroni's REST API refuses a wrong password" \
  [ "$(api_status -X POST -u patroni:wrong "http://127.0.0.1:${NODE1_API_PORT}/reload")" = 401 ]
check "etcd refuses a read without credentials" \
  refused curl -fs --max-time 5 -X POST -d '{"key":"Lw==","range_end":"AA=="}' \
  "http://127.0.0.1:${ETCD_CLIENT_PORT}/v3/kv/range"
for f in ha.env secrets.env pgpass restapi.curl node1/patroni.yml node2/patroni.yml; do
  check "${f} is mode 600" [ "$(stat -c %a "${dir}/${f}")" = 600 ]
done
check "the state directory lets no one else list it" [ "$(($(stat -c %#a "${dir}") & 06))" = 0 ]
listening=$(ss -Hltn 2>/dev/null | awk '{print $4}' | grep -E ":(${NODE1_PG_PORT}|${NODE2_PG_PORT}|${NODE1_API_PORT}|${NODE2_API_PORT}|${ETCD_CLIENT_PORT}|${ETCD_PEER_PORT})$" || true)
check "every listener is on 127.0.0.1" [ -n "${listening}" ]
check "no listener beyond loopback" refused grep -qv '^127\.0\.0\.1:' <<<"${listening}"

# With them.
check "the pgpass file signs webhookd in" pgpass sql "${printed}"
url=$(sed -n 's/^DATABASE_URL="\(.*\)"$/\1/p' "${dir}/ha.env")
check "ha.env's DATABASE_URL signs in" nopw sql "${url}"
status=$(api_status -X POST -K "${dir}/restapi.curl" "http://127.0.0.1:${NODE1_API_PORT}/reload")
check "Patroni's REST API takes the credentials (reload: ${status})" [ "${status:0:1}" = 2 ]
check "scripts/ha status (patronictl) works" ha status

if ((failures > 0)); then
  printf '%d check(s) failed\n' "${failures}"
  exit 1
fi
echo "all checks passed"
