"""One run of the bench: its directory, cluster, processes, main sink, keys and the
environment webhookd runs with; everything it started is stopped at exit."""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from . import http, processes
from .cluster import Cluster, Database
from .figures import Figures
from .log import die, log
from .sink import Sink


class Bench:
    def __init__(self, cfg):
        self.cfg = cfg
        self.root = cfg.root
        self.webhookd = self.root / "build-bench" / "webhookd"
        self.tools = self.root / "build-bench" / "bench"
        self.figs = Figures()
        self.work = Path(tempfile.mkdtemp(prefix="webhookd-bench.", dir="/tmp"))
        self.work.chmod(0o755)  # the postgres user must reach the cluster inside
        self.procs = processes.Processes(self.work)
        self.cluster = None
        self.key = "whk_bench_" + base64.urlsafe_b64encode(os.urandom(24)).decode().rstrip("=")
        self.secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
        self.sink = None
        self.sink_pid = 0

    def open(self) -> None:
        log(f"starting PostgreSQL in {self.work}")
        self.cluster = Cluster.start(self.root, self.work / "pg")
        proc = self.start_tool("sink", "bench_sink", "--hang-ms", 7000, "--secret", self.secret)
        self.sink = Sink(self, self.procs.listening_port(proc))
        self.sink_pid = proc.pid

    def close(self) -> None:
        self.procs.kill_all()
        if (self.work / "ha").is_dir():
            subprocess.run([str(self.root / "scripts" / "ha"), "down"],
                           env={**os.environ, "WEBHOOKD_HA_DIR": str(self.work / "ha")},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.cluster:
            self.cluster.stop(self.work / "pg")
        shutil.rmtree(self.work, ignore_errors=True)

    # --- shortcuts every scenario uses ------------------------------------------------

    def note(self, message: str) -> None:
        self.figs.note(message)

    def invalidate(self, message: str, *names) -> None:
        self.figs.invalidate(message, *names)

    def start_tool(self, name: str, tool: str, *args):
        return self.procs.start(name, [self.tools / tool, *args])

    def tool_sink(self, name: str, *args) -> tuple:
        """Another bench_sink (a recording one, a collector); (process, Sink)."""
        proc = self.start_tool(name, "bench_sink", *args)
        return proc, Sink(self, self.procs.listening_port(proc))

    def new_db(self, name: str, cluster=None, webhookd_url=None) -> Database:
        """A fresh database, migrated by `webhookd migrate`."""
        db = Database(cluster or self.cluster, name, webhookd_url)
        db.cluster.createdb(name)
        env = {**os.environ, **db.cluster.env, "DATABASE_URL": db.url}
        if subprocess.run([str(self.webhookd), "migrate"], env=env,
                          stdout=subprocess.DEVNULL).returncode != 0:
            die(f"webhookd migrate failed on {name}")
        return db

    def wh_env(self, db: Database, **extra) -> dict:
        """webhookd's environment on DB: the run's admin key, loopback destinations allowed,
        concurrency 64, a 5 s attempt timeout, ports chosen by the kernel."""
        return {**os.environ, **db.env(),
                "WEBHOOKD_BOOTSTRAP_ADMIN_KEY": self.key,
                "WEBHOOKD_ALLOW_PRIVATE_DESTINATIONS": "true",
                "WEBHOOKD_WORKER_CONCURRENCY": "64",
                "WEBHOOKD_ATTEMPT_TIMEOUT": "5s",
                "WEBHOOKD_ADDR": "127.0.0.1:0",
                "WEBHOOKD_WORKER_ADDR": "127.0.0.1:0",
                **{k: str(v) for k, v in extra.items()}}

    def start_webhookd(self, name: str, mode: str, db: Database, **extra) -> tuple:
        """`webhookd MODE` on DB with its API up; (process, port)."""
        proc = self.procs.start(name, [self.webhookd, mode], env=self.wh_env(db, **extra))
        port = self.procs.listening_port(proc)
        self.wait_api(port)
        return proc, port

    def auth(self) -> dict:
        return {"Authorization": f"Bearer {self.key}"}

    def wait_api(self, port: int) -> None:
        """Waits (at most 20 s) until the bootstrap admin key is accepted."""
        for _ in range(200):
            if http.request(port, "/v1/destinations", headers=self.auth(), timeout=2)[0] == 200:
                return
            time.sleep(0.1)
        die(f"webhookd on port {port} does not accept the admin key after 20 s")

    def create_destination(self, port: int, url: str) -> None:
        """One destination for order.* at URL, max_in_flight 64, signing with the run's
        secret (which the sinks verify)."""
        body = json.dumps({"url": url, "event_types": ["order.*"], "max_in_flight": 64,
                           "secret": self.secret})
        status, _, _ = http.request(port, "/v1/destinations", "POST", body,
                                    {**self.auth(), "Content-Type": "application/json"})
        if not 200 <= status < 300:
            die(f"cannot create a destination for {url}")
