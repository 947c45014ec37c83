# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): each node's Patroni configuration, and starting a node.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

# Writes node $1's Patroni configuration.
write_node_conf() {
  local node=$1 pg_port api_port bindir conf initdb_locale extra_hba=""
  pg_port=$(node_port "${node}" PG)
  api_port=$(node_port "${node}" API)
  bindir=$(pg_bin_dir)
  conf=$(node_conf "${node}")
  if [[ ${HA_HOST} != 127.0.0.1 ]]; then
    # Bound beyond loopback (WEBHOOKD_HA_HOST): the hosts on this host's subnets too.
    extra_hba="    - host all all ${HA_HOST}/32 scram-sha-256
    - host replication replicator ${HA_HOST}/32 scram-sha-256
    - host all all samenet scram-sha-256
    - host replication replicator samenet scram-sha-256"
  fi
  initdb_locale="- no-locale"
  if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
    initdb_locale="- locale: C.UTF-8"
  fi
  (
    umask 077
    cat >"${conf}" <<EOF
# Patroni node ${node} of scripts/ha (written by \`scripts/ha up\`, mode 0600: the
# passwords are drawn for this cluster, or yours from WEBHOOKD_HA_*_PASSWORD).
scope: webhookd
name: ${node}

log:
  level: INFO

# patronictl reads this file too: it sends the REST API's credentials below.
restapi:
  listen: ${HA_HOST}:${api_port}
  connect_address: ${HA_HOST}:${api_port}
  # Asked for by every endpoint that changes something (switchover, restart, config);
  # the read-only status endpoints answer whoever reaches the address.
  authentication:
    username: patroni
    password: '${API_PASSWORD}'

etcd3:
  hosts: ${HA_HOST}:${ETCD_CLIENT_PORT}
  username: root
  password: '${ETCD_PASSWORD}'

$(bootstrap_conf "${initdb_locale}")

postgresql:
  listen: ${HA_HOST}:${pg_port}
  connect_address: ${HA_HOST}:${pg_port}
  data_dir: $(node_data "${node}")
  bin_dir: ${bindir}
  pgpass: $(node_dir "${node}")/pgpass
  # A new replica copies the leader at once instead of waiting for a spread checkpoint.
  basebackup:
    - checkpoint: fast
  # A node always comes back: rewound, or copied anew from the leader when the rewind
  # fails or its timeline diverged beyond what pg_rewind can mend.
  use_pg_rewind: true
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    # The project's tests and scripts connect as webhookd.
    superuser:
      username: ${WEBHOOKD_PG_SUPERUSER}
      password: '${SUPERUSER_PASSWORD}'
    replication:
      username: replicator
      password: '${REPLICATION_PASSWORD}'
    rewind:
      username: ${WEBHOOKD_PG_SUPERUSER}
      password: '${SUPERUSER_PASSWORD}'
  parameters:
    # Short: a unix socket path must stay under 108 bytes.
    unix_socket_directories: '${SOCKET_DIR}'
    password_encryption: scram-sha-256
  # A password on every connection, the unix socket's too: with trust, any local user
  # would be superuser, and a superuser runs shell commands (COPY ... TO PROGRAM).
  pg_hba:
    - local all all scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
    - host replication replicator 127.0.0.1/32 scram-sha-256
${extra_hba}
# No hardware watchdog on a test machine.
watchdog:
  mode: "off"

tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
EOF
  )
  if [[ ${EUID} -eq 0 ]]; then
    chown postgres:postgres "${conf}"
  fi
}

# The cluster-wide part of a node's patroni.yml, written once by the node that
# initializes the cluster; $1 is initdb's locale line.
bootstrap_conf() {
  local initdb_locale=$1
  cat <<EOF
bootstrap:
  # The cluster-wide (DCS) settings, written once by the node that initializes it.
  dcs:
    # Fast failover for tests: the leader key expires 10 s after the leader's last
    # heartbeat, and a node checks every second. Production keeps Patroni's defaults
    # (ttl 30, loop_wait 10, retry_timeout 10), which ride out short network and DCS
    # hiccups without a failover. Patroni wants loop_wait + 2 * retry_timeout <= ttl.
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    # A replica further behind than this (bytes of WAL) is not promoted.
    maximum_lag_on_failover: 1048576
    # Only a synchronous standby may be promoted, and the primary waits for it on
    # every commit: no acknowledged commit is lost on failover. Not strict: with the
    # standby gone the primary goes on alone (else every write would block).
    synchronous_mode: true
    synchronous_mode_strict: false
    synchronous_node_count: 1
    postgresql:
      # An old primary is rewound onto the new timeline instead of copied anew.
      use_pg_rewind: true
      # Replication slots keep the WAL a standby still needs.
      use_slots: true
      parameters:
        synchronous_commit: "on"
        wal_level: replica
        hot_standby: "on"
        # pg_rewind needs hint-bit changes in the WAL (or data checksums).
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 300
        shared_buffers: 128MB
  initdb:
    - encoding: UTF8
    ${initdb_locale}
    - data-checksums
EOF
}

# Starts node $1's Patroni in the background unless it runs.
start_node() {
  local node=$1 owner=""
  if patroni_pid "${node}" >/dev/null; then
    log "${node}: Patroni already runs"
    return 0
  fi
  [[ -f $(node_conf "${node}") ]] || die "${node} has no configuration in ${state}: run scripts/ha up"
  if [[ ${EUID} -eq 0 ]]; then
    owner=postgres
  fi
  log "${node}: starting Patroni (PostgreSQL on ${HA_HOST}:$(node_port "${node}" PG), REST API on ${HA_HOST}:$(node_port "${node}" API))"
  spawn "${owner}" "$(node_pidfile "${node}")" "$(node_log "${node}")" /usr/bin/patroni "$(node_conf "${node}")"
}
