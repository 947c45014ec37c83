"""What the claim's protections cost: a drain beside an open circuit and a rate limit,
and a drain beside 100,000 idle destinations."""

from harness.drain import drain, preload, preloaded_drain
from harness.figures import Part
from harness.log import log
from harness.stats import median, ratio, spread

HELP = """\
  protected_ratio         the drain of N over ten healthy destinations beside one whose
                          circuit is open and one limited to 50 attempts a second (N/100
                          due deliveries each, due first: every skip is an attempt
                          written, so they add 1-2 % of work), over the same drain
                          without those two, run back to back: the median of three
                          such pairs
  claim_idle_destinations_ratio
                          the plain drain of N beside 100,000 idle destinations of
                          10,000 tenants (no delivery of theirs is pending), over the
                          same drain alone run just before it: the median of three
                          such pairs; the claim's cost must not grow with idle
                          destinations
"""


def protected(b, others: int) -> str:
    """The drain of N over ten destinations, beside the open-circuit and the rate-limited
    one when OTHERS is 1; its rate."""
    n = b.cfg.deliveries
    db = b.new_db("bench_protected")
    db.sql("protected", n=n, m=n // 100, others=others, rate=50,
           sink=f"127.0.0.1:{b.sink.port}", secret=b.secret)
    # The limited destination's requests reach the sink too: 50/s plus its bucket.
    rate = drain(b, f"protected-{others}", "worker", n, db, extra=50 * 600 + 50).rate
    if others:
        log(f"protected: {' '.join(db.sql('protected_outcomes').splitlines())}")
    db.drop()
    return rate


def idle(b, run: int) -> str:
    """The plain drain of N beside tenant "bench"'s 20 destinations and 100,000 idle ones
    of 10,000 tenants, none with work; its rate."""
    n = b.cfg.deliveries
    db = b.new_db("bench_idle")
    db.sql("tenants", others=100000, sink=f"127.0.0.1:{b.sink.port}", secret=b.secret)
    preload(b, db, n)
    rate = drain(b, f"idle-{run}", "worker", n, db).rate
    db.drop()
    return rate


def measure(b) -> Part:
    """Three pairs of each, back to back, so the ratio of a pair compares drains minutes
    apart at most."""
    n = b.cfg.deliveries
    log(f"protection: {n} deliveries over ten destinations, alone and beside an open circuit"
        " and a rate limit, three pairs")
    plain, beside, ratios = [], [], []
    for _ in (1, 2, 3):
        plain.append(protected(b, 0))
        beside.append(protected(b, 1))
        ratios.append(ratio(beside[-1], plain[-1]))
    log(f"idle destinations: {n} pre-loaded deliveries over 3 destinations, alone and beside"
        " 100,000 idle destinations of 10,000 tenants, three pairs")
    alone, crowded, idle_ratios = [], [], []
    for run in (1, 2, 3):
        alone.append(preloaded_drain(b, f"idle-alone-{run}", "bench_idle_alone").rate)
        crowded.append(idle(b, run))
        idle_ratios.append(ratio(crowded[-1], alone[-1]))
    part = Part()
    part.add("protected_ratio", median(ratios), ">= 0.95", spread(ratios))
    part.add("claim_idle_destinations_ratio", median(idle_ratios), ">= 0.90", spread(idle_ratios))
    part.details["protected"] = (f"protected      {n} over ten healthy destinations, three pairs:"
                                 f" alone {' '.join(plain)} /s, beside an open circuit and a rate"
                                 f" limit {' '.join(beside)} /s (ratios {' '.join(ratios)})")
    part.details["idle"] = (f"idle           {n} over 3 destinations, three pairs: alone"
                            f" {' '.join(alone)} /s, beside 100,000 idle destinations"
                            f" {' '.join(crowded)} /s (ratios {' '.join(idle_ratios)})")
    return part
