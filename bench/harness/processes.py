"""The processes a run starts: each with its log in the run's directory, every one
killed at exit; ports only on loopback."""

import random
import re
import socket
import subprocess
import time
from pathlib import Path

from .log import die

LISTENING = re.compile(rb'(?:listening on |"msg":"listening","addr":")127\.0\.0\.1:([0-9]+)')


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def free_port() -> int:
    """A random port in 20000-60000 that nothing on loopback listens on."""
    for _ in range(100):
        port = random.randint(20000, 60000)
        if not port_in_use(port):
            return port
    die("found no free TCP port in 20000-60000")


def hwm_mib(pid: int) -> str:
    """Peak resident memory (VmHWM) of PID in MiB, "" when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return f"{int(line.split()[1]) / 1024:.1f}"
    except OSError:
        pass
    return ""


def tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def head(path: Path, chars: int) -> str:
    try:
        return path.read_text(errors="replace")[:chars]
    except OSError:
        return ""


class Processes:
    def __init__(self, work: Path):
        self.work = work
        self.started = []

    def log_of(self, name: str) -> Path:
        return self.work / f"{name}.log"

    def start(self, name: str, argv, env=None) -> subprocess.Popen:
        """Runs ARGV in the background, its output in $work/NAME.log."""
        with open(self.log_of(name), "wb") as out:
            proc = subprocess.Popen([str(a) for a in argv], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env)
        proc.name = name
        self.started.append(proc)
        return proc

    def listening_port(self, proc) -> int:
        """Waits (at most 20 s) for the port PROC logged it listens on: webhookd logs
        {"msg":"listening","addr":"127.0.0.1:PORT"}, the bench's programs "listening on
        127.0.0.1:PORT"."""
        path = self.log_of(proc.name)
        for _ in range(200):
            found = LISTENING.search(path.read_bytes()) if path.exists() else None
            if found:
                return int(found.group(1))
            if proc.poll() is not None:
                die(f"{proc.name} exited before listening: {tail(path, 20)}")
            time.sleep(0.1)
        die(f"{proc.name} is not listening after 20 s")

    def stop(self, proc) -> None:
        """SIGTERM, then SIGKILL after 30 s."""
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def kill_all(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
