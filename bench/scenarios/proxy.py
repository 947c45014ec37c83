"""The egress proxy: the drain of N through a local tinyproxy (a CONNECT tunnel each)."""

import re
import shutil
import subprocess
import time

from harness.drain import drain, preload, preloaded_drain
from harness.figures import Part
from harness.log import die, log
from harness.processes import free_port, port_in_use, tail
from harness.stats import median, ratio, spread

HELP = """\
  proxy_ratio             the drain of delivery_per_s with WEBHOOKD_EGRESS_PROXY set to a
                          local tinyproxy (every attempt through a CONNECT tunnel), over
                          the same drain direct run just before it: the median of three
                          such pairs, no target (what the proxy costs on this machine).
                          INVALID when a drain did not end with every delivery succeeded
                          in exactly one attempt each, or the proxy saw no CONNECT
"""

ONLY = "--only proxy measures proxy_ratio alone the same way."

# No ConnectPort line: CONNECT to any port (the sink's is random).
CONF = """Port {port}
Listen 127.0.0.1
Timeout 30
LogFile "{log}"
LogLevel Connect
MaxClients 500
Allow 127.0.0.1
DisableViaHeader Yes
"""


def start_proxy(b) -> tuple:
    """tinyproxy on a free loopback port; (process, port, its log)."""
    directory = b.work / "tinyproxy"
    directory.mkdir()
    port, log_path = free_port(), directory / "tinyproxy.log"
    conf = directory / "tinyproxy.conf"
    conf.write_text(CONF.format(port=port, log=log_path))
    proc = b.procs.start("tinyproxy", ["tinyproxy", "-d", "-c", conf])
    for _ in range(200):
        if port_in_use(port):
            return proc, port, log_path
        if proc.poll() is not None:
            die(f"tinyproxy exited: {tail(b.procs.log_of('tinyproxy'), 5)}")
        time.sleep(0.1)
    die(f"tinyproxy is not listening on {port} after 20 s")


def connects(b, log_path) -> int:
    """The CONNECTs to the sink in tinyproxy's log so far."""
    pattern = re.compile(rf"Request \(file descriptor [0-9]*\): CONNECT 127\.0\.0\.1:{b.sink.port} ")
    try:
        return sum(1 for line in log_path.read_text(errors="replace").splitlines()
                   if pattern.search(line))
    except OSError:
        return 0


def proxied(b, run, proc, port, log_path) -> tuple:
    """One drain of N through the proxy; (rate, tunnels, valid)."""
    n = b.cfg.deliveries
    db = b.new_db("bench_proxy")
    preload(b, db, n)
    if proc.poll() is not None:
        die(f"tinyproxy exited: {tail(b.procs.log_of('tinyproxy'), 5)}")
    before = connects(b, log_path)
    done = drain(b, f"proxy-{run}", "worker", n, db,
                 env={"WEBHOOKD_EGRESS_PROXY": f"http://127.0.0.1:{port}"})
    tunnels = connects(b, log_path) - before
    valid = done.valid
    if tunnels == 0:
        b.note(f"proxy-{run}: tinyproxy logged no CONNECT to the sink: the drain did not go"
               " through it")
        valid = False
    log(f"proxy-{run}: {tunnels} CONNECT tunnels")
    db.drop()
    return done.rate, tunnels, valid


def measure(b) -> Part:
    """A local tinyproxy, then three pairs of the drain of N, direct then through it."""
    part = Part()
    if not shutil.which("tinyproxy"):
        b.note("proxy: not measured: tinyproxy is not installed")
        part.add("proxy_ratio", "n/a")
        part.details["proxy"] = "proxy          not measured"
        return part
    version = (subprocess.run(["tinyproxy", "-v"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True).stdout.splitlines() or [""])[0]
    proc, port, log_path = start_proxy(b)
    n = b.cfg.deliveries
    log(f"proxy: {n} pre-loaded deliveries, webhookd worker, direct then through {version} on"
        f" port {port}, three pairs")
    direct, through, ratios, tunnels, valid = [], [], [], [], True
    for run in (1, 2, 3):
        done = preloaded_drain(b, f"proxy-direct-{run}", "bench_proxy_direct")
        direct.append(done.rate)
        rate, tunneled, ok = proxied(b, run, proc, port, log_path)
        through.append(rate)
        tunnels.append(str(tunneled))
        ratios.append(ratio(rate, direct[-1]))
        valid = valid and ok and done.valid
    b.procs.stop(proc)
    proxy_ratio = median(ratios)
    part.add("proxy_ratio", proxy_ratio if valid else "INVALID", "", spread(ratios))
    part.details["proxy"] = (f"proxy          {n} over 3 destinations, three pairs: direct"
                             f" {' '.join(direct)} /s, through {version} {' '.join(through)} /s"
                             f" (ratios {' '.join(ratios)}, median {proxy_ratio}; CONNECT tunnels"
                             f" {' '.join(tunnels)})")
    return part
