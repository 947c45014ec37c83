"""Delivery: bench_sink's own bound, the drain of N pre-loaded deliveries at each worker
concurrency, and the same drain beside a destination whose every request hangs."""

from harness import http
from harness.drain import drain, preload
from harness.figures import Part
from harness.load import warm_and_load
from harness.log import log
from harness.stats import field, median, num, ratio, spread

HELP = """\
  sink_req_per_s          bench_sink's own bound, 64 connections, closed loop
  delivery_per_s          N due deliveries pre-loaded with SQL (3 destinations at the sink,
                          max_in_flight 64, or a third of the concurrency when that is
                          more), then `webhookd worker` started and timed until all
                          succeeded; attempts == N is checked. Swept like the peer:
                          WEBHOOKD_WORKER_CONCURRENCY 16, 32, 64 (the default), 128 and
                          256 once each, then three more drains at the best: their median
  delivery_c<C>_per_s     the sweep's drain at concurrency C (at the best: the median of
                          the three); delivery_best_concurrency is that C
  delivery_vs_sink        the ratio of the two
  slow_destination_ratio  delivery_per_s of the same N with a fourth destination whose
                          every request hangs past WEBHOOKD_ATTEMPT_TIMEOUT=5s, over
                          the plain drain run just before it (both at the best
                          concurrency): the median of three such pairs
"""

ONLY = """\
--only delivery runs the sink's bound and the delivery drains alone (the sweep and the
three pairs at its best)."""

# WEBHOOKD_WORKER_CONCURRENCY of the sweep; 64 is webhookd's default.
CONCURRENCIES = (16, 32, 64, 128, 256)
DEFAULT_CONCURRENCY = 64


def sink_bound(b) -> str:
    """bench_sink's closed-loop bound; its line."""
    log(f"sink bound: bench_sink, {b.cfg.connections} connections, {b.cfg.load_s} s")
    return warm_and_load(b, "sink", b.sink.port, "--path", "/ok/0", key=False)


def drained(b, name: str, slow: int, c: int) -> str:
    """The drain of N at concurrency C on a fresh database, with SLOW more to the hanging
    destination."""
    n = b.cfg.deliveries
    db = b.new_db("bench_slow" if slow else "bench_delivery")
    # Three destinations at 64 would hold the worker to 192 in flight: at 256 each gets a
    # third of the concurrency, so that the concurrency is what the sweep varies.
    preload(b, db, n, slow, cap=max(64, -(-c // 3)))
    rate = drain(b, name, "worker", n, db, env={"WEBHOOKD_WORKER_CONCURRENCY": c}).rate
    db.drop()
    return rate


def measure(b, sink_line: str, between=None, after_sweep=None) -> Part:
    """Each concurrency once, then at the best three drains, each followed by the same
    beside a hanging destination, so the ratio of a pair compares drains a minute apart at
    most. SINK_LINE is the sink's bound. AFTER_SWEEP() runs after the sweep and
    BETWEEN(run) after each pair: the peer's sweeps and its drains at its best, so that
    its drains and webhookd's interleave. The Part's runs["delivery"] are the three
    drains' rates at the best, in order, for the paired ratios."""
    cfg = b.cfg
    log(f"delivery: {cfg.deliveries} pre-loaded deliveries, webhookd worker at concurrency"
        f" {' '.join(map(str, CONCURRENCIES))}, then three drains at the best, each followed"
        f" by the same beside a hanging destination ({cfg.slow_deliveries} deliveries)")
    sweep = {}
    for c in CONCURRENCIES:
        sweep[c] = drained(b, f"delivery-c{c}", 0, c)
    best_c = max(CONCURRENCIES, key=lambda c: num(sweep[c]))
    if after_sweep:
        after_sweep()
    rates, slow_rates, slow_ratios = [], [], []
    hung = 0
    for run in (1, 2, 3):
        rates.append(drained(b, f"delivery-{run}", 0, best_c))
        slow_rates.append(drained(b, f"slow-{run}", cfg.slow_deliveries, best_c))
        slow_ratios.append(ratio(slow_rates[-1], rates[-1]))
        # Each drain zeroes the sink's counters: the hung requests are counted per drain.
        hung += int(num(field(http.get_text(b.sink.port, "/stats"), "hang")))
        if between:
            between(run)
    log(f"slow destination: {hung} requests hung in all")
    rate = median(rates)
    sink_rps = field(sink_line, "per_s")
    part = Part()
    part.add("sink_req_per_s", sink_rps, "bound")
    part.add("delivery_per_s", rate, ">= 8000", spread(rates))
    part.add("delivery_best_concurrency", best_c)
    for c in CONCURRENCIES:
        if c == best_c:
            part.add(f"delivery_c{c}_per_s", rate, "", spread(rates))
        else:
            part.add(f"delivery_c{c}_per_s", sweep[c])
    part.add("delivery_vs_sink", ratio(rate, sink_rps))
    part.add("slow_destination_ratio", median(slow_ratios), ">= 0.90", spread(slow_ratios))
    part.details["sink"] = f"sink           {sink_line}"
    swept = ", ".join(f"{c}: {sweep[c]}/s" for c in CONCURRENCIES)
    default = "" if best_c == DEFAULT_CONCURRENCY else f" (not the default {DEFAULT_CONCURRENCY})"
    part.details["delivery"] = (f"delivery       {cfg.deliveries} pre-loaded, concurrency {swept};"
                                f" at {best_c}{default}, three drains: {' '.join(rates)} /s"
                                f" (median {rate}, {spread(rates)})")
    part.details["slow"] = (f"slow           {cfg.deliveries} healthy, three drains:"
                            f" {' '.join(slow_rates)} /s (median {median(slow_rates)}; ratios to"
                            f" the plain drain before each {' '.join(slow_ratios)}) while {hung}"
                            " requests hung in all")
    part.runs["delivery"] = rates
    return part


def alone(b) -> Part:
    """--only delivery: the sink's bound, then the drains."""
    return measure(b, sink_bound(b))
