# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): etcd, the cluster's configuration store.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

etcd_healthy() {
  curl -fsS --max-time 1 "http://${HA_HOST}:${ETCD_CLIENT_PORT}/health" 2>/dev/null | grep -q '"health":"true"'
}

start_etcd() {
  if etcd_pid >/dev/null; then
    return 0
  fi
  local dir peer client
  dir=$(etcd_data)
  client=http://${HA_HOST}:${ETCD_CLIENT_PORT}
  peer=http://${HA_HOST}:${ETCD_PEER_PORT}
  mkdir -p "${dir}" && chmod 700 "${dir}" || return 1
  log "etcd: starting (client ${client}, peer ${peer})"
  # A single member: the DCS itself is not what these tests fail over. Patroni's
  # etcd3 module talks to etcd's v3 JSON gateway on the client URL.
  spawn "" "${state}/etcd.pid" "${state}/etcd.log" /usr/bin/etcd \
    --name etcd0 --data-dir "${dir}" \
    --listen-client-urls "${client}" --advertise-client-urls "${client}" \
    --listen-peer-urls "${peer}" --initial-advertise-peer-urls "${peer}" \
    --initial-cluster "etcd0=${peer}" --initial-cluster-state new \
    --initial-cluster-token webhookd-ha --logger zap --log-outputs stderr
  local deadline=$(($(now_us) + 30 * 1000000))
  until etcd_healthy; do
    if ! etcd_pid >/dev/null; then
      grep -qis 'address already in use' "${state}/etcd.log" && return 2
      echo "error: etcd exited; the end of ${state}/etcd.log:" >&2
      tail -n 25 "${state}/etcd.log" >&2
      return 1
    fi
    if (($(now_us) >= deadline)); then
      echo "error: etcd is not healthy after 30 s; the end of ${state}/etcd.log:" >&2
      tail -n 25 "${state}/etcd.log" >&2
      return 1
    fi
    sleep 0.1
  done
  etcd_auth "${client}"
}

# Turns etcd's authentication on, with the user root (ETCD_PASSWORD): without it, anyone
# who reaches the client port could rewrite the cluster's configuration in the DCS (its
# pg_hba included) or drop the leader key. Through etcd's v3 JSON gateway, each body on
# stdin so that no password shows in ps.
etcd_auth() {
  local client=$1 path body
  while IFS='|' read -r path body; do
    if ! curl -fsS --max-time 5 -X POST "${client}/v3/auth/${path}" --data-binary @- <<<"${body}" >/dev/null; then
      echo "error: etcd: POST /v3/auth/${path} failed" >&2
      return 1
    fi
  done <<EOF
role/add|{"name":"root"}
user/add|{"name":"root","password":"${ETCD_PASSWORD}"}
user/grant|{"user":"root","role":"root"}
enable|{}
EOF
}

