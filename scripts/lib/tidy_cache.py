#!/usr/bin/env python3
"""Keys for clang-tidy's findings, so a file whose inputs did not change is not analysed again.

Usage: tidy_cache.py BUILD_DIR SALT FILE...   prints "FILE<TAB>KEY" per file (run from the
checkout's top)

A file's key is the SHA-256 of the salt (clang-tidy's version, .clang-tidy and the extra
arguments, given by scripts/tidy), its compile command, and the path and content of every
file it includes (Ninja's record of the last build's dependencies, `ninja -t deps`). A file
Ninja has no record of gets no key and is always analysed.
"""
import hashlib
import json
import os
import re
import subprocess
import sys


def main():
    build, salt, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    by_file = {}
    for entry in commands:
        path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        by_file[path] = entry
    try:
        dump = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        dump = ""
    deps, current = {}, None
    for line in dump.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            current = line.split(":", 1)[0]
            deps[current] = []
        elif current is not None:
            deps[current].append(line.strip())
    # Paths under the checkout are hashed relative to it: another clone of the same tree
    # finds the same keys. (The checkout itself is an include directory, -I/path/to/it.)
    root = os.getcwd() + os.sep
    top = re.compile(re.escape(os.getcwd()) + r"(?=[/\s\"']|$)")
    digests = {}

    def digest(path):
        if path not in digests:
            try:
                with open(path, "rb") as f:
                    digests[path] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                digests[path] = "missing"
        return digests[path]

    for name in files:
        entry = by_file.get(os.path.abspath(name))
        if entry is None:
            continue
        words = entry["command"].split()
        output = words[words.index("-o") + 1] if "-o" in words[:-1] else None
        if output not in deps:
            continue
        h = hashlib.sha256()
        h.update(salt.encode())
        h.update(top.sub("<root>", entry["command"]).encode())
        for dep in sorted(deps[output]):
            full = os.path.normpath(os.path.join(build, dep))
            h.update(full.replace(root, "<root>/").encode() + b"\0" + digest(full).encode() + b"\n")
        print(f"{name}\t{h.hexdigest()}")


if __name__ == "__main__":
    main()
