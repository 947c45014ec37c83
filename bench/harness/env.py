"""The environment header of the report: what the figures were measured on."""

import os
import subprocess
import time
from pathlib import Path


def _run(argv, cwd=None, timeout=30, env=None) -> str:
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             cwd=cwd, timeout=timeout, env=env)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def load_avg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return ""


def _memory() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 1048576:.1f} GiB"
    return ""


def _commit(root: Path) -> str:
    commit = _run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"]) or "unknown"
    if commit != "unknown":
        clean = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD"],
                               env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if clean.returncode != 0:
            commit += " (with uncommitted changes)"
    return commit


def _fsync(bench) -> str:
    """What one commit's flush costs on this disk, where the cluster lives: the bound of
    every figure that waits for commits."""
    test = bench.work / "fsync.test"
    out = _run([str(bench.cluster.bin / "pg_test_fsync"), "-s", "1", "-f", str(test)],
               cwd=bench.work, timeout=90)
    test.unlink(missing_ok=True)
    seen = False
    for line in out.splitlines():
        if "one 8kB write" in line:
            seen = True
        words = line.split()
        if seen and len(words) >= 4 and words[0] == "fdatasync":
            return f"{words[1]} ops/s, {words[3]} us/op"
    return ""


def environment(bench) -> list:
    cfg, cluster = bench.cfg, bench.cluster
    postgres = _run([str(cluster.bin / "postgres"), "--version"])
    fsync = cluster.query("postgres", "SHOW fsync")
    sync = cluster.query("postgres", "SHOW synchronous_commit")
    return [
        f"date:        {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        f"mode:        {cfg.mode()}",
        f"nproc:       {len(os.sched_getaffinity(0))} ({_cpu()})",
        f"memory:      {_memory()}",
        f"kernel:      {os.uname().release}",
        f"postgresql:  {postgres} (fsync {fsync}, synchronous_commit {sync})",
        f"fsync:       fdatasync {_fsync(bench) or 'not measured'} (pg_test_fsync, one 8kB write, in the run's directory)",
        f"cpp-httplib: {_run(['pkg-config', '--modversion', 'cpp-httplib'])}",
        f"git commit:  {_commit(cfg.root)}",
        f"load avg:    {load_avg()} at the start (the machine may be shared)",
    ]
