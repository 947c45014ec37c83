"""What a synchronous standby costs: the ingest and a drain on the single node, then on a
Patroni cluster of two nodes in synchronous mode (scripts/ha)."""

import os
import subprocess

from harness.cluster import Cluster
from harness.drain import drain, preload
from harness.figures import Part
from harness.load import warm_and_load
from harness.log import log
from harness.processes import tail
from harness.stats import field, ratio

HELP = ""  # ha_ingest_ratio and ha_delivery_ratio: --only ha's own figures (ONLY below)

ONLY = """\
--only ha measures what a synchronous standby costs:
the ingest of ingest_events_per_s and the drain of delivery_per_s, first on the single
node, then on a Patroni cluster of two nodes in synchronous mode (scripts/ha up, in the
run's temporary directory) with webhookd on its multi-host URL; ha_ingest_ratio and
ha_delivery_ratio are the cluster's rates over the single node's (no target)."""


def case(b, name: str, cluster, ha_url=None) -> tuple:
    """On CLUSTER, webhookd on HA_URL's hosts when given: the closed-loop ingest of
    ingest_events_per_s, then a drain of N; (ingest rate, drain rate, valid)."""

    def new_db(dbname):
        url = ha_url.replace("/postgres?", f"/{dbname}?") if ha_url else None
        return b.new_db(dbname, cluster, url)

    db = new_db(f"bench_{name}")
    proc, port = b.start_webhookd(f"server-{name}", "server", db)
    b.create_destination(port, f"http://127.0.0.1:{b.sink.port}/ingest")
    line = warm_and_load(b, f"ingest-{name}", port, warmup=name)
    b.procs.stop(proc)
    valid = field(line, "failed") == "0"
    if not valid:
        b.note(f"{name}: failed requests: {line}")
    db.drop()
    db = new_db(f"bench_{name}_drain")
    preload(b, db, b.cfg.deliveries)
    done = drain(b, f"delivery-{name}", "worker", b.cfg.deliveries, db)
    db.drop()
    return field(line, "per_s"), done.rate, valid and done.valid


def ha_up(b) -> tuple:
    """scripts/ha up in the run's directory; (multi-host URL, the leader's Cluster), or
    (None, None) with a note."""
    ha = b.root / "scripts" / "ha"
    state = b.work / "ha"
    env = {**os.environ, "WEBHOOKD_HA_DIR": str(state)}
    up_log = b.work / "ha-up.log"
    with open(up_log, "w") as errors:
        out = subprocess.run([str(ha), "up"], env=env, stdout=subprocess.PIPE, stderr=errors,
                             text=True)
    url = next((line[len("DATABASE_URL="):] for line in out.stdout.splitlines()
                if line.startswith("DATABASE_URL=")), "")
    if out.returncode != 0 or not url:
        b.note(f"ha: scripts/ha up failed: {' '.join(tail(up_log, 5).splitlines())}")
        return None, None
    leader = subprocess.run([str(ha), "leader"], env=env, stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    settings = {}
    for line in (state / "ha.env").read_text().splitlines():
        key, _, value = line.partition("=")
        settings[key] = value.strip('"')
    # The printed URL holds no password: libpq (psql and webhookd) reads it from here.
    leader_cluster = Cluster(b.root, int(settings[f"{leader.upper()}_PG_PORT"]),
                             {"PGPASSFILE": str(state / "pgpass")})
    return url, leader_cluster


def measure(b) -> Part:
    """The single node, then the Patroni cluster."""
    log(f"ha: ingest and a drain of {b.cfg.deliveries} on the single node")
    single_ingest, single_drain, valid = case(b, "single", b.cluster)
    log("ha: the same on two Patroni nodes in synchronous mode (scripts/ha up)")
    part = Part()
    url, leader = ha_up(b)
    if not url:
        part.add("ha_ingest_ratio", "n/a")
        part.add("ha_delivery_ratio", "n/a")
        part.details["ha"] = "ha             not measured"
        return part
    ha_ingest, ha_drain, ha_valid = case(b, "ha", leader, url)
    subprocess.run([str(b.root / "scripts" / "ha"), "down"],
                   env={**os.environ, "WEBHOOKD_HA_DIR": str(b.work / "ha")},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    valid = valid and ha_valid
    part.add("ha_ingest_ratio", ratio(ha_ingest, single_ingest) if valid else "INVALID")
    part.add("ha_delivery_ratio", ratio(ha_drain, single_drain) if valid else "INVALID")
    part.details["ha"] = (f"ha             single node: ingest {single_ingest} /s, drain"
                          f" {single_drain} /s; two Patroni nodes, synchronous standby: ingest"
                          f" {ha_ingest} /s, drain {ha_drain} /s")
    return part
