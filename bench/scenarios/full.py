"""The full run: every scenario in turn, in an order that keeps the slow, big ones late,
and the report's table in the order the figures are documented."""

from harness.figures import Part
from scenarios import (backlog, brokers, catalog, costs, delivery, e2e, fairness, feeds, fifo, ingest,
                       peer,
                       platform, privacy, protection, proxy, receivers, retention, sustained,
                       tracing)

# The report's table, top to bottom.
FIGURES = [
    "hello_req_per_s", "ingest_events_per_s", "ingest_vs_hello", "ingest_p50_ms", "ingest_p99_ms",
    "ingest_tenants_per_s", "ingest_tenants_ratio", "tenants_flat_ratio", "ingest_schema_ratio",
    "ingest_filters_ratio", "sink_req_per_s", "delivery_per_s", "delivery_best_concurrency",
    "delivery_c16_per_s", "delivery_c32_per_s", "delivery_c64_per_s", "delivery_c128_per_s",
    "delivery_c256_per_s", "delivery_vs_sink", "peer_per_s", "delivery_vs_peer",
    "recording_peer_per_s", "delivery_vs_recording_peer", "sustained_per_s",
    "sustained_peer_per_s", "sustained_peer_add_job_per_s", "sustained_peer_add_jobs_per_s",
    "sustained_vs_peer", "e2e_p50_ms", "e2e_p99_ms", "e2e_ingest_p50_ms",
    "e2e_ingest_p99_ms", "e2e_lag_p50_ms", "e2e_lag_p99_ms", "backlog_drain_ratio", "rss_mib",
    "slow_destination_ratio", "protected_ratio", "claim_idle_destinations_ratio",
    "fifo_keys_ratio", "fifo_one_key_per_s", "feed_per_s", "feed_vs_http", "feed_read_p99_ms",
    "proxy_ratio", "tracing_ingest_ratio",
    "tracing_delivery_ratio", "slow_receivers_per_s", "fairness_p99_ms", "metrics_scrape_ms",
    "stats_ms", "list_p99_ms", *costs.FIGURES, *privacy.FIGURES, *retention.FIGURES,
    *brokers.FIGURES,
]
# The details under it.
DETAILS = [
    "hello", "ingest", "ingest paced", "tenant alone", "ingest tenants", "schema", "filters",
    "sink", "e2e", "delivery", "peer", "recording peer", "sustained", "sustained peer", "slow",
    "backlog", "protected", "idle", "fifo", "feeds", "proxy", "tracing", "receivers", "fairness",
    "platform", "peak RSS", "costs ingest", "costs drain", *privacy.DETAILS,
    *retention.DETAILS, *brokers.DETAILS,
]


def run(b) -> Part:
    sink_line = delivery.sink_bound(b)
    parts = [ingest.measure(b), catalog.measure(b)]
    e2e_part, e2e_hwm = e2e.measure(b)
    delivery_part, peer_part, best_c, version = peer.compared(b, sink_line)
    parts += [e2e_part, delivery_part, peer_part, sustained.measure(b, best_c, version)]
    parts += [protection.measure(b), fifo.measure(b), feeds.measure(b), proxy.measure(b)]
    parts += [platform.measure(b)]
    # The backlog drains at the default concurrency: over the delivery drain at the same.
    parts += [backlog.measure(b, delivery_part.figures["delivery_c64_per_s"][0], e2e_hwm)]
    parts += [tracing.measure(b), receivers.measure(b), fairness.measure(b), costs.measure(b)]
    parts += [privacy.measure(b), retention.measure(b), brokers.measure(b)]
    every = Part()
    for part in parts:
        every.figures.update(part.figures)
        every.details.update(part.details)
    report = Part()
    report.figures = {name: every.figures[name] for name in FIGURES}
    report.details = {label: every.details[label] for label in DETAILS}
    return report
