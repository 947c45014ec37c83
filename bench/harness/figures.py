"""The run's figures: notes, the INVALID rules, and the report (environment, table,
details, notes, then one `name: value` line per valid figure)."""

import fnmatch
import re
import sys
from dataclasses import dataclass, field

from .log import log

# The figures a load or drain run named so stands behind, first match wins: a failed
# check of the run makes each of them INVALID.
RUN_FIGURES = [
    ("*-warmup", []),
    ("hello", ["hello_req_per_s", "ingest_vs_hello"]),
    ("sink", ["sink_req_per_s", "delivery_vs_sink"]),
    ("ingest", ["ingest_events_per_s", "ingest_vs_hello", "ingest_tenants_ratio"]),
    ("ingest-paced", ["ingest_p50_ms", "ingest_p99_ms"]),
    ("ingest-tenants-*", ["ingest_tenants_per_s", "ingest_tenants_ratio", "tenants_flat_ratio"]),
    ("e2e-[0-9]*", ["e2e_p50_ms", "e2e_p99_ms", "e2e_ingest_p50_ms", "e2e_ingest_p99_ms",
                    "e2e_lag_p50_ms", "e2e_lag_p99_ms"]),
    ("ingest-schema-*", ["ingest_schema_ratio"]),
    ("ingest-filters-*", ["ingest_filters_ratio"]),
    ("ingest-tracing-*", ["tracing_ingest_ratio", "tracing_delivery_ratio"]),
    ("delivery-tracing-*", ["tracing_ingest_ratio", "tracing_delivery_ratio"]),
    ("ingest-single", ["ha_ingest_ratio", "ha_delivery_ratio"]),
    ("ingest-ha", ["ha_ingest_ratio", "ha_delivery_ratio"]),
    ("delivery-single", ["ha_ingest_ratio", "ha_delivery_ratio"]),
    ("delivery-ha", ["ha_ingest_ratio", "ha_delivery_ratio"]),
    ("peer-*", ["peer_per_s", "delivery_vs_peer"]),
    ("recording-peer-*", ["recording_peer_per_s", "delivery_vs_recording_peer"]),
    ("receivers", ["slow_receivers_per_s"]),
    ("sustained-*", ["sustained_per_s", "sustained_vs_peer"]),
    ("fairness*", ["fairness_p99_ms"]),
    ("delivery-c*", ["delivery_per_s", "delivery_vs_sink", "delivery_vs_peer",
                     "delivery_vs_recording_peer", "backlog_drain_ratio",
                     "delivery_best_concurrency", "delivery_c16_per_s", "delivery_c32_per_s",
                     "delivery_c64_per_s", "delivery_c128_per_s", "delivery_c256_per_s"]),
    ("delivery-*", ["delivery_per_s", "delivery_vs_sink", "delivery_vs_peer",
                    "delivery_vs_recording_peer", "backlog_drain_ratio",
                    "slow_destination_ratio"]),
    ("slow-*", ["slow_destination_ratio"]),
    ("protected-*", ["protected_ratio"]),
    ("idle-*", ["claim_idle_destinations_ratio"]),
    ("fifo-fifo-1", ["fifo_one_key_per_s"]),
    ("fifo-*", ["fifo_keys_ratio"]),
    ("feed-http-*", ["feed_per_s", "feed_vs_http"]),
    ("http-before-redis", ["broker_redis_vs_http"]),
    ("http-before-amqp", ["broker_amqp_vs_http"]),
    ("http-before-nats", ["broker_nats_vs_http"]),
    ("proxy-*", ["proxy_ratio"]),
    ("backlog-*", ["backlog_drain_ratio"]),
    ("retention-*", ["retention_ingest_p99_ratio"]),
]


def figures_of(run: str) -> list:
    for pattern, names in RUN_FIGURES:
        if fnmatch.fnmatchcase(run, pattern):
            return names
    return [run]


@dataclass
class Part:
    """What a scenario measured: its table rows (name -> (value, target, min-max)) and
    its detail lines (label -> line), each in the order the report shows them."""

    figures: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    # The rates of runs another scenario pairs its own with (name -> rates in order).
    runs: dict = field(default_factory=dict)

    def add(self, name, value, target="", spread=""):
        self.figures[name] = (str(value), target, spread)


class Figures:
    """The run's notes and INVALID figures, which every check adds to."""

    def __init__(self):
        self.notes = []
        self.invalid = set()

    def note(self, message: str) -> None:
        self.notes.append(message)
        log(f"NOTE: {message}")

    def invalidate(self, message: str, *names) -> None:
        """A correctness check failed: each of NAMES is reported INVALID (no `name:
        value` line) and the run exits 1."""
        self.invalid.update(names)
        self.note(f"INVALID {' '.join(names)}: {message}")

    def report(self, env_lines, part: Part, load_avg: str) -> int:
        """Prints the report; 1 when a figure is INVALID, else 0."""
        print()
        print("webhookd benchmark")
        for line in env_lines:
            print(f"  {line}")
        print(f"  load avg:    {load_avg} at the end")
        print()
        row = "{:<30} {:>14}  {:<10} {:<4} {}"
        print(row.format("figure", "value", "target", "met", "min-max"))
        print(row.format("-" * 30, "-" * 14, "-" * 10, "-" * 4, "-" * 7))
        checked = []
        for name, (value, target, spread) in part.figures.items():
            if name in self.invalid:
                value = "INVALID"
            checked.append((name, value))
            print(row.format(name, value, target, met(value, target), spread))
        print()
        print("details:")
        for line in part.details.values():
            print(f"  {line}")
        if self.notes:
            print("notes:")
            for line in self.notes:
                print(f"  {line}")
        print()
        # An INVALID figure has no line: nothing downstream may take it for a measurement.
        for name, value in checked:
            if value != "INVALID":
                print(f"{name}: {value}")
        status = 1 if any(value == "INVALID" for _, value in checked) else 0
        if status:
            print("error: a correctness check failed; the figures marked INVALID are not"
                  " measurements (see the notes)", file=sys.stderr)
        return status


def met(value: str, target: str) -> str:
    """"yes" or "NO" against a target ">= x" or "<= x"; "" for a bound or no target."""
    parts = target.split()
    op = parts[0] if parts else ""
    if value == "INVALID" and op in (">=", "<="):
        return "NO"
    if value == "inf" and op == "<=":
        return "NO"
    if not re.fullmatch(r"[0-9.]+", value) or op not in (">=", "<="):
        return ""
    try:
        v, t = float(value), float(parts[1])
    except (ValueError, IndexError):
        return ""
    return "yes" if (v >= t if op == ">=" else v <= t) else "NO"
