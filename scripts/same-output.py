#!/usr/bin/env python3
"""Two zmqperf builds, the same commands: is what a user reads the same?

For a restructuring: every command below runs with binary A and binary B, and their exit
codes, stdout and stderr are compared. Help texts, errors and `topology check` must be equal
byte for byte. For commands that measure, every run of digits is masked first (figures
differ between any two runs), so what is compared is the shape: the words, the columns, the
units, the order of the lines and the JSON keys.

usage: scripts/same-output.py A_BIN B_BIN [--only help,errors,topology,measured]
Exit 1 when any command differs (each difference is printed with both sides).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBCOMMANDS = [
    "local_lat", "remote_lat", "local_thr", "remote_thr", "inproc_lat", "inproc_thr",
    "check_send", "check_recv", "check_sendrecv", "run", "diagnose", "history", "show",
    "report", "import", "compare", "pub", "sub-cluster", "fanout", "topology", "matrix",
    "peers", "curve-keys", "k8s",
]


def run(binary, args, env=None, timeout=120):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=timeout, env=e, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def shape(value, path="", out=None):
    """The key paths of a JSON document with their types (arrays: the union of their items')."""
    out = set() if out is None else out
    if isinstance(value, dict):
        for k, v in value.items():
            shape(v, f"{path}.{k}", out)
    elif isinstance(value, list):
        out.add(f"{path}[]")
        for v in value:
            shape(v, f"{path}[]", out)
    else:
        out.add(f"{path}: {type(value).__name__}")
    return out


def mask(text):
    try:
        return "\n".join(sorted(shape(json.loads(text))))
    except ValueError:
        pass
    text = re.sub(r"/tmp/[^\s\"']+", "<tmp>", text)
    # Run ids and digests: a hex word with a digit in it (not the digits of a word like p99).
    text = re.sub(r"(?<![A-Za-z_])[0-9a-f]*\d[0-9a-f]*(?![A-Za-z_])", "#", text)
    text = re.sub(r"\d+", "#", text)
    # A duration's unit follows its size (850 us, 1.2 ms).
    text = re.sub(r"# (ns|us|ms|s)\b", "# <time>", text)
    text = re.sub(r"-{2,}", "--", text)
    text = re.sub(r"={2,}", "==", text)
    # Column alignment and line wrapping move with the width of the figures: compare the
    # words, not the spaces.
    return re.sub(r"\s+", " ", text)


def help_cases():
    yield ["--help"]
    for c in SUBCOMMANDS:
        yield [c, "--help"]
    yield ["peers", "list", "--help"]
    yield ["topology", "check", "--help"]


def error_cases():
    yield ["local_lat"]
    yield ["local_lat", "tcp://127.0.0.1:0", "64", "abc"]
    yield ["local_lat", "nonsense://x", "64", "10"]
    yield ["remote_thr", "tcp://127.0.0.1:1", "64", "10", "--timeout", "300ms"]
    yield ["inproc_thr", "64", "0"]
    yield ["check_recv", "10", "FOO", "bind", "tcp://127.0.0.1:*"]
    yield ["check_send", "10", "PUB", "sideways", "tcp://127.0.0.1:*"]
    yield ["run", "--patterns", "nope"]
    yield ["run", "no-such-file.toml"]
    yield ["fanout", "-c", "0"]
    yield ["compare", "a", "b", "--db", "/nonexistent/dir/x.db"]
    yield ["topology", "check", "no-such.toml"]
    yield ["diagnose", "--only", "nope"]


def topology_cases():
    for f in sorted(os.listdir(os.path.join(ROOT, "topologies"))):
        yield ["topology", "check", os.path.join("topologies", f)]


def measured_cases(tmp):
    db = os.path.join(tmp, "h.db")
    yield ["inproc_lat", "64", "2000"], None
    yield ["inproc_thr", "64", "20000"], None
    yield ["inproc_lat", "64", "2000", "--json"], None
    yield ["inproc_thr", "1KiB", "20000", "--detail"], None
    yield ["check_sendrecv", "2000", "bind", "pushpull", "inproc://same-output"], None
    yield ["run", "--patterns", "reqrep,pushpull", "--transports", "inproc", "--sizes", "64",
           "--count", "2000", "--repetitions", "1", "--db", db], None
    yield ["history", "--db", db], None
    yield ["fanout", "-c", "2", "-s", "10", "-n", "1", "-t", "20", "-p", "5", "--db", db], None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--only", default="help,errors,topology,measured")
    a = ap.parse_args()
    only = set(a.only.split(","))
    # Both builds from paths of the same length, so that lines that quote the command are cut
    # at the same place.
    home = tempfile.mkdtemp(prefix="same-output-")
    for side in ("a", "b"):
        os.makedirs(os.path.join(home, side))
        shutil.copy2(getattr(a, side), os.path.join(home, side, "zmqperf"))
        setattr(a, side, os.path.join(home, side, "zmqperf"))
    differ = 0
    total = 0
    with tempfile.TemporaryDirectory() as ta, tempfile.TemporaryDirectory() as tb:
        groups = []
        if "help" in only:
            groups.append(("help", [(c, None) for c in help_cases()], False))
        if "errors" in only:
            groups.append(("errors", [(c, None) for c in error_cases()], False))
        if "topology" in only:
            groups.append(("topology", [(c, None) for c in topology_cases()], False))
        if "measured" in only:
            groups.append(("measured", list(zip(measured_cases(ta), measured_cases(tb))), True))
        for name, cases, masked in groups:
            for case in cases:
                if masked:
                    (ca, _), (cb, _) = case
                else:
                    ca = cb = case[0]
                total += 1
                ra = run(a.a, ca)
                rb = run(a.b, cb)
                if masked:
                    ra = (ra[0], mask(ra[1].replace(a.a, "<bin>")), mask(ra[2].replace(a.a, "<bin>")))
                    rb = (rb[0], mask(rb[1].replace(a.b, "<bin>")), mask(rb[2].replace(a.b, "<bin>")))
                same = ra == rb
                label = " ".join(ca)
                print(f"{'same' if same else 'DIFFERENT':9} {name:8} {label}")
                if not same:
                    differ += 1
                    for what, x, y in zip(("exit", "stdout", "stderr"), ra, rb):
                        if x != y:
                            print(f"    {what} A: {str(x)[:1500]!r}")
                            print(f"    {what} B: {str(y)[:1500]!r}")
    shutil.rmtree(home, ignore_errors=True)
    print(f"{total - differ} of {total} the same")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
