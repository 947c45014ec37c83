# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): the cluster's state, from Patroni's REST API and PostgreSQL.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

# Cluster state, from Patroni's REST API and PostgreSQL itself.

# Prints "name role state" for each member, as the first node whose REST API answers
# sees the cluster (GET /cluster).
members() {
  local n json
  for n in "${NODES[@]}"; do
    json=$(api_curl "${n}" /cluster) || continue
    "${PY}" -c '
import json, sys
for m in json.load(sys.stdin).get("members", []):
    print(m.get("name", ""), m.get("role", ""), m.get("state", ""))
' <<<"${json}" && return 0
  done
  return 1
}

# api_curl <node> <path>: GET from the node's Patroni REST API with the API's
# credentials, from a 0600 file (a password on curl's command line would show in ps).
api_curl() {
  curl -fsS --max-time 2 -K "${curl_conf}" "http://${HA_HOST}:$(node_port "$1" API)$2" 2>/dev/null
}

# Succeeds when node $1 runs as the primary and holds the leader key (GET /primary).
is_primary_api() {
  api_curl "$1" /primary >/dev/null
}

# Prints the node that runs as primary; fails if none does.
leader() {
  local n
  for n in "${NODES[@]}"; do
    if is_primary_api "${n}"; then
      printf '%s\n' "${n}"
      return 0
    fi
  done
  return 1
}

# Runs SQL $2 on node $1 as webhookd over TCP; prints the unaligned result.
node_sql() {
  PGPASSFILE=${pgpass_file} "$(pg_bin_dir)/psql" -X -q -tA -v ON_ERROR_STOP=1 \
    -d "host=${HA_HOST} port=$(node_port "$1" PG) user=${WEBHOOKD_PG_SUPERUSER} dbname=postgres connect_timeout=1" \
    -c "$2" 2>/dev/null
}

# Succeeds when node $1's PostgreSQL takes writes: out of recovery, not read-only.
node_writable() {
  [[ $(node_sql "$1" "SELECT pg_is_in_recovery()::text || ' ' || current_setting('transaction_read_only')" || true) == "false off" ]]
}

# Succeeds when node $2 is the streaming synchronous standby of leader $1: Patroni
# says sync_standby (its state "running", or "streaming" in newer Patroni) and the
# leader's pg_stat_replication has it streaming with sync_state sync.
is_sync_standby_of() {
  local leader=$1 node=$2 m role st
  m=$(members | awk -v n="${node}" '$1 == n { print $2, $3 }') || return 1
  read -r role st <<<"${m}" || true
  [[ ${role} == sync_standby && (${st} == running || ${st} == streaming) ]] || return 1
  [[ $(node_sql "${leader}" "SELECT count(*) FROM pg_stat_replication
        WHERE application_name = '${node}' AND state = 'streaming' AND sync_state = 'sync'" || true) == 1 ]]
}

# Succeeds when a node is primary and every other node is its synchronous standby;
# with $1, that node must be the leader.
healthy() {
  local want=${1:-} l n
  l=$(leader) || return 1
  [[ -z ${want} || ${l} == "${want}" ]] || return 1
  node_writable "${l}" || return 1
  for n in "${NODES[@]}"; do
    [[ ${n} == "${l}" ]] && continue
    is_sync_standby_of "${l}" "${n}" || return 1
  done
}

# Prints the end of every log, for a failure.
show_logs() {
  local f
  for f in "${state}/etcd.log" "$(node_log node1)" "$(node_log node2)"; do
    [[ -f ${f} ]] || continue
    printf -- '--- the end of %s\n' "${f}" >&2
    tail -n 25 "${f}" >&2
  done
}

# wait_until <seconds> <what> <command...>: runs the command every 0.2 s until it
# succeeds; after <seconds>, prints the cluster's state and logs and fails.
wait_until() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$(($(now_us) + seconds * 1000000))
  until "$@"; do
    if (($(now_us) >= deadline)); then
      printf 'error: not %s after %s s; the cluster:\n' "${what}" "${seconds}" >&2
      members >&2 || echo "(no Patroni REST API answers)" >&2
      show_logs
      return 1
    fi
    sleep 0.2
  done
}
