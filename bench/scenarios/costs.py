"""Costs: what a delivery costs PostgreSQL and the machine, from PostgreSQL's own WAL
(pg_walinspect) and /proc, with N events ingested by `webhookd server` alone, then
drained by `webhookd worker` alone."""

import os
import resource
import time

from harness import cpu, wal
from harness.figures import Part
from harness.load import load
from harness.log import log
from harness.processes import tail
from harness.profile import Profile
from harness.stats import field, num

HELP = """\
  wal_bytes_per_delivered_event
                          WAL written (pg_current_wal_lsn() moved) per event of one
                          destination, from POST /v1/events to a succeeded delivery:
                          wal_bytes_ingest_per_event + wal_bytes_drain_per_delivery. N
                          events (BENCH_COST_EVENTS, default 20,000) ingested by
                          `webhookd server` alone (bench_load, 64 connections, closed
                          loop), then drained by `webhookd worker` alone to the sink
  btree_inserts_per_delivered_event
                          B-tree leaf entries added (pg_walinspect: Btree INSERT_LEAF and
                          INSERT_POST records) per event, ingest + drain; page splits are
                          in the details
  heap_records_per_delivery
                          Heap and Heap2 WAL records of the drain per delivery, each kind
                          also a line (heap_inserts, _updates, _hot_updates, _deletes,
                          _other_per_delivery)
  row_locks_per_delivery  Heap LOCK (and Heap2 LOCK_UPDATED) records of the drain per
                          delivery: each is a row lock written to WAL
  cpu_us_per_event        CPU (/proc utime + stime) of webhookd server and of PostgreSQL
                          (postmaster, every backend, exited ones included) per event
                          ingested; _webhookd, _postgres and _machine (every CPU's busy
                          time in /proc/stat: the sink, bench_load and anything else on
                          the machine included) lines split it
  cpu_us_per_delivery     the same for the drain by webhookd worker, per delivery
  cpu_us_per_delivered_event
                          cpu_us_per_event + cpu_us_per_delivery: webhookd and PostgreSQL
                          CPU per event delivered. Every event delivered exactly once
                          (the sink's verified ids) and attempts == deliveries gate all
                          of these figures; a checkpoint or an autovacuum inside a phase
                          runs the case once more, and twice makes them INVALID
"""

ONLY = """\
--only costs measures the per-delivery costs alone (wal_bytes_per_delivered_event ...);
--profile DIR (with it) also runs perf record and pidstat -t during each phase and
writes DIR/summary.txt (docs/benchmarks.md, "Where the time goes")."""

FIGURES = [
    "wal_bytes_per_delivered_event", "wal_bytes_ingest_per_event", "wal_bytes_drain_per_delivery",
    "btree_inserts_per_delivered_event", "btree_inserts_ingest_per_event",
    "btree_inserts_drain_per_delivery", "heap_records_per_delivery", "heap_inserts_per_delivery",
    "heap_updates_per_delivery", "heap_hot_updates_per_delivery", "heap_deletes_per_delivery",
    "heap_other_per_delivery", "row_locks_per_delivery", "cpu_us_per_event",
    "cpu_us_per_event_webhookd", "cpu_us_per_event_postgres", "cpu_us_per_event_machine",
    "cpu_us_per_delivery", "cpu_us_per_delivery_webhookd", "cpu_us_per_delivery_postgres",
    "cpu_us_per_delivery_machine", "cpu_us_per_delivered_event",
]


def events() -> int:
    return int(os.environ.get("BENCH_COST_EVENTS", 20000))


class Phase:
    """One phase's counters: the LSN first and the CPU after it at the start, the CPU
    first and the LSN after it at the end, so the psql that reads an LSN is outside the
    CPU window."""

    def __init__(self, b, db, name: str):
        self.b, self.db, self.name = b, db, name
        self.postmaster = cpu.postmaster_pid(b.work / "pg")
        self.sink_pid = next(p.pid for p in b.procs.started if p.name == "sink")
        self.wal = None
        self.us = {}

    def _ticks(self, webhookd_pid) -> dict:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return {"webhookd": cpu.process_ticks(webhookd_pid) if webhookd_pid else 0,
                "postgres": cpu.server_ticks(self.postmaster),
                "machine": cpu.machine_ticks(),
                "sink": cpu.process_ticks(self.sink_pid),
                # The bench's children that exited: bench_load in the ingest, the psql of
                # the drain's last polls.
                "children_s": kids.ru_utime + kids.ru_stime}

    def maintenance(self) -> list:
        """[the last checkpoint's redo point, checkpointer at work (0/1), autovacuum and
        autoanalyze runs, autovacuum workers at work]."""
        values = (self.db.sql("maintenance").split() + ["", "0", "0", "0"])[:4]
        return [values[0]] + [int(num(v)) for v in values[1:]]

    def disturbed(self) -> str:
        """What of PostgreSQL's own maintenance fell inside the phase; "" when none did. A
        checkpoint's full-page images and an autovacuum's WAL and CPU are no part of a
        delivery's cost, and neither comes back at the same moment in the next run."""
        (redo0, busy0, runs0, workers0), (redo1, busy1, runs1, workers1) = self.maint0, self.maint1
        found = []
        if redo1 != redo0 or busy0 or busy1 or self.wal.checkpoints():
            found.append(f"a checkpoint (redo point {redo0} then {redo1}, checkpointer at work"
                         f" {busy0} at the start and {busy1} at the end,"
                         f" {self.wal.checkpoints()} checkpoint records)")
        if runs1 > runs0 or workers0 or workers1:
            found.append(f"{runs1 - runs0} autovacuum or autoanalyze runs finished, autovacuum"
                         f" workers at work {workers0} at the start and {workers1} at the end")
        return f"{self.name}: {', '.join(found)}" if found else ""

    def start(self, webhookd_pid=None) -> None:
        self.maint0 = self.maintenance()
        self.lsn0 = wal.lsn(self.b.cluster, self.db.name)
        self.t0 = time.monotonic()
        self.cpu0 = self._ticks(webhookd_pid)

    def end(self, webhookd_pid) -> None:
        cpu1 = self._ticks(webhookd_pid)
        self.seconds = time.monotonic() - self.t0
        lsn1 = wal.lsn(self.b.cluster, self.db.name)
        for k in ("webhookd", "postgres", "machine", "sink"):
            self.us[k] = (cpu1[k] - self.cpu0[k]) * cpu.TICK_US
        self.us["children"] = (cpu1["children_s"] - self.cpu0["children_s"]) * 1e6
        self.wal = wal.between(self.b.cluster, self.db.name, self.lsn0, lsn1)
        self.maint1 = self.maintenance()


def ingest(b, db, port, n, profile) -> tuple:
    """N events through POST /v1/events; (phase, bench_load's line)."""
    phase = Phase(b, db, "ingest")
    server = next(p for p in b.procs.started if p.name == "costs-server")
    phase.start(server.pid)
    profile.start_postgres("ingest", phase.postmaster)
    profile.start_webhookd("ingest", server.pid)
    line = load(b, "costs-ingest", "--port", port, "--key", b.key, "--duration",
                b.cfg.load_s + 50, "--max-requests", n)
    phase.end(server.pid)
    profile.stop()
    if field(line, "ok") != str(n):
        b.invalidate(f"costs-ingest: {field(line, 'ok') or 'no'} events accepted of {n}",
                     *FIGURES)
    return phase, line


def drain(b, db, n, profile) -> Phase:
    """`webhookd worker` alone until the sink counted N and no delivery is left unfinished
    (the sink polled every 100 ms, the database once the count is there)."""
    phase = Phase(b, db, "drain")
    profile.start_postgres("drain", phase.postmaster)
    phase.start()
    proc = b.procs.start("costs-worker", [b.webhookd, "worker"], env=b.wh_env(db))
    if profile.dir:
        # Its threads are up once it listens: perf attaches to each (a few milliseconds
        # of the drain go unsampled).
        b.procs.listening_port(proc)
        profile.start_webhookd("drain", proc.pid)
    cap_s, done = min(n // 1000 + 60, 600), False
    while time.monotonic() - phase.t0 < cap_s:
        time.sleep(0.1)
        if proc.poll() is not None:
            profile.stop()
            b.invalidate(f"costs-worker exited: {tail(b.procs.log_of('costs-worker'), 5)}",
                         *FIGURES)
            return phase
        if b.sink.ok() >= n and db.sql("ok_unfinished") == "0":
            done = True
            break
    phase.end(proc.pid)
    profile.stop()
    b.procs.stop(proc)
    if not done:
        b.invalidate(f"costs-worker: {b.sink.ok()} of {n} delivered at the {cap_s} s cap",
                     *FIGURES)
    return phase


def per(value, n, digits=1) -> str:
    return f"{value / n:.{digits}f}" if n else "n/a"


def cpu_line(phase, n) -> str:
    us = phase.us
    children = "bench_load" if phase.name == "ingest" else "psql"
    return (f"webhookd {per(us['webhookd'], n)}, PostgreSQL {per(us['postgres'], n)}, sink"
            f" {per(us['sink'], n)}, {children} {per(us['children'], n)}, machine"
            f" {per(us['machine'], n)} us each ({phase.seconds:.1f} s)")


def wal_line(phase, n) -> str:
    w = phase.wal
    btree = ", ".join(f"{k} {per(v, n, 2)}" for k, v in sorted(w.of("Btree").items()))
    heap = ", ".join(f"{k} {per(v, n, 2)}" for k, v in w.heap().items())
    heap2 = ", ".join(f"{k} {per(v, n, 2)}" for k, v in sorted(w.of("Heap2").items()))
    return (f"WAL {per(w.bytes, n)} B each ({per(w.fpi_bytes, n)} B full-page images,"
            f" {w.checkpoints()} checkpoints); Btree: {btree}; heap: {heap} (Heap2: {heap2})")


def once(b, n, profile) -> tuple:
    """The ingest and the drain on a fresh database; (ingest phase, drain phase, the
    ingest's bench_load line)."""
    db = b.new_db("bench_costs")
    b.cluster.query(db.name, "CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    # A month of days (docs/retention.md), as production has them: a statement over the
    # history plans and locks each day's partitions.
    db.sql("days", days=30)
    b.sink.reset()
    before = b.sink.stats_line()
    proc, port = b.start_webhookd("costs-server", "server", db)
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/ok/1")
    # A checkpoint now, so that none (timed every 5 minutes) is likely inside a phase; one
    # that still is makes the run count for nothing (measure()).
    b.cluster.query(db.name, "CHECKPOINT")
    ing, line = ingest(b, db, port, n, profile)
    b.procs.stop(proc)
    dr = drain(b, db, n, profile)
    attempts = int(num(db.sql("ok_attempts")))
    if attempts != n:
        b.invalidate(f"costs: {attempts} attempts recorded for {n} deliveries", *FIGURES)
    # Every event delivered once: N distinct webhook-ids, no duplicate, no bad signature.
    if not b.sink.verified("costs", n, 0, before):
        b.invalidate("costs: the sink's check failed (see above)", *FIGURES)
    db.drop()
    return ing, dr, line


def measure(b) -> Part:
    n = events()
    profile = Profile(b.cfg.profile_dir)
    log(f"costs: {n} events through webhookd server alone, then drained by webhookd worker"
        " alone; WAL from pg_walinspect, CPU from /proc")
    # A checkpoint or an autovacuum inside a phase: the whole case once more, then INVALID.
    for attempt in (1, 2):
        ing, dr, line = once(b, n, profile)
        if ing.wal is None or dr.wal is None:
            break  # a phase that did not finish: its figures were invalidated
        disturbed = "; ".join(filter(None, (ing.disturbed(), dr.disturbed())))
        if not disturbed:
            break
        if attempt == 1:
            b.note(f"costs: run again, PostgreSQL's maintenance fell inside a phase ({disturbed})")
        else:
            b.invalidate(f"costs: PostgreSQL's maintenance fell inside a phase twice"
                         f" ({disturbed})", *FIGURES)
    profile.summarize()

    part = Part()
    wi, wd = ing.wal, dr.wal
    if wi is None or wd is None:
        for name in FIGURES:  # a phase that did not finish: its figures were invalidated
            part.add(name, "INVALID")
        part.details["costs ingest"] = "costs ingest   not measured (see the notes)"
        part.details["costs drain"] = "costs drain    not measured (see the notes)"
        return part
    heap, ui, ud = wd.heap(), ing.us, dr.us
    add = part.add
    add("wal_bytes_per_delivered_event", per(wi.bytes + wd.bytes, n), "<= 1250")
    add("wal_bytes_ingest_per_event", per(wi.bytes, n))
    add("wal_bytes_drain_per_delivery", per(wd.bytes, n))
    add("btree_inserts_per_delivered_event", per(wi.btree_entries() + wd.btree_entries(), n, 2),
        "<= 6")
    add("btree_inserts_ingest_per_event", per(wi.btree_entries(), n, 2))
    add("btree_inserts_drain_per_delivery", per(wd.btree_entries(), n, 2))
    add("heap_records_per_delivery", per(heap["all"], n, 2), "<= 2")
    for kind, name in (("INSERT", "inserts"), ("UPDATE", "updates"),
                       ("HOT_UPDATE", "hot_updates"), ("DELETE", "deletes"), ("other", "other")):
        add(f"heap_{name}_per_delivery", per(heap[kind], n, 2))
    add("row_locks_per_delivery", per(heap["LOCK"], n, 2), "<= 1")
    add("cpu_us_per_event", per(ui["webhookd"] + ui["postgres"], n))
    add("cpu_us_per_event_webhookd", per(ui["webhookd"], n))
    add("cpu_us_per_event_postgres", per(ui["postgres"], n))
    add("cpu_us_per_event_machine", per(ui["machine"], n))
    add("cpu_us_per_delivery", per(ud["webhookd"] + ud["postgres"], n))
    add("cpu_us_per_delivery_webhookd", per(ud["webhookd"], n))
    add("cpu_us_per_delivery_postgres", per(ud["postgres"], n))
    add("cpu_us_per_delivery_machine", per(ud["machine"], n))
    add("cpu_us_per_delivered_event",
        per(ui["webhookd"] + ui["postgres"] + ud["webhookd"] + ud["postgres"], n), "<= 180")
    d = part.details
    d["costs ingest"] = (f"costs ingest   {n} events, webhookd server alone: {wal_line(ing, n)};"
                         f" CPU {cpu_line(ing, n)}; {line}")
    d["costs drain"] = (f"costs drain    {n} deliveries, webhookd worker alone: {wal_line(dr, n)};"
                        f" CPU {cpu_line(dr, n)}; splits (ingest+drain): "
                        f"{per(wi.btree_splits() + wd.btree_splits(), n, 3)} Btree records each")
    if profile.dir:
        d["costs profile"] = f"costs profile  {profile.dir / 'summary.txt'}"
    return part
