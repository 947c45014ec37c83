# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): ports, passwords, ha.env, and `up`.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

# Prints a free port not among the arguments. Below the kernel's ephemeral range
# (ip_local_port_range): a port there may be the local end of some client's
# connection at any moment (the other tests' included), which a probe cannot see and
# which makes a later listen fail.
pick_port() {
  local lo=32768 port i p taken
  read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  if ((lo < 12000)); then
    _free_port
    return
  fi
  for ((i = 0; i < 200; i++)); do
    port=$((10000 + (RANDOM * 32768 + RANDOM) % (lo - 10000)))
    taken=0
    for p in "$@"; do
      [[ ${p} == "${port}" ]] && taken=1
    done
    ((taken)) && continue
    _port_in_use "${port}" && continue
    if command -v ss >/dev/null 2>&1 && [[ -n $(ss -Htan "( sport = :${port} )" 2>/dev/null) ]]; then
      continue
    fi
    printf '%s\n' "${port}"
    return 0
  done
  echo "error: found no free TCP port in 10000-$((lo - 1))" >&2
  return 1
}

random_password() {
  head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'
}

# password <name>: WEBHOOKD_HA_<name> when set (checked: it goes into a URL, YAML, JSON
# and a pgpass line as it is), else a drawn one.
password() {
  local var=WEBHOOKD_HA_$1 value
  value=${!var:-}
  if [[ -z ${value} ]]; then
    random_password
    return
  fi
  [[ ${value} =~ ^[A-Za-z0-9._~-]{16,128}$ ]] ||
    die "${var} must be 16-128 of A-Z a-z 0-9 . _ ~ - (it goes into URLs and configuration files as it is)"
  printf '%s\n' "${value}"
}

# Writes the passwords and the files made of them, each mode 0600 (umask 077).
write_secrets() {
  cat >"${secrets_file}" <<EOF
SUPERUSER_PASSWORD=${SUPERUSER_PASSWORD}
REPLICATION_PASSWORD=${REPLICATION_PASSWORD}
API_PASSWORD=${API_PASSWORD}
ETCD_PASSWORD=${ETCD_PASSWORD}
EOF
  printf '*:*:*:%s:%s\n' "${WEBHOOKD_PG_SUPERUSER}" "${SUPERUSER_PASSWORD}" >"${pgpass_file}"
  printf 'user = "patroni:%s"\n' "${API_PASSWORD}" >"${curl_conf}"
  chmod 600 "${secrets_file}" "${pgpass_file}" "${curl_conf}"
}

write_env() {
  local tmp=${env_file}.tmp
  cat >"${tmp}" <<EOF
DATABASE_URL="postgresql://${WEBHOOKD_PG_SUPERUSER}:${SUPERUSER_PASSWORD}@$(hosts)/postgres?${URL_PARAMS}"
PGPASSFILE="${pgpass_file}"
WEBHOOKD_HA_NODES="${NODES[*]}"
NODE1_PG_PORT="${NODE1_PG_PORT}"
NODE1_API_PORT="${NODE1_API_PORT}"
NODE2_PG_PORT="${NODE2_PG_PORT}"
NODE2_API_PORT="${NODE2_API_PORT}"
ETCD_CLIENT_PORT="${ETCD_CLIENT_PORT}"
ETCD_PEER_PORT="${ETCD_PEER_PORT}"
WEBHOOKD_HA_DIR="${state}"
PATRONICTL_CONFIG_FILE="$(node_conf node1)"
EOF
  chmod 600 "${tmp}"
  mv "${tmp}" "${env_file}"
}

URL_PARAMS="target_session_attrs=read-write&connect_timeout=2"

# Both nodes' host:port, for a multi-host URL.
hosts() {
  printf '%s:%s,%s:%s' "${HA_HOST}" "${NODE1_PG_PORT}" "${HA_HOST}" "${NODE2_PG_PORT}"
}

# Without the password, which stdout (a terminal, a test's log) must not show: libpq
# reads it from PGPASSFILE (ha.env names the file, and its DATABASE_URL holds it).
print_url() {
  log "webhookd's password: in ${pgpass_file} (export PGPASSFILE=${pgpass_file}), and in DATABASE_URL of ${env_file}"
  printf 'DATABASE_URL=postgresql://%s@%s/postgres?%s\n' "${WEBHOOKD_PG_SUPERUSER}" "$(hosts)" "${URL_PARAMS}"
}

# Succeeds when a log says a port was taken after all (bound by someone else between
# the choice and the listen).
port_taken() {
  grep -qis 'address already in use' "${state}/etcd.log" "$(node_log node1)" "$(node_log node2)"
}

# wait_up <deadline> <what> <command...>: runs the command every 0.2 s until it
# succeeds. Fails with 2 at once when a port was taken, with 1 when a started Patroni
# exited or at <deadline> (a now_us value).
wait_up() {
  local deadline=$1 what=$2 n
  shift 2
  until "$@"; do
    if port_taken; then
      return 2
    fi
    for n in "${NODES[@]}"; do
      if [[ -f $(node_pidfile "${n}") ]] && ! patroni_pid "${n}" >/dev/null; then
        echo "error: ${n}'s Patroni exited" >&2
        show_logs
        return 1
      fi
    done
    if (($(now_us) >= deadline)); then
      echo "error: not ${what} after ${UP_TIMEOUT} s; the cluster:" >&2
      members >&2 || echo "(no Patroni REST API answers)" >&2
      show_logs
      return 1
    fi
    sleep 0.2
  done
}

# Makes the state directory and prepares a new cluster in it: ports, configurations,
# etcd started. Exits on errors; sets PORT_TAKEN=1 when etcd found its port taken.
PORT_TAKEN=0
start_new() {
  mkdir -p "${state}"
  # The postgres user (when we are root) only passes through, to its node directories.
  if [[ ${EUID} -eq 0 ]]; then chmod 711 "${state}"; else chmod 700 "${state}"; fi
  if [[ ${EUID} -eq 0 ]] && ! runuser -u postgres -- test -x "${state}"; then
    # PostgreSQL runs as postgres: it must reach its directories.
    log "making $(dirname "${state}") searchable for the postgres user (chmod 755)"
    chmod 755 "$(dirname "${state}")"
    runuser -u postgres -- test -x "${state}" ||
      die "the postgres user cannot reach ${state}; make its parent directories world-searchable (chmod o+x) or set WEBHOOKD_HA_DIR elsewhere"
  fi

  # Ports, the socket directory and the passwords, kept for the other commands.
  local ports=() port var
  for var in ETCD_CLIENT_PORT ETCD_PEER_PORT NODE1_PG_PORT NODE1_API_PORT NODE2_PG_PORT NODE2_API_PORT; do
    port=$(pick_port "${ports[@]}") || exit 1
    ports+=("${port}")
    printf -v "${var}" '%s' "${port}"
  done
  SOCKET_DIR=${state}/sock
  if ((${#SOCKET_DIR} > 70)); then
    SOCKET_DIR=$(mktemp -d /tmp/webhookd-ha.XXXXXX)
  fi
  _pg_mkdir "${SOCKET_DIR}"
  SUPERUSER_PASSWORD=$(password SUPERUSER_PASSWORD) || exit 1
  REPLICATION_PASSWORD=$(password REPLICATION_PASSWORD) || exit 1
  API_PASSWORD=$(password API_PASSWORD) || exit 1
  ETCD_PASSWORD=$(password ETCD_PASSWORD) || exit 1
  write_secrets
  cat >"${ports_file}" <<EOF
HA_HOST=${HA_HOST}
ETCD_CLIENT_PORT=${ETCD_CLIENT_PORT}
ETCD_PEER_PORT=${ETCD_PEER_PORT}
NODE1_PG_PORT=${NODE1_PG_PORT}
NODE1_API_PORT=${NODE1_API_PORT}
NODE2_PG_PORT=${NODE2_PG_PORT}
NODE2_API_PORT=${NODE2_API_PORT}
SOCKET_DIR=$(printf '%q' "${SOCKET_DIR}")
EOF

  local n status=0
  start_etcd || status=$?
  case ${status} in
    0) ;;
    2)
      PORT_TAKEN=1
      return 0
      ;;
    *) exit 1 ;;
  esac
  for n in "${NODES[@]}"; do
    _pg_mkdir "$(node_dir "${n}")"
    write_node_conf "${n}"
    : >>"$(node_log "${n}")"
  done
}

cmd_up() {
  # It is also the address clients are told to connect to: one address, not a wildcard.
  [[ ${HA_HOST} =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ && ${HA_HOST} != 0.0.0.0 ]] ||
    die "WEBHOOKD_HA_HOST must be one IPv4 address of this host (not 0.0.0.0), not '${HA_HOST}'"
  local var
  for var in SUPERUSER_PASSWORD REPLICATION_PASSWORD API_PASSWORD ETCD_PASSWORD; do
    password "${var}" >/dev/null || exit 1
  done
  # shellcheck disable=SC2119  # packages beyond the project's own
  ensure_packages patroni etcd-server
  [[ -x /usr/bin/patroni && -x /usr/bin/etcd && -x ${PY} ]] ||
    die "patroni, etcd or python3 missing under /usr/bin (Debian packages patroni, etcd-server)"
  pg_bin_dir >/dev/null || exit 1

  # A cluster already running here is reused; whatever a failed or killed run left
  # is cleared away.
  if [[ -f ${env_file} ]] && load_ports && etcd_pid >/dev/null; then
    log "a cluster is already up in ${state}: reusing it"
    local n
    for n in "${NODES[@]}"; do start_node "${n}"; done
    wait_until "${UP_TIMEOUT}" "healthy (a leader and its synchronous standby)" healthy || exit 1
    print_url
    return 0
  fi
  if [[ -e ${state} ]]; then
    log "clearing what a previous run left in ${state}"
    cmd_down quiet
  fi

  local start_us attempt status deadline
  start_us=$(now_us)
  for attempt in 1 2 3; do
    status=0
    PORT_TAKEN=0
    deadline=$(($(now_us) + UP_TIMEOUT * 1000000))
    start_new
    if ((PORT_TAKEN)); then
      status=2
    else
      # node1 first, so that it is always the first leader (what docs and demos
      # expect); node2 is then copied from it.
      log "waiting (at most ${UP_TIMEOUT} s in all) for node1 to lead, then for node2 as its synchronous standby"
      start_node node1
      wait_up "${deadline}" "node1 leading" is_primary_api node1 || status=$?
      if ((status == 0)); then
        start_node node2
        wait_up "${deadline}" "node1 leading with node2 as synchronous standby" healthy node1 || status=$?
      fi
    fi
    ((status == 0)) && break
    # A failed cluster is left for inspection (scripts/ha down clears it away).
    ((status == 2 && attempt < 3)) || exit 1
    log "a port was taken by someone else meanwhile: starting again on other ports"
    cmd_down quiet
  done
  write_env
  local l
  l=$(leader)
  log "up in $(seconds_since "${start_us}") s: leader ${l}; ${env_file}"
  print_url
}
