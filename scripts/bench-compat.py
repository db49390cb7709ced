#!/usr/bin/env python3
"""Side-by-side benchmark: libzmq's own perf tools (C) against zmqperf.

Builds zmqperf and libzmq's C perf tools (scripts/build-c-perf.sh release), then measures,
for each transport (tcp, ipc, inproc) and message size (64, 1024, 65536 bytes):

  latency     C local_lat + C remote_lat   vs  zmqperf local_lat + zmqperf remote_lat
              (inproc: C inproc_lat vs zmqperf inproc_lat)
  throughput  C local_thr + C remote_thr   vs  zmqperf local_thr + zmqperf remote_thr
              (inproc: C inproc_thr vs zmqperf inproc_thr)
  instrumented cost
              zmqperf (default, instrumented) vs zmqperf with --plain on the measuring /
              sending side (remote_lat, remote_thr, inproc_lat, inproc_thr)

Each cell (transport, size, latency|throughput) runs three variants: "c", "zmqperf"
(instrumented, the default) and "plain" (zmqperf --plain); the inproc throughput cells a
fourth, "cheader": libzmq's inproc throughput loop writing and reading zmqperf's header
(scripts/c-inproc-header.c), which shows what the header costs libzmq itself. The zmqperf run is shared by
both comparisons. The variants run back to back within a repetition, in forward order on
even repetitions and in reverse order on odd ones, so neither side always goes first.

Reported per cell: the median of the repetitions (with min..max), and for each comparison
the median of the per-repetition ratios (the two variants of a repetition run back to back,
so each ratio is taken in one machine state), with a bootstrap 95% interval, against:

  latency     zmqperf / C             <= 1.02
  throughput  zmqperf / C             >= 0.98
  latency     instrumented / plain    <= 1.05
  throughput  instrumented / plain    >= 0.95

This is a benchmark, not a test: it exits 0 whether or not the targets are met, and
non-zero only when it could not run at all (2: build failed or binaries missing, 1: not a
single run produced a figure) or was interrupted (130, after reporting what it measured).
Every run has a timeout (--timeout, 60 s); a run that times out or fails is killed (only
the processes this script started, by PID) and counted as failed, and the rest go on.

Two zmqperf builds side by side (--vs OTHER): the release zmqperf (or --zmqperf A) against
OTHER, e.g. the portable build of scripts/build-portable.sh, on the same compatible pairs
(both sides of a pair are the same build). Two variants, "zmqperf" and "vs", alternate as
above; the ratio is vs / zmqperf per repetition (latency: above 1 is slower; throughput:
below 1 is slower), with its bootstrap 95% interval; "within noise" when the interval
holds 1. The C tools are not built or run in this mode.

usage: scripts/bench-compat.py [--reps N] [--quick] [--transports tcp,ipc,inproc]
                               [--sizes 64,1024,65536] [--json FILE] [--timeout SECONDS]
                               [--vs OTHER [--zmqperf A] [--kinds lat,thr]]
"""

import argparse
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(SCRIPT_DIR)

ALL_TRANSPORTS = ["tcp", "ipc", "inproc"]
ALL_SIZES = [64, 1024, 65536]
KINDS = ["lat", "thr"]
VARIANTS = ["c", "zmqperf", "plain", "cheader"]
# "cheader" (scripts/c-inproc-header.c) is libzmq's inproc throughput loop with zmqperf's
# header written by the sender and read by the receiver: what the header costs libzmq
# itself. It runs in the inproc throughput cells only.


def applies(variant, transport, kind):
    return variant != "cheader" or (transport == "inproc" and kind == "thr")

# Counts chosen so one run takes roughly 0.2-1 s on a 2-core machine (TCP one-way latency
# ~50 us, so a round trip costs ~100 us; inproc latency here is ~25 us one-way; inproc
# throughput is several times TCP's, so it gets more messages). Wall time per run is a bit
# longer: the start delay, and libzmq's C local_lat sleeps 1 s before it exits.
LAT_COUNTS = {
    "tcp": {64: 10000, 1024: 10000, 65536: 5000},
    "ipc": {64: 10000, 1024: 10000, 65536: 5000},
    "inproc": {64: 20000, 1024: 20000, 65536: 10000},
}
THR_COUNTS = {
    "tcp": {64: 2000000, 1024: 500000, 65536: 40000},
    "ipc": {64: 2000000, 1024: 500000, 65536: 40000},
    "inproc": {64: 5000000, 1024: 2000000, 65536: 500000},
}
DEFAULT_LAT = 10000
DEFAULT_THR = 500000

TARGETS = {
    "lat_ratio": ("<=", 1.02),
    "thr_ratio": (">=", 0.98),
    "lat_instr": ("<=", 1.05),
    "thr_instr": (">=", 0.95),
}

START_DELAY = 0.2  # seconds between starting the binding side and the connecting side

LAT_RE = re.compile(r"average latency:\s*([0-9.]+)\s*\[us\]")
THR_RE = re.compile(r"mean throughput:\s*([0-9.]+)\s*\[msg/s\]")

# Every process this script started and has not yet reaped, so an interrupt can kill
# exactly these (by PID) and nothing else.
LIVE = []


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# machine / build


def machine_info():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        ncpu = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        ncpu = os.cpu_count() or 0
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "unknown"
    return {
        "cpu": cpu,
        "nproc": ncpu,
        "kernel": platform.release(),
        "machine": platform.machine(),
        "loadavg_at_start": load,
    }


def build_vs(a, b):
    """The two zmqperf builds of --vs mode: A (default: cargo build --release) and B."""
    if a is None:
        log("building: cargo build --release")
        res = subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO_ROOT)
        if res.returncode != 0:
            raise RuntimeError("cargo build --release failed with exit code %d" % res.returncode)
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO_ROOT, "target")
        if not os.path.isabs(target):
            target = os.path.join(REPO_ROOT, target)
        a = os.path.join(target, "release", "zmqperf")
    missing = [p for p in (a, b) if not os.access(p, os.X_OK)]
    if missing:
        raise RuntimeError("missing binaries: " + ", ".join(missing))
    return {"zmqperf": os.path.abspath(a), "vs": os.path.abspath(b)}


def build():
    """Run build-c-perf.sh release; return (zmqperf path, C tool folder) or raise."""
    script = os.path.join(SCRIPT_DIR, "build-c-perf.sh")
    log("building: %s release" % script)
    res = subprocess.run(["bash", script, "release"], stdout=subprocess.PIPE, text=True)
    if res.returncode != 0:
        raise RuntimeError("build-c-perf.sh failed with exit code %d" % res.returncode)
    lines = [l.strip() for l in res.stdout.splitlines() if l.strip()]
    if not lines:
        raise RuntimeError("build-c-perf.sh printed no folder")
    cdir = lines[-1]
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO_ROOT, "target")
    if not os.path.isabs(target):
        target = os.path.join(REPO_ROOT, target)
    zmqperf = os.path.join(target, "release", "zmqperf")
    missing = [p for p in [zmqperf] + [os.path.join(cdir, t) for t in
               ("local_lat", "remote_lat", "local_thr", "remote_thr", "inproc_lat", "inproc_thr",
                "c-inproc-header")]
               if not os.access(p, os.X_OK)]
    if missing:
        raise RuntimeError("missing binaries: " + ", ".join(missing))
    return zmqperf, cdir


# ---------------------------------------------------------------------------------------
# running one measurement


def free_tcp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


_ipc_counter = [0]


def new_endpoint(transport):
    """Return (endpoint, ipc file path or None)."""
    if transport == "tcp":
        return "tcp://127.0.0.1:%d" % free_tcp_port(), None
    _ipc_counter[0] += 1
    path = "/tmp/zmqperf-bench-%d-%d.sock" % (os.getpid(), _ipc_counter[0])
    return "ipc://" + path, path


def start(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    LIVE.append(p)
    return p


def kill(p):
    """Kill one process we started, by its PID, and reap it."""
    if p.poll() is None:
        try:
            p.kill()
        except OSError:
            pass
    try:
        p.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass
    if p in LIVE:
        LIVE.remove(p)


def finish(p, deadline):
    """Wait for p until the deadline; return (rc, out, err, timed_out)."""
    try:
        out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        kill(p)
        return None, "", "", True
    if p in LIVE:
        LIVE.remove(p)
    return p.returncode, out, err, False


def short(text):
    text = " ".join((text or "").split())
    return text[:200]


def commands(tools, transport, kind, size, count, variant, endpoint):
    """Return (binding-side command or None, measuring/connecting-side command, which prints)."""
    plain = ["--plain"] if variant == "plain" else []
    n = [str(size), str(count)]
    if variant == "cheader":
        return None, [os.path.join(tools["c"], "c-inproc-header")] + n + ["header"], "main"
    if variant == "c":
        def tool(name):
            return [os.path.join(tools["c"], name)]
    else:
        binary = tools[variant] if variant == "vs" else tools["zmqperf"]

        def tool(name):
            return [binary, name]
    if transport == "inproc":
        return None, tool("inproc_" + kind) + n + plain, "main"
    if kind == "lat":
        # local_lat (REP) binds and prints nothing; remote_lat (REQ) prints the latency.
        return tool("local_lat") + [endpoint] + n, tool("remote_lat") + [endpoint] + n + plain, "connect"
    # local_thr (PULL) binds and prints the throughput; remote_thr (PUSH) sends.
    return tool("local_thr") + [endpoint] + n, tool("remote_thr") + [endpoint] + n + plain, "bind"


def run_once(tools, transport, kind, size, count, variant, timeout):
    """Run one measurement. Return (value or None, error text or None, wall seconds)."""
    pattern = LAT_RE if kind == "lat" else THR_RE
    t0 = time.monotonic()
    if transport == "inproc":
        _, cmd, _ = commands(tools, transport, kind, size, count, variant, None)
        p = start(cmd)
        rc, out, err, to = finish(p, t0 + timeout)
        wall = time.monotonic() - t0
        if to:
            return None, "timed out after %g s" % timeout, wall
        if rc != 0:
            return None, "exit %d: %s" % (rc, short(err or out)), wall
        m = pattern.search(out)
        if not m:
            return None, "no figure in output: %s" % short(out), wall
        return float(m.group(1)), None, wall

    last_error = None
    for attempt in range(3):  # retry with a fresh endpoint if the bind side dies at once
        endpoint, ipc_path = new_endpoint(transport)
        bind_cmd, conn_cmd, printer = commands(tools, transport, kind, size, count, variant, endpoint)
        t0 = time.monotonic()
        deadline = t0 + timeout
        binder = connector = None
        try:
            binder = start(bind_cmd)
            time.sleep(START_DELAY)
            if binder.poll() is not None:
                rc, out, err, _ = finish(binder, deadline)
                last_error = "binding side exited %s at once: %s" % (rc, short(err or out))
                continue
            connector = start(conn_cmd)
            crc, cout, cerr, cto = finish(connector, deadline)
            # The binding side ends on its own once the pair is done; if the connector
            # failed, give the binder only a moment before killing it.
            if cto or crc != 0:
                deadline = min(deadline, time.monotonic() + 2.0)
            brc, bout, berr, bto = finish(binder, deadline)
            wall = time.monotonic() - t0
            if cto or bto:
                who = "connecting side" if cto else "binding side"
                return None, "%s timed out after %g s" % (who, timeout), wall
            if crc != 0:
                return None, "connecting side exit %d: %s" % (crc, short(cerr or cout)), wall
            if brc != 0:
                return None, "binding side exit %d: %s" % (brc, short(berr or bout)), wall
            text = cout if printer == "connect" else bout
            m = pattern.search(text)
            if not m:
                return None, "no figure in output: %s" % short(text), wall
            return float(m.group(1)), None, wall
        finally:
            for p in (connector, binder):
                if p is not None and p.poll() is None:
                    kill(p)
            if ipc_path:
                try:
                    os.unlink(ipc_path)
                except OSError:
                    pass
    return None, last_error, time.monotonic() - t0


# ---------------------------------------------------------------------------------------
# statistics and report


def summarize(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {
        "median": statistics.median(vals),
        "min": min(vals),
        "max": max(vals),
        "n": len(vals),
        "failed": len(values) - len(vals),
    }


RATIOS = [
    ("lat_ratio", "lat_zmqperf", "lat_c"),
    ("thr_ratio", "thr_zmqperf", "thr_c"),
    ("lat_instr", "lat_zmqperf", "lat_plain"),
    ("thr_instr", "thr_zmqperf", "thr_plain"),
    # Not targets: what the header costs libzmq's own loop, and zmqperf against that loop.
    ("thr_header_cost", "thr_cheader", "thr_c"),
    ("thr_vs_cheader", "thr_zmqperf", "thr_cheader"),
]


def bootstrap_ci(values, rounds=2000):
    """95% percentile interval of the median, by resampling (fixed seed: repeatable)."""
    if len(values) < 3:
        return None
    import random
    rng = random.Random(12345)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return (meds[int(0.025 * rounds)], meds[int(0.975 * rounds) - 1])


def check(name, value):
    if value is None:
        return None
    op, limit = TARGETS[name]
    return value <= limit if op == "<=" else value >= limit


def fmt_num(v, kind):
    if v is None:
        return "n/a"
    if kind == "lat":
        return "%.3f" % v
    return "%d" % round(v)


def fmt_ratio(v):
    return "n/a" if v is None else "%.3f" % v


def fmt_ci(ci):
    return "" if not ci else "[%.2f-%.2f]" % ci


def fmt_ok(ok):
    return "-" if ok is None else ("ok" if ok else "FAIL")


def analyse(samples, transports, sizes):
    cells = []
    for transport in transports:
        for size in sizes:
            cell = {"transport": transport, "size": size}
            for kind in KINDS:
                for variant in VARIANTS:
                    cell[kind + "_" + variant] = summarize(samples[transport][size][kind][variant])

            def ratio(a, b):
                # Paired: the two variants ran back to back in the same repetition, so each
                # repetition gives one ratio in the same machine state; the cell's figure is
                # the median of those ratios, with a bootstrap 95% interval.
                xs = samples[transport][size][a.split("_")[0]][a.split("_")[1]]
                ys = samples[transport][size][b.split("_")[0]][b.split("_")[1]]
                rs = [x / y for x, y in zip(xs, ys) if x is not None and y]
                cell[a + "/" + b + "_ratios"] = rs
                cell[a + "/" + b + "_ci95"] = bootstrap_ci(rs)
                return statistics.median(rs) if rs else None

            for key, a, b in RATIOS:
                cell[key] = ratio(a, b)
                cell[key + "_ci95"] = cell[a + "/" + b + "_ci95"]
            cell["ok"] = {k: check(k, cell[k]) for k in TARGETS}
            cells.append(cell)
    return cells


def print_report(cells, machine, reps):
    out = sys.stdout
    print("", file=out)
    print("per-variant medians over %d reps (min..max, failed runs):" % reps, file=out)
    for cell in cells:
        for kind, unit in (("lat", "us"), ("thr", "msg/s")):
            parts = []
            for variant in VARIANTS:
                s = cell[kind + "_" + variant]
                if not applies(variant, cell["transport"], kind):
                    continue
                if s is None:
                    parts.append("%s n/a" % variant)
                    continue
                spread = (s["max"] - s["min"]) / s["median"] * 100 if s["median"] else 0.0
                txt = "%s %s (%s..%s, spread %.0f%%)" % (
                    variant, fmt_num(s["median"], kind), fmt_num(s["min"], kind),
                    fmt_num(s["max"], kind), spread)
                if s["failed"]:
                    txt += " [%d failed]" % s["failed"]
                parts.append(txt)
            print("  %-6s %6d %s %-5s  %s" % (cell["transport"], cell["size"], kind, unit,
                                              " | ".join(parts)), file=out)
    print("", file=out)

    print("ratios: median over repetitions of the ratio of two variants run back to back, "
          "with its bootstrap 95% interval", file=out)
    header = ("%-9s %-6s %9s %9s %6s %-11s %4s | %9s %9s %6s %-11s %4s | %-6s %-11s %4s | %-6s %-11s %4s" % (
        "transport", "size", "lat C us", "zmqperf", "ratio", "95% CI", "ok",
        "thr C/s", "zmqperf", "ratio", "95% CI", "ok",
        "lat i/p", "95% CI", "ok", "thr i/p", "95% CI", "ok"))
    print(header, file=out)
    print("-" * len(header), file=out)
    met = total = unknown = 0
    for cell in cells:
        def m(key):
            s = cell[key]
            return s["median"] if s else None
        ok = cell["ok"]
        for v in ok.values():
            if v is None:
                unknown += 1
            else:
                total += 1
                met += 1 if v else 0
        print("%-9s %-6d %9s %9s %6s %-11s %4s | %9s %9s %6s %-11s %4s | %-6s %-11s %4s | %-6s %-11s %4s" % (
            cell["transport"], cell["size"],
            fmt_num(m("lat_c"), "lat"), fmt_num(m("lat_zmqperf"), "lat"),
            fmt_ratio(cell["lat_ratio"]), fmt_ci(cell["lat_ratio_ci95"]), fmt_ok(ok["lat_ratio"]),
            fmt_num(m("thr_c"), "thr"), fmt_num(m("thr_zmqperf"), "thr"),
            fmt_ratio(cell["thr_ratio"]), fmt_ci(cell["thr_ratio_ci95"]), fmt_ok(ok["thr_ratio"]),
            fmt_ratio(cell["lat_instr"]), fmt_ci(cell["lat_instr_ci95"]), fmt_ok(ok["lat_instr"]),
            fmt_ratio(cell["thr_instr"]), fmt_ci(cell["thr_instr_ci95"]), fmt_ok(ok["thr_instr"])),
            file=out)
    print("", file=out)
    print("targets: latency zmqperf/C <= 1.02, throughput zmqperf/C >= 0.98, "
          "latency instr/plain <= 1.05, throughput instr/plain >= 0.95", file=out)
    inconclusive = 0
    for cell in cells:
        for key in TARGETS:
            ci = cell[key + "_ci95"]
            if ci:
                lim = TARGETS[key][1]
                if ci[0] <= lim <= ci[1]:
                    inconclusive += 1
    line = "summary: %d of %d targets met; %d of the %d have the target inside their 95%% interval (within noise)" % (
        met, total, inconclusive, total)
    if unknown:
        line += " (%d not evaluated: a side has no figure)" % unknown
    print(line, file=out)
    for cell in cells:
        if cell.get("thr_header_cost") is None:
            continue
        print("inproc %d B throughput, the header's cost in libzmq's own loop: C with zmqperf's "
              "header / C %s %s; zmqperf / C with the header %s %s" % (
                  cell["size"], fmt_ratio(cell["thr_header_cost"]),
                  fmt_ci(cell["thr_header_cost_ci95"]), fmt_ratio(cell["thr_vs_cheader"]),
                  fmt_ci(cell["thr_vs_cheader_ci95"])), file=out)
    out.flush()
    return met, total, unknown


def print_vs_report(cells, reps, kinds):
    """--vs mode: each build's medians and the paired ratio vs / zmqperf with its interval."""
    out = sys.stdout
    print("", file=out)
    print("two builds, %d reps: A = zmqperf, B = vs; ratio = median over repetitions of B/A "
          "run back to back, with its bootstrap 95%% interval" % reps, file=out)
    header = "%-9s %-6s %-4s %14s %14s %7s %-13s %s" % (
        "transport", "size", "kind", "A", "B", "B/A", "95% CI", "verdict")
    print(header, file=out)
    print("-" * len(header), file=out)
    within = total = 0
    for cell in cells:
        for kind in kinds:
            a, b = cell[kind + "_zmqperf"], cell[kind + "_vs"]
            r, ci = cell[kind + "_b_over_a"], cell[kind + "_b_over_a_ci95"]
            unit = "us" if kind == "lat" else "msg/s"
            if r is None:
                verdict = "n/a"
            elif ci is None:
                verdict = "too few reps"
            else:
                total += 1
                if ci[0] <= 1.0 <= ci[1]:
                    within += 1
                    verdict = "within noise"
                else:
                    faster = (r < 1.0) if kind == "lat" else (r > 1.0)
                    verdict = "B faster" if faster else "B slower"
            print("%-9s %-6d %-4s %14s %14s %7s %-13s %s" % (
                cell["transport"], cell["size"], kind,
                "%s %s" % (fmt_num(a["median"] if a else None, kind), unit),
                "%s %s" % (fmt_num(b["median"] if b else None, kind), unit),
                fmt_ratio(r), fmt_ci(ci), verdict), file=out)
    print("", file=out)
    print("summary: %d of %d cells within noise (the 95%% interval of B/A holds 1)" % (within, total),
          file=out)
    out.flush()
    return within, total, 0


# ---------------------------------------------------------------------------------------
# main


def parse_list(text, allowed, conv, what):
    items = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            v = conv(part)
        except ValueError:
            raise argparse.ArgumentTypeError("bad %s: %r" % (what, part))
        if allowed is not None and v not in allowed:
            raise argparse.ArgumentTypeError("unknown %s %r (choose from %s)" % (
                what, part, ",".join(str(a) for a in allowed)))
        if v not in items:
            items.append(v)
    if not items:
        raise argparse.ArgumentTypeError("empty %s list" % what)
    return items


def parse_size(text):
    t = text.strip().lower()
    for suffix, mult in (("kib", 1024), ("k", 1024), ("mib", 1 << 20), ("m", 1 << 20), ("b", 1)):
        if t.endswith(suffix):
            return int(t[: -len(suffix)]) * mult
    return int(t)


def main():
    ap = argparse.ArgumentParser(
        description="Benchmark zmqperf against libzmq's C perf tools, side by side.")
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions per cell and variant (default 5, or 2 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="short run: 2 reps and a quarter of the usual counts")
    ap.add_argument("--transports", default=",".join(ALL_TRANSPORTS),
                    type=lambda s: parse_list(s, ALL_TRANSPORTS, str, "transport"),
                    help="comma-separated subset of tcp,ipc,inproc (default all)")
    ap.add_argument("--sizes", default=",".join(str(s) for s in ALL_SIZES),
                    type=lambda s: parse_list(s, None, parse_size, "size"),
                    help="comma-separated message sizes in bytes (default 64,1024,65536)")
    ap.add_argument("--json", metavar="FILE", help="save raw samples, medians and ratios here")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="per-run timeout in seconds (default 60)")
    ap.add_argument("--vs", metavar="OTHER",
                    help="compare zmqperf against this other zmqperf build instead of the C tools")
    ap.add_argument("--zmqperf", metavar="A",
                    help="with --vs: the first build (default: cargo build --release's)")
    ap.add_argument("--kinds", default="lat,thr",
                    type=lambda s: parse_list(s, KINDS, str, "kind"),
                    help="with --vs: comma-separated subset of lat,thr (default both)")
    args = ap.parse_args()
    if args.zmqperf and not args.vs:
        ap.error("--zmqperf goes with --vs")
    kinds = args.kinds if args.vs else KINDS
    if args.vs:
        VARIANTS[:] = ["zmqperf", "vs"]
        RATIOS[:] = [("lat_b_over_a", "lat_vs", "lat_zmqperf"),
                     ("thr_b_over_a", "thr_vs", "thr_zmqperf")]
        TARGETS.clear()
        TARGETS.update({"lat_b_over_a": ("<=", 1.02), "thr_b_over_a": (">=", 0.98)})

    reps = args.reps if args.reps is not None else (2 if args.quick else 5)
    if reps < 1:
        ap.error("--reps must be at least 1")
    if any(s < 1 for s in args.sizes):
        ap.error("sizes must be positive")
    divisor = 4 if args.quick else 1

    machine = machine_info()
    print("machine: %s, nproc %d, kernel %s (%s), load at start %s" % (
        machine["cpu"], machine["nproc"], machine["kernel"], machine["machine"],
        machine["loadavg_at_start"]), flush=True)

    try:
        if args.vs:
            tools = build_vs(args.zmqperf, args.vs)
        else:
            zmqperf, cdir = build()
            tools = {"zmqperf": zmqperf, "c": cdir}
    except (RuntimeError, OSError) as e:
        log("bench-compat: cannot run: %s" % e)
        return 2
    print("zmqperf: %s" % tools["zmqperf"])
    if args.vs:
        print("vs:      %s" % tools["vs"])
    else:
        print("C tools: %s" % tools["c"])

    def count_for(kind, transport, size):
        table = LAT_COUNTS if kind == "lat" else THR_COUNTS
        n = table.get(transport, {}).get(size, DEFAULT_LAT if kind == "lat" else DEFAULT_THR)
        return max(1, n // divisor)

    counts = {t: {s: {k: count_for(k, t, s) for k in KINDS} for s in args.sizes}
              for t in args.transports}
    print("reps %d%s; counts (latency round trips / throughput messages): %s" % (
        reps, " (quick)" if args.quick else "",
        "; ".join("%s %d: %d / %d" % (t, s, counts[t][s]["lat"], counts[t][s]["thr"])
                  for t in args.transports for s in args.sizes)), flush=True)

    samples = {t: {s: {k: {v: [] for v in VARIANTS} for k in KINDS} for s in args.sizes}
               for t in args.transports}
    runs = []  # every run, in order, for the JSON file
    interrupted = False
    started = time.monotonic()
    try:
        for rep in range(reps):
            order = VARIANTS if rep % 2 == 0 else list(reversed(VARIANTS))
            for transport in args.transports:
                for size in args.sizes:
                    for kind in kinds:
                        count = counts[transport][size][kind]
                        for variant in (v for v in order if applies(v, transport, kind)):
                            value, error, wall = run_once(tools, transport, kind, size, count,
                                                          variant, args.timeout)
                            samples[transport][size][kind][variant].append(value)
                            runs.append({"rep": rep, "transport": transport, "size": size,
                                         "kind": kind, "variant": variant, "count": count,
                                         "value": value, "error": error,
                                         "wall_s": round(wall, 3)})
                            unit = "us" if kind == "lat" else "msg/s"
                            shown = ("%s %s" % (fmt_num(value, kind), unit) if value is not None
                                     else "FAILED (%s)" % error)
                            log("rep %d/%d  %-6s %6d %s  %-7s  %s  [%.2f s]" % (
                                rep + 1, reps, transport, size, kind, variant, shown, wall))
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: reporting what was measured so far")
    finally:
        for p in list(LIVE):
            kill(p)

    log("measured in %.0f s" % (time.monotonic() - started))
    done_reps = reps
    if interrupted:
        done_reps = max((r["rep"] + 1 for r in runs), default=0)
    cells = analyse(samples, args.transports, args.sizes)
    if args.vs:
        met, total, unknown = print_vs_report(cells, done_reps, kinds)
    else:
        met, total, unknown = print_report(cells, machine, done_reps)

    if args.json:
        doc = {
            "machine": machine,
            "zmqperf": tools["zmqperf"],
            "c_tools": tools.get("c"),
            "vs": tools.get("vs"),
            "reps": reps,
            "quick": args.quick,
            "interrupted": interrupted,
            "timeout_s": args.timeout,
            "variants": ({"zmqperf": "zmqperf A", "vs": "zmqperf B (--vs)"} if args.vs else
                         {"c": "libzmq C perf tools",
                          "zmqperf": "zmqperf default (instrumented)",
                          "plain": "zmqperf with --plain on the measuring/sending side",
                          "cheader": "libzmq's inproc throughput loop with zmqperf's header "
                                     "(scripts/c-inproc-header.c)"}),
            "targets": {k: {"op": op, "limit": lim} for k, (op, lim) in TARGETS.items()},
            "counts": {t: {str(s): counts[t][s] for s in args.sizes} for t in args.transports},
            "samples": {t: {str(s): samples[t][s] for s in args.sizes} for t in args.transports},
            "cells": cells,
            "runs": runs,
            "summary": {"met": met, "evaluated": total, "not_evaluated": unknown},
        }
        try:
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
            log("saved %s" % args.json)
        except OSError as e:
            log("bench-compat: could not write %s: %s" % (args.json, e))

    if not any(r["value"] is not None for r in runs):
        log("bench-compat: no run produced a figure")
        return 1
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
