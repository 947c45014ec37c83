# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): stopping: `down`.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

cmd_down() {
  local quiet=${1:-} n pid pids=() paths=() existed=0
  [[ -e ${state} ]] && existed=1
  paths=("$(etcd_data)")
  for n in "${NODES[@]}"; do paths+=("$(node_conf "${n}")" "$(node_data "${n}")"); done
  load_ports 2>/dev/null || true

  # Patroni first: it stops its PostgreSQL (fast shutdown), and it needs etcd for that.
  for n in "${NODES[@]}"; do
    if pid=$(patroni_pid "${n}"); then
      pids+=("${pid}")
      kill -TERM "${pid}" 2>/dev/null || true
    fi
  done
  if [[ ${#pids[@]} -gt 0 ]]; then
    [[ -n ${quiet} ]] || log "stopping Patroni (${NODES[*]})"
    wait_gone "${STOP_TIMEOUT}" "${pids[@]}" || log "Patroni did not stop within ${STOP_TIMEOUT} s: killing it"
  fi
  # A postmaster left without its Patroni (after `kill` of Patroni alone, or a crash).
  pids=()
  for n in "${NODES[@]}"; do
    if pid=$(postmaster_pid "${n}"); then
      pids+=("${pid}")
      kill -INT "${pid}" 2>/dev/null || true # fast shutdown
    fi
  done
  if [[ ${#pids[@]} -gt 0 ]]; then
    wait_gone 15 "${pids[@]}" || true
  fi
  pids=()
  if pid=$(etcd_pid); then
    [[ -n ${quiet} ]] || log "stopping etcd"
    kill -TERM "${pid}" 2>/dev/null || true
    wait_gone 10 "${pid}" || true
  fi

  # Whatever is left of ours (found by its paths), with its children.
  mapfile -t pids < <(pids_with_path "${paths[@]}")
  if [[ ${#pids[@]} -gt 0 ]]; then
    log "killing what is left: ${pids[*]}"
    kill_trees "${pids[@]}"
    wait_gone 10 "${pids[@]}" || die "could not kill ${pids[*]}"
  fi
  # The small System V segment of a postmaster that was SIGKILLed outlives it.
  local line key id
  for n in "${NODES[@]}"; do
    line=$(sed -n 7p "$(node_data "${n}")/postmaster.pid" 2>/dev/null || true)
    read -r key id <<<"${line}" || true
    if [[ ${key} =~ ^[0-9]+$ && ${id} =~ ^[0-9]+$ ]] &&
      ipcs -m 2>/dev/null | awk -v k="$(printf '0x%08x' "${key}")" -v i="${id}" '$1 == k && $2 == i && $6 == 0 { f = 1 } END { exit !f }'; then
      ipcrm -m "${id}" 2>/dev/null || true
    fi
  done

  if [[ -n ${SOCKET_DIR:-} && ${SOCKET_DIR} == /tmp/webhookd-ha.* ]]; then
    rm -rf "${SOCKET_DIR}"
  fi
  rm -rf "${state}"
  if [[ -z ${quiet} ]]; then
    if ((existed)); then log "down (${state} removed)"; else log "nothing to stop in ${state}"; fi
  fi
}
