"""bench_sink: the receiver every delivery goes to. It verifies what it receives (each
request's Standard Webhooks signature, each webhook-id answered 2xx at most once per
destination) and counts it; its counters make the INVALID rules of the drains."""

import time

from . import http
from .figures import figures_of
from .log import die
from .stats import field, num, parse


class Sink:
    def __init__(self, bench, port: int):
        self.bench = bench
        self.port = port

    def stats_line(self) -> str:
        """"ok=N hang=M failed=F unique=U dup=D bad_sig=B"."""
        line = http.get_text(self.port, "/stats")
        if not line:
            die(f"the sink on port {self.port} does not answer")
        return line.strip()

    def ok(self) -> int:
        return int(num(field(self.stats_line(), "ok")))

    def reset(self) -> None:
        """Zeroes the counters and the record of webhook-ids: each database numbers its
        events from 1, so the ids of one run's events are those of the last run's."""
        status, _, _ = http.request(self.port, "/reset", method="POST")
        if not 200 <= status < 300:
            die(f"the sink on port {self.port} does not answer /reset")

    def quiet(self, seconds: float = 60) -> None:
        """Waits (at most SECONDS) until a second passes with no request answered: what a
        failed load left queued arrives before the counters are zeroed, not in the next
        load's."""
        deadline = time.monotonic() + seconds
        last = self.stats_line()
        while time.monotonic() < deadline:
            time.sleep(1)
            now = self.stats_line()
            if now == last:
                return
            last = now

    def since_reset(self, accepted: int) -> str:
        """Why the requests since the last reset are not exactly ACCEPTED events, each
        delivered once with a good signature; "" when they are."""
        stats = parse(self.stats_line())
        bad, dup, unique = (int(num(stats.get(k))) for k in ("bad_sig", "dup", "unique"))
        if bad == 0 and dup == 0 and unique == accepted and "unique" in stats:
            return ""
        return (f"the sink verified {unique} distinct webhook-ids for {accepted} accepted,"
                f" {bad} bad signatures, {dup} duplicates")

    def clean(self, name: str, *figures) -> None:
        """INVALID for FIGURES when the sink saw a bad signature or an id answered 2xx
        twice."""
        stats = parse(http.get_text(self.port, "/stats") or "bad_sig=unknown dup=unknown")
        if stats.get("bad_sig") != "0" or stats.get("dup") != "0":
            self.bench.figs.invalidate(
                f"{name}: the sink saw {stats.get('bad_sig', '')} bad signatures and"
                f" {stats.get('dup', '')} duplicates", *figures)

    def verified(self, name: str, n: int, extra: int, before: str) -> bool:
        """After a run that should have delivered N distinct webhook-ids (at most EXTRA
        more) since the sink said BEFORE: False, and INVALID for NAME's figures, when a
        signature did not verify, an id was answered 2xx twice or fewer than N arrived."""
        after = parse(self.stats_line())
        old = parse(before)

        def grew(key):
            return int(num(after.get(key)) - num(old.get(key)))

        bad, dup, unique = grew("bad_sig"), grew("dup"), grew("unique")
        if bad != 0 or dup != 0 or unique < n or unique > n + extra:
            self.bench.figs.invalidate(
                f"{name}: the sink verified {unique} distinct webhook-ids for {n} ({extra} more"
                f" allowed), {bad} bad signatures, {dup} duplicates", *figures_of(name))
            return False
        return True
