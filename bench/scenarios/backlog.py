"""A big backlog drained by `webhookd all`, and the peak memory of `webhookd all`."""

from harness.drain import preloaded_drain
from harness.figures import Part
from harness.log import log
from harness.stats import highest, median, ratio, spread

HELP = """\
  backlog_drain_ratio     drain rate of a big backlog (`webhookd all`, concurrency 64) /
                          delivery_c64_per_s (the drain at the same concurrency): the
                          median of three drains
  rss_mib                 peak resident memory (VmHWM) of `webhookd all` (e2e, backlog)
"""


def measure(b, delivery_rate: str, e2e_hwm: str) -> Part:
    """Three drains of the backlog, each over DELIVERY_RATE, the plain drain at the same
    concurrency (the backlog drains run after the other cases); rss_mib is the highest of
    E2E_HWM and theirs."""
    n = b.cfg.backlog
    log(f"backlog: {n} pre-loaded deliveries, webhookd all, three drains")
    rates, ratios, hwm = [], [], "0"
    for run in (1, 2, 3):
        done = preloaded_drain(b, f"backlog-{run}", "bench_backlog", n, mode="all")
        rates.append(done.rate)
        ratios.append(ratio(done.rate, delivery_rate))
        hwm = highest([done.hwm, hwm])
    part = Part()
    part.add("backlog_drain_ratio", median(ratios), ">= 0.80", spread(ratios))
    part.add("rss_mib", highest([e2e_hwm, hwm]), "<= 256")
    part.details["backlog"] = (f"backlog        {n}, three drains: {' '.join(rates)} /s (median"
                               f" {median(rates)}; over delivery_c64_per_s {' '.join(ratios)})")
    part.details["peak RSS"] = f"peak RSS       e2e {e2e_hwm} MiB, backlog {hwm} MiB"
    return part
