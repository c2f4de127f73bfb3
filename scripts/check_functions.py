#!/usr/bin/env python3
"""Fails when a function of kforge's C++ (src/, bench/) is over 100 lines, the KernelBench
verifier's Run aside (docs/development.md). Reads the layout clang-format gives the tree:
namespaces are not indented, so a definition starts at column 0 and its body ends at the
next line that starts with "}". Data (a table, a string) between such lines is no function."""

import os
import re
import subprocess
import sys

LIMIT = 100
ALLOWED = {"KernelBenchVerifier::Run"}
NOT_FUNCTIONS = ("namespace", "struct", "class", "enum", "union", "using", "#", "//", "/*", " *", "}")
DATA = re.compile(r"=\s*\{|\[\]\s*=")  # an initialiser: a table, not a function
RAW = re.compile(r'R"([^(\s]*)\(')  # a raw string's opening; its text is skipped whole


def long_functions(path: str, lines: list[str]) -> list[str]:
    found, start = [], None
    inside = False
    raw_end = None
    for i, line in enumerate(lines):
        if raw_end is not None:
            if raw_end in line:
                raw_end = None
            continue
        opened = RAW.search(line)
        if opened and f'){opened.group(1)}"' not in line[opened.end() :]:
            raw_end = f'){opened.group(1)}"'
            if not inside:
                start = None
            continue
        if inside:
            if line.startswith("}"):
                if i - start + 1 > LIMIT and not any(a in lines[start] for a in ALLOWED):
                    found.append(f"{path}:{start + 1}: {i - start + 1} lines: {lines[start].strip()[:80]}")
                inside, start = False, None
            continue
        if start is None and line[:1].strip() and not line.startswith(NOT_FUNCTIONS):
            start = i
        if start is None:
            continue
        text = line.rstrip()
        one_line = i == start and "{" in text and text.endswith("}")
        if one_line or DATA.search(lines[start]) or (text.endswith(";") and not line[:1].isspace()):
            start = None
        elif text.endswith("{"):
            inside = True
    return found


def main() -> int:
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = subprocess.run(
        ["git", "ls-files", "src", "bench"], capture_output=True, text=True, check=True
    ).stdout.split()
    problems = []
    for path in files:
        if path.endswith((".cc", ".cu", ".h")):
            with open(path, encoding="utf-8") as f:
                problems += long_functions(path, f.read().split("\n"))
    for p in problems:
        print(p)
    if problems:
        print(f"functions over {LIMIT} lines: split them along their steps (docs/development.md)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
