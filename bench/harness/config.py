"""The run's sizes and mode, from the command line and the environment."""

import os
from dataclasses import dataclass
from pathlib import Path

# load seconds, N deliveries, backlog, platform events (five deliveries each), seconds of
# a sustained step
SIZES = {"full": (10, 200000, 1000000, 2000000, 30), "quick": (5, 50000, 200000, 400000, 15)}


@dataclass
class Config:
    root: Path
    quick: bool = False
    only: str = ""
    profile_dir: str = ""  # --profile: the costs case's perf and pidstat output
    soak: bool = False
    soak_minutes: int = 3
    load_s: int = 0
    deliveries: int = 0
    backlog: int = 0
    platform_events: int = 0
    step_s: int = 0
    connections: int = 64
    ingest_rate: int = 2000  # the paced ingest's events/s
    e2e_rate: int = 1000
    slow_deliveries: int = 1000  # enough to keep the hanging destination at its cap all run long

    def size(self) -> None:
        """The sizes of the mode; BENCH_* in the environment override them."""
        load_s, n, backlog, platform, step_s = SIZES["quick" if self.quick else "full"]
        self.load_s = int(os.environ.get("BENCH_LOAD_SECONDS", load_s))
        self.deliveries = int(os.environ.get("BENCH_DELIVERIES", n))
        self.backlog = int(os.environ.get("BENCH_BACKLOG", backlog))
        self.platform_events = int(os.environ.get("BENCH_PLATFORM_EVENTS", platform))
        self.step_s = int(os.environ.get("BENCH_STEP_SECONDS", step_s))

    def mode(self) -> str:
        only = f", only {self.only}" if self.only else ""
        return (f"{'quick' if self.quick else 'full'}{only} (load {self.load_s} s,"
                f" N {self.deliveries}, backlog {self.backlog})")
