# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): failures, planned and not: kill, failover, start, switchover.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

# SIGKILLs node $1's Patroni, its postmaster and everything under them, and whatever
# else runs on its data directory or configuration (pg_rewind, a single-user crash
# recovery, pg_basebackup).
kill_node() {
  local node=$1 pids=()
  mapfile -t pids < <(
    patroni_pid "${node}" || true
    postmaster_pid "${node}" || true
    pids_with_path "$(node_conf "${node}")" "$(node_data "${node}")"
  )
  mapfile -t pids < <(printf '%s\n' "${pids[@]}" | awk 'NF && !seen[$0]++')
  if [[ ${#pids[@]} -eq 0 ]]; then
    log "${node}: nothing runs"
    return 0
  fi
  kill_trees "${pids[@]}"
  # SIGKILL takes effect at once; this only waits for the kernel to reap them.
  wait_gone 5 "${pids[@]}" || true
}

cmd_kill() {
  local node=$1
  kill_node "${node}"
  log "${node}: killed"
}

cmd_failover() {
  local old new="" t0 n
  old=$(leader) || die "no leader to fail over from (scripts/ha status)"
  t0=$(now_us)
  kill_node "${old}"
  t0=${STOPPED_AT_US:-${t0}}
  log "${old}: killed; waiting (at most ${FAILOVER_TIMEOUT} s) for another node to take writes"
  local deadline=$((t0 + FAILOVER_TIMEOUT * 1000000))
  while [[ -z ${new} ]]; do
    for n in "${NODES[@]}"; do
      [[ ${n} == "${old}" ]] && continue
      if node_writable "${n}"; then
        new=${n}
        break
      fi
    done
    [[ -n ${new} ]] && break
    if (($(now_us) >= deadline)); then
      echo "error: no node took over within ${FAILOVER_TIMEOUT} s; the cluster:" >&2
      members >&2 || true
      show_logs
      exit 1
    fi
    sleep 0.1
  done
  printf 'killed=%s leader=%s seconds=%s\n' "${old}" "${new}" "$(seconds_since "${t0}")"
}

# Succeeds when node $1 is the synchronous standby of the leader, or is itself the
# leader with no other node running (it came back alone).
rejoined() {
  local node=$1 l n
  l=$(leader) || return 1
  if [[ ${l} == "${node}" ]]; then
    for n in "${NODES[@]}"; do
      [[ ${n} != "${node}" ]] && patroni_pid "${n}" >/dev/null && return 1
    done
    return 0
  fi
  is_sync_standby_of "${l}" "${node}"
}

cmd_start() {
  local node=$1
  start_node "${node}"
  log "${node}: waiting (at most ${START_TIMEOUT} s) until it streams as synchronous standby"
  wait_until "${START_TIMEOUT}" "${node} rejoined as synchronous standby" rejoined "${node}" || exit 1
  log "${node}: rejoined ($(leader) leads)"
}

cmd_switchover() {
  local node=$1 l
  l=$(leader) || die "no leader (scripts/ha status)"
  if [[ ${l} == "${node}" ]]; then
    log "${node} is already the leader"
  else
    log "switchover from ${l} to ${node}"
    patronictl -c "$(node_conf "${node}")" switchover --leader "${l}" --candidate "${node}" --force >&2 ||
      die "patronictl switchover failed"
  fi
  wait_until "${START_TIMEOUT}" "${node} leading with a synchronous standby" healthy "${node}" || exit 1
  log "${node} leads"
}
