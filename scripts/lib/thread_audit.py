#!/usr/bin/env python3
"""Which test files start threads: runs a test executable under strace and says.

Usage: thread_audit.py EXE [gtest arguments...]

Runs EXE (a room's test executable, as built by scripts/test) once under
`strace -f`, follows the clone calls of its own process (not of the processes it
starts: a child's threads are not the test's), and marks a test as threaded when a
thread of the test process is created while it runs (a RUN line of gtest's output and
its end). Prints each test file of the executable, whether any of its tests started a
thread, and how many did: the ThreadSanitizer pass runs the files that do (label
threads: each room's THREADS in its CMakeLists.txt), and this is how that list is checked
against what the tests do rather than what their sources say (a thread started behind a
fixture, as the pg fixture's group committer, is found here). Tests that need PostgreSQL
read the environment scripts/test sets (WEBHOOKD_TEST_DATABASE_URL, WEBHOOKD_BIN).
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

LINE = re.compile(r"^(\d+)\s+(.*)$")
RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
RUN = re.compile(r"\[ RUN      \] (\S+?)\\n")
END = re.compile(r"\[ {7}OK \]|\[  FAILED  \]|\[  SKIPPED \]")


def file_of_tests(exe):
    with tempfile.TemporaryDirectory() as tmp:
        listing = os.path.join(tmp, "list.json")
        subprocess.run([exe, "--gtest_list_tests", f"--gtest_output=json:{listing}"],
                       check=True, stdout=subprocess.DEVNULL, timeout=60)
        with open(listing) as f:
            suites = json.load(f)["testsuites"]
    return {f"{s['name']}.{t['name']}": os.path.basename(t["file"])
            for s in suites for t in s["testsuite"]}


def main():
    exe, args = sys.argv[1], sys.argv[2:]
    files = file_of_tests(exe)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace")
        subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=clone,clone3,write",
                        "-e", "signal=none", "-s", "4096", exe, *args],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        with open(trace, errors="replace") as f:
            lines = f.read().splitlines()
    own, pending, current = set(), {}, None
    threaded = collections.Counter()
    for raw in lines:
        m = LINE.match(raw)
        if not m:
            continue
        pid, call = int(m.group(1)), m.group(2)
        if not own:
            own.add(pid)
        if pid not in own:
            continue
        if call.endswith("<unfinished ...>"):
            pending[pid] = call[: -len("<unfinished ...>")]
            continue
        r = RESUMED.match(call)
        if r:
            call = pending.pop(pid, r.group(1) + "(") + r.group(2)
        if call.startswith("write(1,"):
            # A write may hold several lines: the last marker in it says what runs now.
            marks = [(m.start(), m.group(1)) for m in RUN.finditer(call)]
            marks += [(m.start(), None) for m in END.finditer(call)]
            if marks:
                current = max(marks)[1]
        elif call.startswith(("clone(", "clone3(")) and "CLONE_THREAD" in call:
            ret = call.rsplit("=", 1)[-1].strip().split()[0]
            if ret.isdigit():
                own.add(int(ret))
                if current is not None:
                    threaded[current] += 1
    by_file = collections.defaultdict(lambda: [0, 0])
    for test, name in files.items():
        by_file[name][1] += 1
        if threaded[test]:
            by_file[name][0] += 1
    for name in sorted(by_file):
        n, total = by_file[name]
        print(f"{name}\t{'threads' if n else '-'}\t{n}/{total} tests start threads")


if __name__ == "__main__":
    main()
