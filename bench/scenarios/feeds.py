"""Feeds: deliveries read and acked by consumers instead of pushed, against the HTTP drain
of the same N, and a read's latency beside millions of messages nobody reads."""

import base64
import hashlib
import hmac
import http.client
import json
import os
import threading
import time

from harness.drain import preloaded_drain
from harness.figures import Part
from harness.log import die, log
from harness.stats import median, percentile, ratio, spread

HELP = """\
  feed_per_s              N/2 messages of one feed destination (url feed:) read and acked
                          by 8 consumers in batches of 100 (GET .../messages?limit=100,
                          then POST .../messages/ack), each on one kept-alive connection
                          to `webhookd server`, every message's Standard Webhooks
                          signature checked; timed until all are acked. INVALID unless
                          every delivery succeeded with exactly one attempt and no
                          message was read twice
  feed_vs_http            feed_per_s over the HTTP drain of the same N/2 (`webhookd
                          worker` to the sink), run just before it: the median of three
                          such pairs
  feed_read_p99_ms        the 99th percentile of 200 reads of 100 (each acked) from one
                          feed among 100,000 feed destinations holding
                          BENCH_FEED_WAITING messages (default 10,000,000; 1,000,000
                          with --quick) nobody reads; the details give the same reads
                          from the feed alone (feed_read_alone_p99_ms)
"""

ONLY = """--only feeds measures feed_per_s, feed_vs_http and feed_read_p99_ms alone."""

CONSUMERS = 8
BATCH = 100


def waiting(b) -> int:
    default = 1000000 if b.cfg.quick else 10000000
    return int(os.environ.get("BENCH_FEED_WAITING", default)) // 10 * 10


class Verifier:
    """Standard Webhooks: v1,base64(HMAC-SHA256(secret, id.timestamp.body))."""

    def __init__(self, secret: str):
        self.key = base64.b64decode(secret.removeprefix("whsec_"))

    def check(self, message: dict) -> bool:
        h = message["headers"]
        signed = f"{h['webhook-id']}.{h['webhook-timestamp']}.{message['body']}".encode()
        expected = base64.b64encode(hmac.new(self.key, signed, hashlib.sha256).digest()).decode()
        return any(sig == f"v1,{expected}" for sig in h["webhook-signature"].split(" "))


class Consumer:
    """One consumer's loop on its own connection: read a batch, verify it, ack it."""

    def __init__(self, b, port: int, destination: str, verifier: Verifier, seen, lock):
        self.b, self.port, self.destination = b, port, destination
        self.verifier, self.seen, self.lock = verifier, seen, lock
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {**b.auth(), "Content-Type": "application/json"}
        self.acked = self.bad = self.duplicates = 0
        self.read_ms = []
        self.error = ""

    def call(self, method: str, path: str, body=None) -> dict:
        self.conn.request(method, path, body=body, headers=self.headers)
        response = self.conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path} answered {response.status}: {data[:200]!r}")
        return json.loads(data)

    def read(self) -> list:
        t0 = time.perf_counter()
        page = self.call("GET", f"/v1/destinations/{self.destination}/messages?limit={BATCH}"
                         "&lease=60s")
        self.read_ms.append(f"{(time.perf_counter() - t0) * 1000:.2f}")
        return page["data"]

    def ack(self, messages: list) -> None:
        ids = [m["id"] for m in messages]
        for m in messages:
            if not self.verifier.check(m):
                self.bad += 1
        with self.lock:
            self.duplicates += sum(1 for i in ids if i in self.seen)
            self.seen.update(ids)
        answer = self.call("POST", f"/v1/destinations/{self.destination}/messages/ack",
                           json.dumps({"ids": ids}))
        self.acked += answer["acked"]

    def run(self, deadline: float, reads=None) -> None:
        """Until a read comes back empty, READS reads were made, or DEADLINE passes."""
        try:
            while time.monotonic() < deadline and (reads is None or len(self.read_ms) < reads):
                messages = self.read()
                if not messages:
                    return
                self.ack(messages)
        except (OSError, http.client.HTTPException, RuntimeError, KeyError) as e:
            self.error = str(e)[:300]
        finally:
            self.conn.close()


def feed_id(db) -> str:
    return "dst_" + db.query("SELECT max(id) FROM webhookd.destinations WHERE url = 'feed:'")


def consume(b, name: str, port: int, destination: str, consumers: int, reads=None) -> list:
    """CONSUMERS consumers at once until the feed is empty (at most 10 minutes)."""
    seen, lock = set(), threading.Lock()
    verifier = Verifier(b.secret)
    group = [Consumer(b, port, destination, verifier, seen, lock) for _ in range(consumers)]
    deadline = time.monotonic() + 600
    threads = [threading.Thread(target=c.run, args=(deadline, reads)) for c in group]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = [c.error for c in group if c.error]
    if errors:
        die(f"{name}: a consumer failed: {errors[0]}")
    return group


def feed_drain(b, n: int) -> tuple:
    """N messages of one feed read and acked by 8 consumers; (rate, valid)."""
    db = b.new_db("bench_feed")
    db.sql("feed", n=n, secret=b.secret)
    proc, port = b.start_webhookd("server-feed", "server", db)
    t0 = time.monotonic()
    group = consume(b, "feed", port, feed_id(db), CONSUMERS)
    seconds = time.monotonic() - t0
    b.procs.stop(proc)
    acked = sum(c.acked for c in group)
    bad = sum(c.bad for c in group)
    duplicates = sum(c.duplicates for c in group)
    succeeded, unfinished, attempts = db.sql("feed_finished").split("|")
    db.drop()
    rate = f"{acked / seconds:.0f}"
    log(f"feed: {acked} of {n} acked in {int(seconds * 1000)} ms: {rate}/s; bad signatures"
        f" {bad}, read twice {duplicates}, succeeded {succeeded}, unfinished {unfinished},"
        f" attempts {attempts}")
    valid = (acked == n and bad == 0 and duplicates == 0 and succeeded == str(n)
             and unfinished == "0" and attempts == str(n))
    if not valid:
        b.invalidate(f"feed: {acked} of {n} acked, {bad} bad signatures, {duplicates} read twice,"
                     f" {succeeded} succeeded, {unfinished} unfinished, {attempts} attempts",
                     "feed_per_s", "feed_vs_http")
    return rate, valid


def read_p99(b, dbname: str, destinations: int, messages: int) -> tuple:
    """200 reads of 100, each acked, from the measured feed; (p99, p50, load seconds)."""
    db = b.new_db(dbname)
    t0 = time.monotonic()
    db.sql("feeds_waiting", destinations=destinations, waiting=messages, target=20000,
           secret=b.secret)
    load_s = int(time.monotonic() - t0)
    proc, port = b.start_webhookd(f"server-{dbname}", "server", db)
    (c,) = consume(b, dbname, port, feed_id(db), 1, reads=200)
    b.procs.stop(proc)
    db.drop()
    if len(c.read_ms) < 200 or c.bad or c.duplicates:
        b.invalidate(f"{dbname}: {len(c.read_ms)} reads of 200, {c.bad} bad signatures,"
                     f" {c.duplicates} read twice", "feed_read_p99_ms")
    return percentile(c.read_ms, 0.99), median(c.read_ms), load_s


def measure(b) -> Part:
    n = b.cfg.deliveries // 2
    log(f"feeds: {n} messages read by {CONSUMERS} consumers against the HTTP drain of {n},"
        " three pairs")
    feeds, drains, ratios = [], [], []
    for run in (1, 2, 3):
        http_rate = preloaded_drain(b, f"feed-http-{run}", "bench_feed_http", n)
        feed_rate, _ = feed_drain(b, n)
        feeds.append(feed_rate)
        drains.append(http_rate.rate)
        ratios.append(ratio(feed_rate, http_rate.rate))
    many = waiting(b)
    log(f"feeds: 200 reads of one feed beside 100,000 feeds holding {many} messages, then alone")
    p99, p50, load_s = read_p99(b, "bench_feeds_waiting", 100000, many)
    alone_p99, alone_p50, _ = read_p99(b, "bench_feed_alone", 10, 0)
    part = Part()
    part.add("feed_per_s", median(feeds), "", spread(feeds))
    part.add("feed_vs_http", median(ratios), ">= 1.0", spread(ratios))
    part.add("feed_read_p99_ms", p99, "<= 25")
    part.details["feeds"] = (
        f"feeds          {n} messages, three pairs: HTTP drain {' '.join(drains)} /s, feed"
        f" {' '.join(feeds)} /s (ratios {' '.join(ratios)}); 200 reads of 100 beside {many}"
        f" waiting (loaded in {load_s} s): p50 {p50} ms, p99 {p99} ms; alone: p50"
        f" {alone_p50} ms, p99 {alone_p99} ms (feed_read_alone_p99_ms)")
    return part
