#!/usr/bin/env python3
"""Lists a room's test executable as ctest tests named after the file each TEST is in.

Usage: room_tests.py EXE OUT.cmake WORKDIR TIMEOUT [--label L]... [--env K=V]... [--cost C]
                     [--threads FILE_STEM]...

A room's test files are built into one executable (tests/CMakeLists.txt,
webhookd_test_room), yet each TEST stays the ctest test `FILE_STEM.Suite.Name` it was when
every file had its executable: `ctest -R filters_e2e_test` still selects one file's tests.
gtest's JSON listing gives each test's file. A suite named in two files of one room is an
error here: gtest would run them under one fixture, and the name would lead to two files.
The tests of each --threads file (one whose tests start threads) also carry the label
threads, which the ThreadSanitizer pass runs. With --check-threads, a file whose source
starts a thread or uses a class that does (STARTS_THREADS) and is not a --threads file is
an error: the ThreadSanitizer pass would leave it out.
"""
import json
import os
import re
import subprocess
import sys
import tempfile


# What gtest prints for a test that skipped itself (a regular expression).
SKIPPED = r"\[  SKIPPED \]"

# What starts a thread in a test's process: the standard library's own, and the classes
# of webhookd and of tests/testing that run one (found by `grep -rn std::thread`, and
# checked against what the tests do by scripts/lib/thread_audit.py). A class that starts
# a thread is added here when it is written.
STARTS_THREADS = re.compile(
    r"std::(thread|jthread|async)\b|\b(SystemResolver|HttpListener|HttpServer(?!::)|GroupCommitter"
    r"|OtlpExporter|CurlTransport|CurlSender|Dispatcher|Purger|Recoverer|FeedWaiters|SocketWatchdog|ThreadedSender"
    r"|BrokerConnections|RedisTransport|AmqpTransport|NatsTransport|KafkaTransport"
    r"|Receiver|TlsReceiver|RawListener|DnsServer|ForwardProxy|WorkerChaos|FailoverLoad)\b")


def bracket(text):
    """A CMake bracket argument that holds text whatever it contains."""
    level = 1
    while f"]{'=' * level}]" in text:
        level += 1
    return f"[{'=' * level}[{text}]{'=' * level}]"


def main():
    exe, out, workdir, timeout = sys.argv[1:5]
    given = {"--label": [], "--env": [], "--cost": [], "--threads": []}
    rest = sys.argv[5:]
    check_threads = "--check-threads" in rest
    rest = [arg for arg in rest if arg != "--check-threads"]
    for flag, value in zip(rest[::2], rest[1::2]):
        given[flag].append(value)
    labels, env = given["--label"], given["--env"]
    with tempfile.TemporaryDirectory() as tmp:
        listing = os.path.join(tmp, "list.json")
        subprocess.run([exe, "--gtest_list_tests", f"--gtest_output=json:{listing}"],
                       check=True, stdout=subprocess.DEVNULL, timeout=60, cwd=workdir)
        with open(listing) as f:
            suites = json.load(f)["testsuites"]
    lines, file_of_suite = [], {}

    def properties(stem):
        own = labels + ["threads"] if stem in given["--threads"] else labels
        text = (f"WORKING_DIRECTORY {bracket(workdir)} "
                f"SKIP_REGULAR_EXPRESSION {bracket(SKIPPED)} "
                f"LABELS {bracket(';'.join(own))} TIMEOUT {timeout}")
        if env:
            text += f" ENVIRONMENT {bracket(';'.join(env))}"
        if given["--cost"]:
            text += f" COST {given['--cost'][-1]}"
        return text

    checked = set()
    for suite in suites:
        for test in suite["testsuite"]:
            stem = os.path.splitext(os.path.basename(test["file"]))[0]
            if check_threads and stem not in given["--threads"] and test["file"] not in checked:
                checked.add(test["file"])
                with open(test["file"], errors="replace") as f:
                    found = STARTS_THREADS.search(f.read())
                if found:
                    sys.exit(f"error: {test['file']} starts threads ({found.group(0)}): name it "
                             "in its room's THREADS (the ThreadSanitizer pass runs those)")
            seen = file_of_suite.setdefault(suite["name"], stem)
            if seen != stem:
                sys.exit(f"error: test suite {suite['name']} is in both {seen}.cc and "
                         f"{stem}.cc of one room: rename one")
            gtest_name = f"{suite['name']}.{test['name']}"
            name = bracket(f"{stem}.{gtest_name}")
            lines.append(f"add_test({name} {bracket(exe)} "
                         f"{bracket('--gtest_filter=' + gtest_name)} "
                         "--gtest_also_run_disabled_tests)")
            lines.append(f"set_tests_properties({name} PROPERTIES {properties(stem)})")
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
