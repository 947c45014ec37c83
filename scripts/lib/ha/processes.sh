# shellcheck shell=bash
# Sourced by scripts/ha (do not execute): finding, starting and killing the cluster's processes.
# shellcheck disable=SC2154  # the state's paths and settings are scripts/ha's

# Processes. Every process of the cluster names one of the state directory's paths as
# an argument of its own (postgres -D <data>, patroni <config>, etcd --data-dir <dir>),
# so ours are told from anyone else's (other clusters, other tests) by that exact
# argument and by the program, never by name alone.

# Succeeds when process $1 is one of the cluster's programs and has one of the paths
# $2... as an argument. No subprocess: it runs for every process on the machine.
pid_is_ours() {
  local pid=$1 arg path args=()
  shift
  mapfile -d '' -t args 2>/dev/null <"/proc/${pid}/cmdline" || return 1
  [[ ${#args[@]} -gt 1 ]] || return 1
  # sh: spawn's launcher between writing the pid file and exec'ing what it starts.
  case ${args[0]##*/} in
    sh | postgres | etcd | python3* | patroni | runuser | pg_basebackup | pg_rewind | pg_ctl) ;;
    *) return 1 ;;
  esac
  for arg in "${args[@]:1}"; do
    for path in "$@"; do
      if [[ ${arg} == "${path}" || ${arg} == *=${path} ]]; then
        return 0
      fi
    done
  done
  return 1
}

# Prints the pids of the processes that name one of the paths $1... (see pid_is_ours).
pids_with_path() {
  local p pid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [[ ${pid} == "$$" || ${pid} == "${BASHPID}" ]] && continue
    if pid_is_ours "${pid}" "$@"; then
      printf '%s\n' "${pid}"
    fi
  done
}

# Prints $1 and all its descendants.
pid_tree() {
  local todo=("$1") pid child
  while [[ ${#todo[@]} -gt 0 ]]; do
    pid=${todo[0]}
    todo=("${todo[@]:1}")
    printf '%s\n' "${pid}"
    while IFS= read -r child; do
      [[ -n ${child} ]] && todo+=("${child}")
    done < <(pgrep -P "${pid}" 2>/dev/null || true)
  done
}

# SIGKILLs the processes $1... and all their descendants. Each is stopped first so
# that it cannot start new children (a postmaster restarting its backends, Patroni
# restarting its postmaster) between the listing and the kill. Sets STOPPED_AT_US, the
# moment they froze: when "the machine died".
STOPPED_AT_US=""
kill_trees() {
  local pid all=()
  # shellcheck disable=SC2034  # read by failures.sh
  STOPPED_AT_US=$(now_us)
  for pid in "$@"; do kill -STOP "${pid}" 2>/dev/null || true; done
  for pid in "$@"; do
    mapfile -t -O "${#all[@]}" all < <(pid_tree "${pid}")
  done
  [[ ${#all[@]} -gt 0 ]] || return 0
  kill -KILL "${all[@]}" 2>/dev/null || true
}

# Prints the pid of node $1's Patroni if it runs.
patroni_pid() {
  local pid
  pid=$(head -n 1 "$(node_pidfile "$1")" 2>/dev/null || true)
  [[ ${pid} =~ ^[0-9]+$ ]] || return 1
  pid_is_ours "${pid}" "$(node_conf "$1")" || return 1
  printf '%s\n' "${pid}"
}

# Prints the pid of node $1's postmaster if it runs.
postmaster_pid() {
  local pid
  pid=$(head -n 1 "$(node_data "$1")/postmaster.pid" 2>/dev/null || true)
  [[ ${pid} =~ ^[0-9]+$ ]] || return 1
  pid_is_ours "${pid}" "$(node_data "$1")" || return 1
  printf '%s\n' "${pid}"
}

etcd_pid() {
  local pid
  pid=$(head -n 1 "${state}/etcd.pid" 2>/dev/null || true)
  [[ ${pid} =~ ^[0-9]+$ ]] || return 1
  pid_is_ours "${pid}" "$(etcd_data)" || return 1
  printf '%s\n' "${pid}"
}

# Waits at most $1 seconds until none of the pids $2... runs; fails if some still do.
wait_gone() {
  local deadline=$(($(now_us) + $1 * 1000000)) pid alive
  shift
  while :; do
    alive=0
    for pid in "$@"; do
      if kill -0 "${pid}" 2>/dev/null; then
        alive=1
        break
      fi
    done
    ((alive)) || return 0
    (($(now_us) < deadline)) || return 1
    sleep 0.1
  done
}

# Closes every file descriptor above 2 (of a subshell about to exec a daemon).
close_inherited_fds() {
  local fd
  for fd in /proc/"${BASHPID}"/fd/*; do
    fd=${fd##*/}
    if ((fd > 2)); then
      { exec {fd}>&-; } 2>/dev/null || true
    fi
  done
}

# spawn <user> <pidfile> <logfile> <program> [<argument>...]
# Starts the program in its own session, in the background, detached from our stdio
# and from any other descriptor of our caller (a caller reading our output must not
# wait for it), with a clean environment (no PG* variable of the caller reaches
# Patroni's connections), as <user> ("" = ourselves). The program writes its own pid
# to <pidfile>: sh writes $$ and execs it.
spawn() {
  local user=$1 pidfile=$2 logfile=$3
  shift 3
  # shellcheck disable=SC2016  # expanded by that sh
  local launch=(env -i "PATH=/usr/bin:/bin" "LANG=C.UTF-8" "HOME=${state}"
    sh -c 'echo $$ >"$0" && exec "$@"' "${pidfile}" "$@")
  rm -f "${pidfile}"
  if [[ -n ${user} ]]; then
    launch=(runuser -u "${user}" -- "${launch[@]}")
  fi
  (cd / && close_inherited_fds && exec setsid "${launch[@]}") </dev/null >>"${logfile}" 2>&1 &
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s ${pidfile} ]] && return 0
    sleep 0.1
  done
  die "could not start $*; see ${logfile}"
}
