"""The throw-away PostgreSQL cluster (scripts/lib/common.sh starts and stops it, as for
scripts/test and scripts/run) and the databases each case makes and drops in it."""

import os
import subprocess
from pathlib import Path

from .log import die

SUPERUSER = "webhookd"  # WEBHOOKD_PG_SUPERUSER of scripts/lib/common.sh


def common_sh(root: Path, script: str, *args) -> str:
    """Runs SCRIPT in bash with scripts/lib/common.sh sourced; its stdout."""
    out = subprocess.run(["bash", "-c", f'source "$0/scripts/lib/common.sh" && {script}',
                          str(root), *map(str, args)], stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        die(f"{script.split()[0]} failed (exit {out.returncode})")
    return out.stdout.strip()


class Cluster:
    """A server on 127.0.0.1:PORT; ENV is what libpq needs besides (a password file)."""

    def __init__(self, root: Path, port: int, env=None):
        self.root = root
        self.port = port
        self.env = dict(env or {})
        self.bin = Path(common_sh(root, "pg_bin_dir"))

    @classmethod
    def start(cls, root: Path, datadir: Path) -> "Cluster":
        port = common_sh(root, 'pg_start "$1" >&2 && printf "%s\\n" "${PGPORT}"', datadir)
        return cls(root, int(port))

    def stop(self, datadir: Path) -> None:
        common_sh(self.root, 'pg_stop "$1"', datadir)

    def url(self, db: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{db}"

    def psql(self, db: str, *args, env=None) -> str:
        """psql as the superuser over TCP on DB; its stdout. Dies on an error."""
        argv = [self.bin / "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                "-p", str(self.port), "-U", SUPERUSER, "-d", db, *args]
        out = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env={**os.environ, **self.env, **(env or {})})
        if out.returncode != 0:
            die(f"psql on {db} failed: {out.stderr.strip()[:500]}")
        return out.stdout.strip()

    def query(self, db: str, sql: str) -> str:
        return self.psql(db, "-tA", "-c", sql)

    def createdb(self, name: str) -> None:
        exists = self.psql("postgres", "-tA", "-c",
                           f"SELECT 1 FROM pg_database WHERE datname = '{name}'")
        if exists != "1":
            self.psql("postgres", "-c", f'CREATE DATABASE "{name}" ENCODING UTF8 TEMPLATE template0')

    def dropdb(self, name: str) -> None:
        self.psql("postgres", "-c", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Database:
    """One case's database: migrated by `webhookd migrate`, seeded by bench/sql/."""

    def __init__(self, cluster: Cluster, name: str, webhookd_url=None):
        self.cluster = cluster
        self.name = name
        self.url = cluster.url(name)
        # What webhookd connects to: the node itself, or a multi-host URL (the ha case).
        self.webhookd_url = webhookd_url or self.url

    def env(self) -> dict:
        return {"DATABASE_URL": self.webhookd_url, **self.cluster.env}

    def sql(self, file: str, **variables) -> str:
        """Runs bench/sql/FILE.sql in webhookd's schema; the rows, unaligned."""
        args = ["-tA", "-v", "ON_ERROR_STOP=1"]
        for name, value in variables.items():
            args += ["-v", f"{name}={value}"]
        args += ["-f", self.cluster.root / "bench" / "sql" / f"{file}.sql"]
        return self.cluster.psql(self.name, *args, env={"PGOPTIONS": "-c search_path=webhookd"})

    def query(self, sql: str) -> str:
        return self.cluster.query(self.name, sql)

    def drop(self) -> None:
        self.cluster.dropdb(self.name)
