"""CPU time from /proc, in clock ticks (utime + stime): of one process, of a PostgreSQL
server (the postmaster, its live children and the children that exited), of the machine."""

import os
from pathlib import Path

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def _stat(pid) -> list:
    """The fields of /proc/PID/stat after the command name ("state" is [0]); [] when gone.
    The name is in parentheses and may hold spaces, so the split starts after the last ')'."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return text[text.rindex(")") + 2:].split()


def process_ticks(pid: int) -> int:
    """utime + stime of PID, all its threads; 0 when it is gone."""
    fields = _stat(pid)
    return int(fields[11]) + int(fields[12]) if fields else 0


def children(parent: int) -> list:
    """The pids whose parent is PARENT."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(entry.name)
            if fields and int(fields[1]) == parent:
                found.append(int(entry.name))
    return found


def tree_ticks(pid: int) -> int:
    """utime + stime of PID and of its live descendants (a broker started through a script)."""
    return process_ticks(pid) + sum(tree_ticks(child) for child in children(pid))


def postmaster_pid(datadir: Path) -> int:
    return int((datadir / "postmaster.pid").read_text().split()[0])


def server_ticks(postmaster: int) -> int:
    """The postmaster's own time, its exited (waited-for) children's (cutime + cstime) and
    its live children's: every backend and auxiliary process, whether it lived through the
    phase or not, counted once."""
    fields = _stat(postmaster)
    if not fields:
        return 0
    own = sum(int(f) for f in fields[11:15])
    return own + sum(process_ticks(pid) for pid in children(postmaster))


def machine_ticks() -> int:
    """Busy time of every CPU (/proc/stat: user, nice, system, irq, softirq, steal), so
    whatever else runs on the machine is in it too."""
    words = Path("/proc/stat").read_text().splitlines()[0].split()
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, words[1:9])
    return user + nice + system + irq + softirq + steal
