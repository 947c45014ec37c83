"""Ordered delivery: many ordering keys to one fifo destination, and one key alone."""

from harness.drain import drain
from harness.figures import Part
from harness.log import log
from harness.stats import median, ratio, spread

HELP = """\
  fifo_keys_ratio         the drain of N/2 deliveries over 1,000 ordering keys to one
                          fifo destination (cap 64), over the same N/2 to the same
                          destination unordered, run just before it: the median of
                          three such pairs
  fifo_one_key_per_s      2,000 deliveries of one ordering key to one fifo destination:
                          one key's rate, bounded by a round trip and a commit each
"""

ONLY = "--only fifo measures fifo_keys_ratio and fifo_one_key_per_s alone the same way."


def fifo(b, n: int, ordering: str, keys: int) -> str:
    """The drain of N deliveries over KEYS keys to one destination; its rate."""
    db = b.new_db("bench_fifo")
    db.sql("fifo", n=n, keys=keys, ordering=ordering, sink=f"127.0.0.1:{b.sink.port}",
           secret=b.secret)
    rate = drain(b, f"fifo-{ordering}-{keys}", "worker", n, db).rate
    db.drop()
    return rate


def measure(b) -> Part:
    n = b.cfg.deliveries // 2
    log(f"fifo: {n} deliveries over 1,000 keys to one destination, unordered then fifo, three"
        " pairs; then 2,000 of one key")
    plain, ordered, ratios = [], [], []
    for _ in (1, 2, 3):
        plain.append(fifo(b, n, "none", 1000))
        ordered.append(fifo(b, n, "fifo", 1000))
        ratios.append(ratio(ordered[-1], plain[-1]))
    one_key = fifo(b, 2000, "fifo", 1)
    part = Part()
    part.add("fifo_keys_ratio", median(ratios), ">= 0.80", spread(ratios))
    part.add("fifo_one_key_per_s", one_key, ">= 200")
    part.details["fifo"] = (f"fifo           {n} over 1,000 keys to one destination, three pairs:"
                            f" unordered {' '.join(plain)} /s, fifo {' '.join(ordered)} /s (ratios"
                            f" {' '.join(ratios)}); one key: 2,000 at {one_key}/s")
    return part
