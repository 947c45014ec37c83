#!/usr/bin/env python3
"""Where a run of scripts/test spent its time: written to BUILD/suite-profile.md.

Reads what the run left in its build tree: suite-phases.tsv (each phase's wall time, from
scripts/test), .ninja_log (each build step's time, the last time it ran) and
ctest-junit.xml (each test's time). Prints the phases and the heaviest steps and tests.
"""
import collections
import os
import sys
import xml.etree.ElementTree as ET


def phases(build):
    path = os.path.join(build, "suite-phases.tsv")
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as f:
        for line in f:
            name, _, secs = line.rstrip("\n").rpartition("\t")
            if name:
                rows.append((name, int(secs)))
    return rows


def build_steps(build):
    """(seconds, output) per step in .ninja_log, the newest entry of each output."""
    path = os.path.join(build, ".ninja_log")
    if not os.path.exists(path):
        return []
    newest = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4:
                continue
            start, end, output = int(parts[0]), int(parts[1]), parts[3]
            newest[output] = (end - start) / 1000.0
    return sorted(((s, o) for o, s in newest.items()), reverse=True)


def room_of(output):
    # tests/worker/CMakeFiles/x.dir/y.cc.o and the link tests/worker/x: tests/worker.
    if "/CMakeFiles/" in output:
        return output.split("/CMakeFiles/")[0]
    return os.path.dirname(output) or "."


def tests(build):
    """(seconds, name) per test of the last ctest run."""
    path = os.path.join(build, "ctest-junit.xml")
    if not os.path.exists(path):
        return []
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        out.append((float(case.get("time", "0")), case.get("name", "?")))
    return sorted(out, reverse=True)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-test"
    lines = ["# Where the suite's time went", ""]
    ph = phases(build)
    if ph:
        lines += ["| phase | wall s |", "| --- | ---: |"]
        lines += [f"| {n} | {s} |" for n, s in ph]
        lines += [f"| total | {sum(s for _, s in ph)} |", ""]
    steps = build_steps(build)
    if steps:
        by_room = collections.Counter()
        for secs, out in steps:
            by_room[room_of(out)] += secs
        lines += [f"Build: {len(steps)} steps, {sum(s for s, _ in steps):.0f} s of one core in all.", ""]
        lines += ["| room | core s |", "| --- | ---: |"]
        lines += [f"| {r} | {s:.0f} |" for r, s in by_room.most_common(15)]
        lines += ["", "| slowest step | s |", "| --- | ---: |"]
        lines += [f"| {o} | {s:.1f} |" for s, o in steps[:15]]
        lines.append("")
    ts = tests(build)
    if ts:
        by_exe = collections.Counter()
        for secs, name in ts:
            by_exe[name.split(".", 1)[0]] += secs
        lines += [f"Tests: {len(ts)}, {sum(s for s, _ in ts):.0f} s of test time in all.", ""]
        lines += ["| test file | test s |", "| --- | ---: |"]
        lines += [f"| {e} | {s:.0f} |" for e, s in by_exe.most_common(20)]
        lines += ["", "| slowest test | s |", "| --- | ---: |"]
        lines += [f"| {n} | {s:.1f} |" for s, n in ts[:20]]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(build, "suite-profile.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
