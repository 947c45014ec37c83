# shellcheck shell=bash
# Helpers shared by scripts/run and scripts/test. Source it; do not execute it.
#
#   ensure_packages [extra-package...]   install missing Debian packages (apt)
#   pg_bin_dir                           print /usr/lib/postgresql/<newest>/bin
#   pg_start <datadir> [<logfile>] [<setting=value>...]
#                                        initdb if needed, start on 127.0.0.1 at a
#                                        free port; exports PGHOST and PGPORT
#   pg_stop <datadir>                    fast shutdown; quiet if not running
#   pg_createdb <name>                   create a database unless it exists
#   write_shell_env <file> <api> <key> <database_url>
#                                        the variables the README's examples use
#
# PostgreSQL refuses to run as root, so when EUID is 0 the cluster belongs to the
# `postgres` system user and its server programs run through runuser.

# The packages needed to build, test and run webhookd on Debian 12.
WEBHOOKD_PACKAGES=(
  build-essential cmake pkg-config g++
  libpqxx-dev libcpp-httplib-dev libboost-dev nlohmann-json3-dev libssl-dev libcurl4-openssl-dev
  libre2-dev  # linear-time regular expressions for JSON Schema patterns
  libhiredis-dev redis-server  # Redis Streams destinations, and a real Redis in the tests
  librabbitmq-dev rabbitmq-server  # AMQP destinations, and a real RabbitMQ in the tests
  libnats-dev nats-server  # NATS JetStream destinations, and a real NATS server in the tests
  librdkafka-dev  # Kafka destinations; its mock cluster stands in for Kafka in the tests
  tinyproxy  # the egress tests run deliveries through a real forward proxy
  libgtest-dev libgmock-dev
  postgresql postgresql-contrib
  curl ca-certificates
  jq python3  # the README's walkthrough reads ids with jq and runs a receiver in Python
)

# The superuser of clusters made by pg_start (trust auth, so no password).
WEBHOOKD_PG_SUPERUSER=webhookd

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Runs its arguments as root: directly when root, else through sudo.
as_root() {
  if [[ ${EUID} -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root to run: $* (and sudo is not installed)"
  fi
}

# Installs every package of WEBHOOKD_PACKAGES plus the arguments that is missing.
# Set WEBHOOKD_SKIP_APT=1 to skip the check (e.g. on a non-Debian machine with
# everything already present).
ensure_packages() {
  if [[ -n ${WEBHOOKD_SKIP_APT:-} ]]; then
    return 0
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "dpkg not found: not a Debian system, skipping the package check"
    return 0
  fi
  local pkg status missing=()
  for pkg in "${WEBHOOKD_PACKAGES[@]}" "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "${pkg}" 2>/dev/null || true)
    if [[ ${status} != installed ]]; then
      missing+=("${pkg}")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    return 0
  fi
  log "installing missing packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Node.js and npm: the build bundles the console's charting library from npm
# (console/vendor, installed by CMake). Only when npm is missing: a Node.js from another
# source (NodeSource's package carries npm) conflicts with Debian's npm package.
ensure_npm() {
  if ! command -v npm >/dev/null 2>&1; then
    ensure_packages nodejs npm
  fi
}

# Prints the bin directory of the newest PostgreSQL installed from Debian packages.
pg_bin_dir() {
  local dir best="" best_version=-1 version
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x ${dir}/initdb && -x ${dir}/pg_ctl ]] || continue
    version=${dir%/bin}
    version=${version##*/}
    version=${version%%.*}
    [[ ${version} =~ ^[0-9]+$ ]] || continue
    if ((version > best_version)); then
      best_version=${version}
      best=${dir}
    fi
  done
  if [[ -z ${best} ]]; then
    echo "error: no PostgreSQL server found under /usr/lib/postgresql (install the postgresql package)" >&2
    return 1
  fi
  printf '%s\n' "${best}"
}

# The user that owns and runs clusters: postgres when we are root, else ourselves.
pg_os_user() {
  if [[ ${EUID} -eq 0 ]]; then
    printf 'postgres\n'
  else
    id -un
  fi
}

# Runs a PostgreSQL server program as the cluster's owner, from / so that an
# unreadable working directory does not bother it.
_pg_as_owner() {
  if [[ ${EUID} -eq 0 ]]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# Prints the absolute form of a path that may not exist yet.
_abs_path() {
  local path=$1
  if [[ ${path} != /* ]]; then
    path=${PWD}/${path}
  fi
  # Tidy "/./" and trailing slashes; ".." is left to the kernel.
  path=${path//\/.\//\/}
  while [[ ${path} == */ && ${path} != / ]]; do path=${path%/}; done
  printf '%s\n' "${path}"
}

# Creates a directory owned by the cluster's owner.
_pg_mkdir() {
  mkdir -p "$1"
  if [[ ${EUID} -eq 0 ]]; then
    chown postgres:postgres "$1"
  fi
  chmod 700 "$1"
}

# Succeeds when something on 127.0.0.1 accepts connections on port $1.
_port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Prints a random port in 20000-60000 that nothing listens on.
_free_port() {
  local port i
  for ((i = 0; i < 100; i++)); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40001))
    if ! _port_in_use "${port}"; then
      printf '%s\n' "${port}"
      return 0
    fi
  done
  echo "error: found no free TCP port in 20000-60000" >&2
  return 1
}

# pg_start <datadir> [<logfile>] [<setting=value>...]
#
# Creates the cluster in <datadir> unless <datadir>/PG_VERSION exists (superuser
# `webhookd`, trust authentication, UTF8), then starts it listening on 127.0.0.1 at
# a free port and on a unix socket in <datadir>/../socket. Extra arguments are
# server settings (e.g. fsync=off). Exports PGHOST=127.0.0.1 and PGPORT, and
# returns once pg_isready answers. The log goes to <logfile>, by default
# <datadir>/../postgres.log. If the cluster is already running, it is reused.
pg_start() {
  [[ $# -ge 1 ]] || die "usage: pg_start <datadir> [<logfile>] [<setting=value>...]"
  local datadir logfile bindir base socketdir
  datadir=$(_abs_path "$1")
  shift
  base=$(dirname "${datadir}")
  logfile=${base}/postgres.log
  if [[ $# -ge 1 && $1 != *=* ]]; then
    logfile=$(_abs_path "$1")
    shift
  fi
  local settings=("$@")
  bindir=$(pg_bin_dir) || return 1

  # Unix socket paths are limited to 107 bytes; fall back to a short private dir.
  socketdir=${base}/socket
  if ((${#socketdir} > 80)); then
    socketdir=$(mktemp -d /tmp/webhookd-pgsock.XXXXXX)
  fi

  mkdir -p "${base}"
  _pg_mkdir "${socketdir}"
  if [[ ${EUID} -eq 0 ]]; then
    if ! runuser -u postgres -- test -x "${base}"; then
      echo "error: the postgres user cannot reach ${base}; make its parent directories world-searchable (chmod o+x) or move the checkout" >&2
      return 1
    fi
  fi
  touch "${logfile}"
  if [[ ${EUID} -eq 0 ]]; then
    chown postgres:postgres "${logfile}"
  fi

  if [[ ! -f ${datadir}/PG_VERSION ]]; then
    _pg_mkdir "${datadir}"
    local locale_args=(--no-locale)
    if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
      locale_args=(--locale=C.UTF-8)
    fi
    if ! _pg_as_owner "${bindir}/initdb" -D "${datadir}" -U "${WEBHOOKD_PG_SUPERUSER}" \
      --auth=trust -E UTF8 "${locale_args[@]}" >"${base}/initdb.log" 2>&1; then
      echo "error: initdb failed; its output:" >&2
      cat "${base}/initdb.log" >&2
      return 1
    fi
  fi

  # A cluster left running (e.g. by a killed script) is reused on its own port.
  if _pg_as_owner "${bindir}/pg_ctl" status -D "${datadir}" >/dev/null 2>&1; then
    local running_port
    running_port=$(sed -n 4p "${datadir}/postmaster.pid" 2>/dev/null || true)
    if [[ ${running_port} =~ ^[0-9]+$ ]]; then
      export PGHOST=127.0.0.1 PGPORT=${running_port}
      _pg_wait_ready "${bindir}" "${logfile}" && return 0
    fi
    echo "error: a server is running on ${datadir} but does not answer; stop it with: pg_ctl stop -D ${datadir}" >&2
    return 1
  fi

  # Each setting is quoted for the shell through which pg_ctl starts postgres.
  local opts="" setting port attempt
  for setting in max_connections=200 shared_buffers=256MB \
    listen_addresses=127.0.0.1 "unix_socket_directories=${socketdir}" \
    "${settings[@]}"; do
    opts+=" -c $(printf '%q' "${setting}")"
  done

  for attempt in 1 2 3 4 5; do
    port=$(_free_port) || return 1
    if _pg_as_owner "${bindir}/pg_ctl" start -D "${datadir}" -l "${logfile}" -w -t 60 \
      -o "-c port=${port}${opts}" >/dev/null 2>&1; then
      export PGHOST=127.0.0.1 PGPORT=${port}
      _pg_wait_ready "${bindir}" "${logfile}"
      return
    fi
    # Most likely someone took the port between the probe and the bind: try another.
    if ((attempt < 5)); then
      sleep 0.2
    fi
  done
  echo "error: could not start PostgreSQL in ${datadir}; the end of ${logfile}:" >&2
  tail -n 30 "${logfile}" >&2
  return 1
}

# Waits (at most 30 s) until the server on PGHOST:PGPORT accepts connections.
_pg_wait_ready() {
  local bindir=$1 logfile=$2 i
  for ((i = 0; i < 60; i++)); do
    if "${bindir}/pg_isready" -q -h "${PGHOST}" -p "${PGPORT}" -t 1; then
      return 0
    fi
    sleep 0.5
  done
  echo "error: PostgreSQL on ${PGHOST}:${PGPORT} is not ready after 30 s; the end of ${logfile}:" >&2
  tail -n 30 "${logfile}" >&2
  return 1
}

# pg_stop <datadir>: stops the cluster (fast shutdown, then immediate if that hangs).
# Quiet and successful when it is not running or does not exist.
pg_stop() {
  [[ $# -eq 1 ]] || die "usage: pg_stop <datadir>"
  local datadir bindir
  datadir=$(_abs_path "$1")
  [[ -f ${datadir}/postmaster.pid ]] || return 0
  bindir=$(pg_bin_dir) || return 0
  if ! _pg_as_owner "${bindir}/pg_ctl" status -D "${datadir}" >/dev/null 2>&1; then
    return 0
  fi
  if ! _pg_as_owner "${bindir}/pg_ctl" stop -D "${datadir}" -m fast -w -t 60 >/dev/null 2>&1; then
    _pg_as_owner "${bindir}/pg_ctl" stop -D "${datadir}" -m immediate -w -t 30 >/dev/null 2>&1 || true
  fi
  return 0
}

# Runs psql as the cluster's superuser over TCP against database $1.
pg_psql() {
  local db=$1
  shift
  "$(pg_bin_dir)/psql" -X -q -v ON_ERROR_STOP=1 -h "${PGHOST:-127.0.0.1}" -p "${PGPORT:?PGPORT is not set: call pg_start first}" \
    -U "${WEBHOOKD_PG_SUPERUSER}" -d "${db}" "$@"
}

# pg_createdb <name>: creates the database unless it already exists.
pg_createdb() {
  [[ $# -eq 1 ]] || die "usage: pg_createdb <name>"
  local name=$1 exists
  exists=$(pg_psql postgres -tA -v name="${name}" \
    <<<"SELECT 1 FROM pg_database WHERE datname = :'name'") || return 1
  if [[ ${exists} != 1 ]]; then
    "$(pg_bin_dir)/createdb" -h "${PGHOST:-127.0.0.1}" -p "${PGPORT}" \
      -U "${WEBHOOKD_PG_SUPERUSER}" -E UTF8 -T template0 "${name}"
  fi
}

# write_shell_env <file> <api> <key> <database_url>: the lines a second shell sources to
# run the README's examples (API, KEY, DATABASE_URL), readable by this user alone: it
# holds the admin key.
write_shell_env() {
  [[ $# -eq 4 ]] || die "usage: write_shell_env <file> <api> <key> <database_url>"
  (
    umask 077
    printf '# Written by scripts/run: source %s in another shell.\n' "$1" >"$1.tmp"
    printf 'export API=%q\nexport KEY=%q\nexport DATABASE_URL=%q\n' "$2" "$3" "$4" >>"$1.tmp"
    mv "$1.tmp" "$1"
  )
}
