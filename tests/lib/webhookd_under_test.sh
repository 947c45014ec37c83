# shellcheck shell=bash
# Sourced by the Node.js suites' runners (console/tests/run.sh, tests/contract/client/run.sh):
# starts `webhookd all` against a fresh database for them, and stops it on exit.
#
# The caller gives DATABASE_URL (a fresh database) and WEBHOOKD_BIN; optionally
# WEBHOOKD_TEST_LOG_DIR (where webhookd's log goes). After start_webhookd NAME [VAR=value...]:
#   base        http://127.0.0.1:<port>
#   admin_key   the bootstrap admin key
#   tmpdir      a private directory, removed on exit
#   server_log  webhookd's log (webhookd-NAME.log, searched for secrets by scripts/test)
# shellcheck disable=SC2317  # cleanup runs from a trap

: "${DATABASE_URL:?set DATABASE_URL to a fresh database}"
: "${WEBHOOKD_BIN:?set WEBHOOKD_BIN to the webhookd binary}"
[[ -x ${WEBHOOKD_BIN} ]] || die "WEBHOOKD_BIN is not an executable: ${WEBHOOKD_BIN}"

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/webhookd-suite.XXXXXX")
pid=""

_stop_webhookd() {
  local status=$?
  trap - EXIT INT TERM HUP
  if [[ -n ${pid} ]] && kill -0 "${pid}" 2>/dev/null; then
    kill -TERM "${pid}" 2>/dev/null || true
    local i
    for ((i = 0; i < 150; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "${pid}" 2>/dev/null; then
      echo "error: webhookd did not stop within 15 s of SIGTERM; killing it" >&2
      kill -KILL "${pid}" 2>/dev/null || true
      status=1
    fi
    wait "${pid}" 2>/dev/null || true
  fi
  rm -rf "${tmpdir}"
  exit "${status}"
}
trap _stop_webhookd EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# start_webhookd NAME [VAR=value...]: migrates, starts `webhookd all` on a free loopback
# port with private destinations allowed and a fresh admin key, and waits (at most 30 s)
# until /healthz answers and the key works.
start_webhookd() {
  local name=$1 log_dir port i ready=""
  shift
  log_dir=${WEBHOOKD_TEST_LOG_DIR:-${tmpdir}}
  mkdir -p "${log_dir}"
  server_log=${log_dir}/webhookd-${name}.log
  "${WEBHOOKD_BIN}" migrate >"${tmpdir}/migrate.log" 2>&1 || {
    cat "${tmpdir}/migrate.log" >&2
    die "webhookd migrate failed"
  }
  admin_key=whk_${name}_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  # The key goes to curl in a file, never on a command line.
  local auth_header=${tmpdir}/auth-header
  (umask 077 && printf 'Authorization: Bearer %s\n' "${admin_key}" >"${auth_header}")
  # A free port can be taken by another process before webhookd binds it: try another.
  local attempt
  for ((attempt = 1; attempt <= 5 && !ready; attempt++)); do
    port=$(_free_port)
    base=http://127.0.0.1:${port}
    log "starting webhookd all on ${base}"
    env WEBHOOKD_ADDR="127.0.0.1:${port}" WEBHOOKD_PUBLIC_URL="${base}" \
      WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS=true WEBHOOKD_BOOTSTRAP_ADMIN_KEY="${admin_key}" \
      WEBHOOKD_WORKER_ADDR= "$@" "${WEBHOOKD_BIN}" all >"${server_log}" 2>&1 &
    pid=$!
    for ((i = 0; i < 150; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      if curl -fsS -o /dev/null --max-time 2 "${base}/healthz" 2>/dev/null &&
        curl -fsS -o /dev/null --max-time 2 -H "@${auth_header}" "${base}/v1/admin/stats" 2>/dev/null; then
        ready=1
        break
      fi
      sleep 0.2
    done
    [[ -n ${ready} ]] && break
    kill -0 "${pid}" 2>/dev/null && break  # running but not ready: not a port clash
    grep -q 'cannot listen on' "${server_log}" || break
  done
  if [[ -z ${ready} ]]; then
    echo "error: webhookd did not become ready on ${base}; the end of its log:" >&2
    tail -n 30 "${server_log}" >&2
    exit 1
  fi
}
