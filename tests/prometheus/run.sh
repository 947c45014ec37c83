#!/usr/bin/env bash
# Checks deploy/prometheus and deploy/grafana against a live webhookd: promtool on the
# rules, their unit tests and the scrape config; promtool on what /metrics answers; then a
# real Prometheus scraping `webhookd all` (started here on a fresh database, with
# deliveries that succeed, fail and get refused) must load every rule, and have a series
# for every metric and label the dashboard and the rules use. Exits non-zero on any fault.
#
# The caller gives:
#   DATABASE_URL     a fresh database (this script migrates it)
#   WEBHOOKD_BIN     the webhookd binary under test
# Optional:
#   WEBHOOKD_TEST_LOG_DIR where webhookd's log goes (default: the temporary directory)
#
# When prometheus or promtool is missing and cannot be installed (Debian's `prometheus`
# package), the checks are skipped: a SKIP line is printed and the exit status is 0.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "${here}/../.." && pwd)
# shellcheck source=scripts/lib/common.sh
source "${root}/scripts/lib/common.sh"

alerts=${root}/deploy/prometheus/alerts.yml
dashboard=${root}/deploy/grafana/webhookd.json

# Metrics the dashboard and the rules may use although this webhookd does not export them
# (yet). Keep it short: a metric that only appears after some event belongs in the
# traffic below, which makes the event happen, not here.
allowed_missing=(
  # Tracing (OpenTelemetry) is being added; until it lands these counters do not exist.
  # Once they do, they are checked like any other metric (the list only excuses absence).
  webhookd_trace_spans_dropped_total
  webhookd_trace_spans_exported_total
)

skip() {
  printf 'SKIP: prometheus checks not run: %s\n' "$*"
  exit 0
}

if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  ensure_packages prometheus || true
fi
command -v promtool >/dev/null 2>&1 || skip "promtool is not installed (apt-get install prometheus)"
command -v prometheus >/dev/null 2>&1 || skip "prometheus is not installed (apt-get install prometheus)"
command -v python3 >/dev/null 2>&1 || die "python3 is needed"

# --- without webhookd -------------------------------------------------------------------

log "promtool check rules, promtool test rules"
promtool check rules "${alerts}"
(cd "${root}/deploy/prometheus" && promtool test rules alerts_test.yml)
promtool check config "${root}/deploy/prometheus/prometheus.yml"
log "runbook anchors and metric descriptions in docs/operations.md"
python3 "${here}/check.py" docs "${dashboard}" "${alerts}" "${root}/docs/operations.md"

# --- webhookd with some traffic ---------------------------------------------------------

# shellcheck source=tests/lib/webhookd_under_test.sh
source "${root}/tests/lib/webhookd_under_test.sh"

prom_pid=""
receiver_pid=""
# Stops what this script started, then hands over to the library's handler, which stops
# webhookd, removes tmpdir and exits with the status it finds in $?.
_stop_helpers() {
  local status=$? p i
  set +e
  for p in "${prom_pid}" "${receiver_pid}"; do
    [[ -n ${p} ]] || continue
    kill -TERM "${p}" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
      kill -0 "${p}" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "${p}" 2>/dev/null
    wait "${p}" 2>/dev/null
  done
  (exit "${status}")
  _stop_webhookd
}
trap _stop_helpers EXIT

# One attempt after the first, 100 ms later, and no jitter: the failing destination's
# deliveries are dead-lettered "exhausted" within a second.
start_webhookd prometheus WEBHOOKD_RETRY_SCHEDULE=100ms WEBHOOKD_RETRY_JITTER=0
auth_header=${tmpdir}/auth-header

# Every wait below is bounded: the timeout of `timeout`, or a counted loop.
timeout 600 python3 "${here}/receiver.py" "${tmpdir}/receiver.port" &
receiver_pid=$!
for ((i = 0; i < 50; i++)); do
  [[ -s ${tmpdir}/receiver.port ]] && break
  sleep 0.1
done
[[ -s ${tmpdir}/receiver.port ]] || die "the receiver did not start within 5 s"
receiver=http://127.0.0.1:$(cat "${tmpdir}/receiver.port")

# api METHOD PATH [JSON]: one API call with the admin key; fails on anything but 2xx.
api() {
  curl -fsS --max-time 10 -X "$1" -H "@${auth_header}" -H 'Content-Type: application/json' \
    ${3:+--data-binary "$3"} "${base}$2"
}

log "creating destinations on ${receiver} and publishing events"
api POST /v1/destinations "{\"url\": \"${receiver}/ok\", \"event_types\": [\"prom.ok\"]}" >/dev/null
api POST /v1/destinations "{\"url\": \"${receiver}/fail\", \"event_types\": [\"prom.fail\"]}" >/dev/null
api POST /v1/destinations "{\"url\": \"${receiver}/refuse\", \"event_types\": [\"prom.refuse\"]}" >/dev/null
# A destination with an mTLS client certificate, for the expiry gauge. Disabled: nothing
# is ever sent to it, the gauge counts it all the same.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
  -subj /CN=webhookd-prometheus-test -keyout "${tmpdir}/client.key" -out "${tmpdir}/client.crt" \
  2>/dev/null
tls_destination=$(python3 -c '
import json, sys
print(json.dumps({"url": sys.argv[1], "enabled": False, "event_types": ["prom.never"],
                  "tls": {"client_certificate": open(sys.argv[2]).read(),
                          "client_key": open(sys.argv[3]).read()}}))
' "https://127.0.0.1:${receiver##*:}/tls" "${tmpdir}/client.crt" "${tmpdir}/client.key")
api POST /v1/destinations "${tls_destination}" >/dev/null
for ((i = 0; i < 5; i++)); do
  api POST /v1/events "{\"type\": \"prom.ok\", \"payload\": {\"n\": ${i}}}" >/dev/null
done
api POST /v1/events '{"type": "prom.fail", "payload": {}}' >/dev/null
api POST /v1/events '{"type": "prom.refuse", "payload": {}}' >/dev/null

# metric NAME{labels}: its value in webhookd's /metrics, 0 when absent.
metric() {
  curl -fsS --max-time 5 "${base}/metrics" | awk -v s="$1" '$1 == s { v = $2 } END { print v + 0 }'
}
delivered=""
for ((i = 0; i < 150; i++)); do
  if (($(metric webhookd_deliveries_succeeded_total) >= 5 &&
    $(metric 'webhookd_dead_letters_total{reason="exhausted"}') >= 1 &&
    $(metric 'webhookd_dead_letters_total{reason="permanent_failure"}') >= 1)); then
    delivered=1
    break
  fi
  sleep 0.2
done
if [[ -z ${delivered} ]]; then
  echo "error: the deliveries did not end within 30 s; /metrics says:" >&2
  curl -fsS --max-time 5 "${base}/metrics" | grep -E '^webhookd_(deliveries_succeeded|dead_letters)' >&2
  exit 1
fi

# --- promtool on the exposition ---------------------------------------------------------

# promtool exits 1 on a parse error and 3 on lint findings. A finding is a departure from
# the naming conventions (a unit, _total on counters, HELP text), which Prometheus and the
# dashboard do not care about but other people's tooling may: both fail the test, so a
# new metric cannot slip in unlinted.
log "promtool check metrics on ${base}/metrics"
curl -fsS --max-time 10 "${base}/metrics" >"${tmpdir}/metrics.txt"
lint_status=0
promtool check metrics <"${tmpdir}/metrics.txt" || lint_status=$?
((lint_status == 0)) || die "promtool check metrics found problems in /metrics (exit ${lint_status})"

# --- a real Prometheus ------------------------------------------------------------------

mkdir -p "${tmpdir}/prometheus"
prom_config=${tmpdir}/prometheus/prometheus.yml
cat >"${prom_config}" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - ${alerts}
scrape_configs:
  # The job name alerts.yml selects on.
  - job_name: webhookd
    static_configs:
      - targets: ["${base#http://}"]
YAML
log "promtool check config on the test's configuration"
promtool check config "${prom_config}"

# A free port can be taken by another process before Prometheus binds it: try another.
# 9090 is never probed (_free_port picks 20000-60000), so a system Prometheus is left be.
ready=""
for ((attempt = 1; attempt <= 5 && !ready; attempt++)); do
  prom_port=$(_free_port)
  prom=http://127.0.0.1:${prom_port}
  log "starting prometheus on ${prom}"
  timeout 600 prometheus --config.file="${prom_config}" \
    --storage.tsdb.path="${tmpdir}/prometheus/data" \
    --web.listen-address="127.0.0.1:${prom_port}" \
    --log.level=warn >"${tmpdir}/prometheus/log" 2>&1 &
  prom_pid=$!
  for ((i = 0; i < 150; i++)); do
    kill -0 "${prom_pid}" 2>/dev/null || break
    if curl -fsS -o /dev/null --max-time 2 "${prom}/-/ready" 2>/dev/null; then
      ready=1
      break
    fi
    sleep 0.2
  done
  [[ -n ${ready} ]] && break
  kill -0 "${prom_pid}" 2>/dev/null && break # running but not ready: not a port clash
  wait "${prom_pid}" 2>/dev/null || true
  prom_pid=""
  grep -q 'address already in use' "${tmpdir}/prometheus/log" || break
done
if [[ -z ${ready} ]]; then
  echo "error: prometheus did not become ready; its log:" >&2
  tail -n 30 "${tmpdir}/prometheus/log" >&2
  exit 1
fi

up=""
for ((i = 0; i < 150; i++)); do
  if curl -fsS --max-time 2 "${prom}/api/v1/query?query=up%7Bjob%3D%22webhookd%22%7D%3D%3D1" 2>/dev/null |
    grep -q '"result":\[{'; then
    up=1
    break
  fi
  sleep 0.2
done
[[ -n ${up} ]] || die "prometheus did not see webhookd up within 30 s: $(curl -fsS --max-time 5 "${prom}/api/v1/targets")"

# The gauges refresh every 5 s and a rule's health is known after its first evaluation:
# give them 20 s before the last word.
log "the dashboard's and the rules' series in prometheus"
allow=$(
  IFS=,
  echo "${allowed_missing[*]}"
)
checked=""
for ((i = 0; i < 20; i++)); do
  if python3 "${here}/check.py" series "${prom}" "${dashboard}" "${alerts}" \
    --allow-missing "${allow}" >"${tmpdir}/check.out" 2>&1; then
    checked=1
    break
  fi
  sleep 1
done
cat "${tmpdir}/check.out"
[[ -n ${checked} ]] || die "the dashboard or the rules use series that prometheus does not have"
log "prometheus checks passed"
