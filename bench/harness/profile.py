"""--profile DIR: perf record on webhookd and on the PostgreSQL server, and pidstat -t on
webhookd, during each phase of the costs case; DIR/summary.txt sums them up (top symbols
by self time per process, CPU per webhookd thread). The raw data stays in DIR."""

import re
import signal
import subprocess
import time
from pathlib import Path

from . import cpu
from .log import log

# Neither webhookd's Release build nor Debian's PostgreSQL keeps frame pointers, so the
# stacks are unwound from a copy of the stack (DWARF); the self times do not depend on it.
PERF = ["perf", "record", "-F", "499", "--call-graph", "dwarf,8192"]
TOP = 15


class Profile:
    def __init__(self, directory):
        self.dir = Path(directory).resolve() if directory else None
        self.running = []
        self.phases = []
        if self.dir:
            self.dir.mkdir(parents=True, exist_ok=True)

    def start_postgres(self, phase: str, postmaster: int) -> None:
        """perf on the postmaster and its children; the backends it forks later inherit
        the sampling, so it starts before webhookd opens its connections."""
        if self.dir:
            self._perf(phase, "postgres",
                       lambda: ",".join(map(str, [postmaster, *cpu.children(postmaster)])))

    def start_webhookd(self, phase: str, pid: int) -> None:
        """perf on webhookd's threads and pidstat -t on it."""
        if not self.dir:
            return
        self.phases.append(phase)
        self._perf(phase, "webhookd", lambda: str(pid))
        self.running.append(subprocess.Popen(
            ["pidstat", "-t", "-u", "-p", str(pid), "1"],
            stdout=open(self.dir / f"{phase}-pidstat.txt", "w"), stderr=subprocess.STDOUT,
            env={"LC_ALL": "C", "S_TIME_FORMAT": "ISO", "PATH": "/usr/bin:/bin"}))

    def _perf(self, phase: str, who: str, pids) -> None:
        """perf record on PIDS() (a comma-separated list), retried when it exits at once:
        a pid in the list that exits before perf attaches (the backend of the psql that
        just read an LSN) makes it give up."""
        out = self.dir / f"{phase}-{who}.perf.data"
        for _ in range(5):
            proc = subprocess.Popen(
                [*PERF, "-o", str(out), "-p", pids()], stdout=subprocess.DEVNULL,
                stderr=open(self.dir / f"{phase}-{who}.perf.log", "w"))
            # perf killed by the SIGINT of stop() before it set up writes nothing.
            for _ in range(100):
                if proc.poll() is not None or (out.exists() and out.stat().st_size > 0):
                    break
                time.sleep(0.05)
            if proc.poll() is None:
                self.running.append(proc)
                return
            time.sleep(0.2)
        log(f"profile: perf record on {who} did not start; see {phase}-{who}.perf.log")

    def stop(self) -> None:
        """SIGINT: perf writes its data and pidstat its averages."""
        for proc in self.running:
            proc.send_signal(signal.SIGINT)
        for proc in self.running:
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.running = []

    def summarize(self) -> None:
        if not self.dir:
            return
        log(f"profile: summing up perf and pidstat into {self.dir}/summary.txt")
        lines = [f"perf record {' '.join(PERF[2:])} -p <pids>; pidstat -t -u -p <webhookd> 1",
                 "self time: % of the process's samples in that phase", ""]
        for phase in self.phases:
            for who in ("webhookd", "postgres"):
                data = self.dir / f"{phase}-{who}.perf.data"
                lines.append(f"== {phase}: {who}, by library, then top symbols by self time")
                lines += top_symbols(data, sort="dso", top=6)
                lines += top_symbols(data)
                lines.append("")
            lines.append(f"== {phase}: webhookd's threads (pidstat -t averages, %CPU of one"
                         " core; perf's samples by thread)")
            lines += threads(self.dir / f"{phase}-pidstat.txt")
            data = self.dir / f"{phase}-webhookd.perf.data"
            lines += top_symbols(data, sort="pid", top=8)
            lines.append(f"== {phase}: webhookd's busiest threads: their libraries, then their"
                         " symbols")
            lines += by_thread(data, "pid,dso")
            lines += by_thread(data, "pid,sym")
            lines.append("")
        (self.dir / "summary.txt").write_text("\n".join(lines) + "\n")


def top_symbols(data: Path, sort="dso,sym", top=TOP) -> list:
    """perf report's first TOP rows by self time."""
    try:
        out = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                              "-g", "none", "--sort", sort, "--percent-limit", "0.5"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             timeout=600).stdout
    except subprocess.TimeoutExpired:
        return ["  (perf report timed out)"]
    rows = [line.rstrip() for line in out.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    samples = re.search(r"# Samples: (\S+)", out)
    head = [f"  samples: {samples.group(1)}"] if samples else []
    # Boost's symbols run to hundreds of characters; the start names them well enough.
    return head + [f"  {row.strip()[:150]}" for row in rows[:top]]


def by_thread(data: Path, sort: str, threads=6, symbols=4) -> list:
    """The top SYMBOLS rows (SORT: "pid,dso" or "pid,sym") of each of the THREADS threads
    with the most samples: what each thread does (webhookd's threads have no names)."""
    rows = top_symbols(data, sort=sort, top=10000)
    per = {}
    for row in rows[1:]:
        words = row.split()
        if len(words) >= 3 and words[0].endswith("%"):
            # 12.34%  1234:webhookd  [.] symbol, or 12.34%  1234:webhookd  libcurl.so.4
            what = words[3:] if words[2] in ("[.]", "[k]") else words[2:]
            per.setdefault(words[1], []).append(f"{words[0]} {' '.join(what)}")
    lines = []
    for tid, syms in sorted(per.items(), key=lambda kv: -sum(
            float(s.split("%")[0]) for s in kv[1]))[:threads]:
        lines.append(f"  {tid}: {'; '.join(syms[:symbols])}")
    return lines


def threads(path: Path) -> list:
    """pidstat's Average rows of the threads, busiest first."""
    rows = []
    for line in path.read_text(errors="replace").splitlines() if path.exists() else []:
        words = line.split()
        # Average: UID TGID TID %usr %system %guest %wait %CPU CPU Command
        if words[:1] == ["Average:"] and len(words) >= 10 and words[3] != "-" \
                and words[3] != "TID" and re.fullmatch(r"[0-9.]+", words[8]):
            rows.append((float(words[8]), f"  tid {words[3]:>8}  %CPU {words[8]:>6}"
                                          f"  (%usr {words[4]}, %system {words[5]})"))
    rows.sort(reverse=True)
    return [r for _, r in rows[:12]] or ["  (no pidstat averages)"]
