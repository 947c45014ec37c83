# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): the state directory's paths and ports.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

node_dir() { printf '%s/%s\n' "${state}" "$1"; }
node_conf() { printf '%s/%s/patroni.yml\n' "${state}" "$1"; }
node_data() { printf '%s/%s/data\n' "${state}" "$1"; }
node_log() { printf '%s/%s.log\n' "${state}" "$1"; }
node_pidfile() { printf '%s/%s/patroni.pid\n' "${state}" "$1"; }
etcd_data() { printf '%s/etcd\n' "${state}"; }

# NODE1_PG_PORT etc. from the port file; prints the port of node $1, kind $2 (PG|API).
node_port() {
  local var
  var=${1^^}_${2}_PORT
  printf '%s\n' "${!var:?no ${var} in ${ports_file}}"
}

is_node() {
  local n
  for n in "${NODES[@]}"; do
    [[ $1 == "${n}" ]] && return 0
  done
  return 1
}

load_ports() {
  [[ -f ${ports_file} ]] || return 1
  # shellcheck source=/dev/null
  source "${ports_file}"
  # shellcheck source=/dev/null
  [[ ! -f ${secrets_file} ]] || source "${secrets_file}"
}

now_us() { printf '%s\n' "${EPOCHREALTIME//[!0-9]/}"; }
# Prints the seconds since the now_us value $1, to the hundredth.
seconds_since() { awk -v d="$(($(now_us) - $1))" 'BEGIN { printf "%.2f", d / 1e6 }'; }
