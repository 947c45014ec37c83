"""bench_load, the load generator: each run bounded in time, its result line checked."""

import subprocess

from .figures import figures_of
from .log import log
from .processes import head
from .stats import field


def load(bench, name: str, *args, connections=None) -> str:
    """Runs bench_load (hard-capped in time) with ARGS; its result line. A run that is not
    a warm-up and had a failed request makes its figures INVALID."""
    cfg = bench.cfg
    err = bench.work / f"{name}.err"
    argv = [bench.tools / "bench_load", "--connections", connections or cfg.connections, *args]
    line, ok = "", False
    with open(err, "w") as errors:
        try:
            out = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=errors,
                                 text=True, timeout=cfg.load_s + 60)
            line, ok = out.stdout.strip(), out.returncode == 0
        except subprocess.TimeoutExpired:
            pass
    if not ok:
        bench.note(f"{name}: bench_load failed: {head(err, 300)}")
    if err.stat().st_size > 0:
        bench.note(f"{name}: {head(err, 300)}")
    failed = field(line or "failed=none", "failed")
    if failed != "0" and not name.endswith("-warmup"):
        bench.invalidate(f"{name}: {failed} requests failed", *figures_of(name))
    log(f"{name}: {line}")
    return line


def warm_and_load(bench, name: str, port: int, *args, key=True, rate=None, warmup=None) -> str:
    """A warm-up second (named WARMUP-warmup, by default NAME-warmup), then LOAD_S seconds
    of the same load; the measured line."""
    auth = ["--key", bench.key] if key else []
    paced = ["--rate", rate] if rate else []
    load(bench, f"{warmup or name}-warmup", "--port", port, *auth, "--duration", 1, *paced, *args)
    return load(bench, name, "--port", port, *auth, "--duration", bench.cfg.load_s, *paced, *args)
