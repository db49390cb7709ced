#!/usr/bin/env python3
"""Sizes of the Rust sources: files over a line limit and functions over two limits.

Usage: python3 scripts/code-size.py [--files 500] [--long 80] [--max 120] [--list]

Functions are found by their `fn` line and measured by counting braces from it (string and
char literals and comments are skipped); test modules (`#[cfg(test)] mod ...`, files named
tests.rs or under a tests/ folder) are left out of the function count, but a file's line count
is the whole file. Exit 1 when a file is over --files or a function over --max.
"""
import argparse
import os
import re
import sys

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+([A-Za-z_0-9]+)")


def strip(line, state):
    """The line without comments and literals; state carries a block comment across lines."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if state["block"]:
            j = line.find("*/", i)
            if j < 0:
                return "".join(out)
            state["block"] = False
            i = j + 2
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if c == '"' or (c == "r" and re.match(r'r#*"', line[i:])):
            if c == "r":
                m = re.match(r'r(#*)"', line[i:])
                end = '"' + m.group(1)
                j = line.find(end, i + len(m.group(0)))
                i = n if j < 0 else j + len(end)
                continue
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if c == "'":
            m = re.match(r"'(\\.|[^\\'])'", line[i:]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", line[i:])
            if m:
                i += len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    state = {"block": False}
    code = [strip(l, state) for l in lines]
    found = []
    test_from = None
    for k, l in enumerate(lines):
        if l.strip().startswith("#[cfg(test)]") and k + 1 < len(lines) and re.match(r"\s*mod\s", lines[k + 1]):
            test_from = k
            break
    for k, l in enumerate(lines):
        if test_from is not None and k >= test_from:
            break
        m = FN.match(l)
        if not m:
            continue
        depth = 0
        opened = False
        for j in range(k, len(code)):
            for ch in code[j]:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                found.append((j - k + 1, m.group(7), k + 1))
                break
            if not opened and code[j].rstrip().endswith(";"):
                break
    return len(lines) - (1 if lines and lines[-1] == "" else 0), found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="src")
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--long", type=int, default=80)
    ap.add_argument("--max", type=int, default=120)
    ap.add_argument("--list", action="store_true", help="list every function over --long")
    a = ap.parse_args()
    big_files, long_fns = [], []
    for d, _, names in os.walk(a.root):
        for name in names:
            if not name.endswith(".rs"):
                continue
            p = os.path.join(d, name)
            n, fns = functions(p)
            if n > a.files:
                big_files.append((n, p))
            in_tests = name == "tests.rs" or "/tests/" in p
            if not in_tests:
                long_fns += [(ln, f"{p}::{fn}", at) for ln, fn, at in fns if ln > a.long]
    big_files.sort(reverse=True)
    long_fns.sort(reverse=True)
    print(f"files over {a.files} lines: {len(big_files)}")
    for n, p in big_files:
        print(f"  {n:5}  {p}")
    over_max = [f for f in long_fns if f[0] > a.max]
    print(f"functions over {a.long} lines: {len(long_fns)}; over {a.max}: {len(over_max)}")
    for ln, name, at in long_fns if a.list else over_max:
        print(f"  {ln:5}  {name} (line {at})")
    sys.exit(1 if big_files or over_max else 0)


if __name__ == "__main__":
    main()
