"""Delivery: bench_sink's own bound, the drain of N pre-loaded deliveries, and the same
drain beside a destination whose every request hangs."""

from harness import http
from harness.drain import drain, preload
from harness.figures import Part
from harness.load import warm_and_load
from harness.log import log
from harness.stats import field, median, ratio, spread

HELP = """\
  sink_req_per_s          bench_sink's own bound, 64 connections, closed loop
  delivery_per_s          N due deliveries pre-loaded with SQL (3 destinations at the sink,
                          max_in_flight 64), then `webhookd worker` (concurrency 64) started
                          and timed until all succeeded; attempts == N is checked
  delivery_vs_sink        the ratio of the two
  slow_destination_ratio  delivery_per_s of the same N with a fourth destination whose
                          every request hangs past WEBHOOKD_ATTEMPT_TIMEOUT=5s, over
                          the plain drain run just before it: the median of three
                          such pairs
"""


def sink_bound(b) -> str:
    """bench_sink's closed-loop bound; its line."""
    log(f"sink bound: bench_sink, {b.cfg.connections} connections, {b.cfg.load_s} s")
    return warm_and_load(b, "sink", b.sink.port, "--path", "/ok/0", key=False)


def drained(b, name: str, slow: int) -> str:
    """The drain of N on a fresh database, with SLOW more to the hanging destination."""
    n = b.cfg.deliveries
    db = b.new_db("bench_slow" if slow else "bench_delivery")
    preload(b, db, n, slow)
    rate = drain(b, name, "worker", n, db).rate
    db.drop()
    return rate


def measure(b, sink_line: str) -> Part:
    """Three drains, each followed by the same beside a hanging destination, so the ratio
    of a pair compares drains a minute apart at most. SINK_LINE is the sink's bound."""
    cfg = b.cfg
    log(f"delivery: {cfg.deliveries} pre-loaded deliveries, webhookd worker, three drains, each"
        f" followed by the same beside a hanging destination ({cfg.slow_deliveries} deliveries)")
    rates, slow_rates, slow_ratios = [], [], []
    for run in (1, 2, 3):
        rates.append(drained(b, f"delivery-{run}", 0))
        slow_rates.append(drained(b, f"slow-{run}", cfg.slow_deliveries))
        slow_ratios.append(ratio(slow_rates[-1], rates[-1]))
    hung = field(http.get_text(b.sink.port, "/stats"), "hang")
    log(f"slow destination: {hung} requests hung in all")
    rate = median(rates)
    sink_rps = field(sink_line, "per_s")
    part = Part()
    part.add("sink_req_per_s", sink_rps, "bound")
    part.add("delivery_per_s", rate, ">= 8000", spread(rates))
    part.add("delivery_vs_sink", ratio(rate, sink_rps))
    part.add("slow_destination_ratio", median(slow_ratios), ">= 0.90", spread(slow_ratios))
    part.details["sink"] = f"sink           {sink_line}"
    part.details["delivery"] = (f"delivery       {cfg.deliveries} pre-loaded, three drains:"
                                f" {' '.join(rates)} /s (median {rate}, {spread(rates)})")
    part.details["slow"] = (f"slow           {cfg.deliveries} healthy, three drains:"
                            f" {' '.join(slow_rates)} /s (median {median(slow_rates)}; ratios to"
                            f" the plain drain before each {' '.join(slow_ratios)}) while {hung}"
                            " requests hung in all")
    return part
