#!/usr/bin/env python3
"""`longhaul probe` against the emulator's ground truth on a grid of paths.

    bench/probe/grid.py [--bin PATH] [--only N,M,...] [--time 30s] [--json FILE]

For each cell of the grid below (10 Mb/s to 1 Gb/s, 10 to 300 ms of RTT, buffers of 5 % to
200 % of the BDP, with and without Poisson, constant-rate or on/off cross traffic, random loss
0 to 1e-3): `longhaul emu pair` builds the path (the same both ways, except that the cross
traffic and the random loss are on a→b only, the direction measured), `longhaul probe --serve
--count 1` runs on host b and `longhaul probe -J` on host a, and every estimate is compared with
the emulator's configuration against issue 34's tolerances:

- base RTT within 5 % of twice the one-way delay; capacity within 5 % of the rate;
- the queue within 20 % of the buffer (`--queue-bytes`);
- the available bandwidth within 15 % of the rate less the cross traffic's mean, where the
  cross traffic is steady (none, constant-rate or Poisson; on/off is reported, not judged);
- the random loss: the configured rate inside the probe's stated interval;
- the path MTU (1500 bytes, or the cell's `--path-mtu`) inside its interval.

It prints a Markdown table (one row per cell, each estimate with its error and a mark: `ok`,
or `MISS`) and the count of misses, and with --json writes every probe's report beside its
cell. Needs root (the emulator) and a built binary (`cargo build --profile ci -p longhaul`).
Cells run one after another; the whole grid takes 6 to 10 minutes.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (rate bit/s, RTT s, buffer as a share of the BDP, cross traffic (kind, bit/s, extra) or None,
#  random loss a→b, path MTU or None)
GRID = [
    (10e6, 0.010, 1.00, None, 0.0, None),
    (10e6, 0.100, 0.50, None, 0.0, None),
    (10e6, 0.300, 2.00, None, 1e-3, None),
    (20e6, 0.200, 0.20, None, 1e-3, None),
    (20e6, 0.010, 2.00, ("onoff", 5e6, "on=100ms,off=100ms"), 0.0, None),
    (50e6, 0.040, 0.05, None, 0.0, None),
    (50e6, 0.040, 1.00, ("poisson", 20e6, ""), 0.0, None),
    (50e6, 0.300, 1.00, None, 1e-3, 1400),
    (100e6, 0.030, 0.50, ("cbr", 40e6, ""), 0.0, None),
    (100e6, 0.100, 1.00, ("onoff", 30e6, "on=100ms,off=100ms"), 0.0, None),
    (100e6, 0.300, 0.10, None, 1e-4, None),
    (200e6, 0.100, 0.50, None, 0.0, None),
    (200e6, 0.020, 2.00, ("poisson", 50e6, ""), 0.0, None),
    (500e6, 0.050, 0.20, None, 0.0, None),
    (1e9, 0.010, 1.00, None, 0.0, None),
    (1e9, 0.100, 0.05, None, 0.0, None),
]

TOLERANCE = {"rtt": 0.05, "capacity": 0.05, "queue": 0.20, "available": 0.15}


def describe(cell):
    rate, rtt, share, cross, loss, pmtu = cell
    rate_s = f"{rate / 1e9:g} Gb/s" if rate >= 1e9 else f"{rate / 1e6:g} Mb/s"
    parts = [rate_s, f"{rtt * 1e3:g} ms", f"{share * 100:g} % BDP"]
    if cross:
        parts.append(f"{cross[0]} {cross[1] / 1e6:g} Mb/s")
    if loss:
        parts.append(f"loss {loss:g}")
    if pmtu:
        parts.append(f"path MTU {pmtu}")
    return ", ".join(parts)


def emu_args(cell):
    rate, rtt, share, cross, loss, pmtu = cell
    buffer = int(rate * rtt / 8 * share)
    args = ["--rate", f"{rate / 1e6:g}mbit", "--delay", f"{rtt / 2 * 1e3:g}ms",
            "--queue-bytes", str(buffer)]
    if loss:
        args += ["--loss", f"{loss:g}/0"]
    if cross:
        kind, bps, extra = cross
        spec = f"{kind},rate={bps / 1e6:g}mbit" + (f",{extra}" if extra else "")
        args += ["--cross", spec]
    if pmtu:
        args += ["--path-mtu", str(pmtu)]
    return args, buffer


def wait_ready(binary, pid, err_path):
    for _ in range(300):
        r = subprocess.run([binary, "emu", "exec", "--id", str(pid), "a", "--", "true"],
                           capture_output=True)
        if r.returncode == 0:
            time.sleep(0.5)
            return
        time.sleep(0.1)
    raise RuntimeError(f"the emulator was not ready: {open(err_path).read()}")


def run_cell(binary, cell, time_limit, scratch):
    args, buffer = emu_args(cell)
    err_path = os.path.join(scratch, "emu.err")
    emu = subprocess.Popen([binary, "emu", "pair", *args, "--duration", "86400s"],
                           stdout=subprocess.DEVNULL, stderr=open(err_path, "w"))
    server = None
    try:
        wait_ready(binary, emu.pid, err_path)
        # The prober and the server run at real-time priority below the forwarders' (10), as
        # the root tests run them (`longhaul_emu::probe::PROBE_PRIORITY`): a busy machine
        # then delays neither the trains nor the stamps.
        exec_on = [binary, "emu", "exec", "--id", str(emu.pid)]
        rt = ["chrt", "--fifo", "5"]
        server = subprocess.Popen([*exec_on, "b", "--", *rt, binary, "probe", "--serve",
                                   "--insecure", "--count", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        p = subprocess.run([*exec_on, "a", "--", *rt, binary, "probe", "100.64.0.2", "--insecure",
                            "-J", "--time", time_limit],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"probe failed: {p.stderr.strip()}")
        return json.loads(p.stdout), buffer
    finally:
        for proc in (server, emu):
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def judge(cell, report, buffer):
    """Per estimate: (text, ok or None when not judged)."""
    rate, rtt, share, cross, loss, pmtu = cell
    out = {}

    def rel(name, truth, key):
        e = report.get(key)
        if not e:
            out[name] = ("—", False)
            return
        err = e["value"] / truth - 1
        ok = abs(err) <= TOLERANCE[name]
        out[name] = (f"{err * 100:+.1f} %", ok)

    rel("rtt", rtt, "rtt")
    rel("capacity", rate, "capacity")
    rel("queue", buffer, "queue")
    free = rate - (cross[1] if cross else 0.0)
    steady = cross is None or cross[0] in ("cbr", "poisson")
    a = report.get("available")
    if a and steady:
        err = a["value"] / free - 1
        out["available"] = (f"{a['value'] / 1e6:.1f} ({err * 100:+.1f} %)",
                            abs(err) <= TOLERANCE["available"])
    elif a:
        out["available"] = (f"{a['value'] / 1e6:.1f} (mean free {free / 1e6:g})", None)
    else:
        out["available"] = ("—", False if steady else None)
    lo = report.get("loss")
    if lo:
        high = lo["high"] if lo["high"] is not None else 1.0
        out["loss"] = (f"{lo['value'] * 100:.3f} % [{lo['low'] * 100:.3f}, {high * 100:.3f}]",
                       lo["low"] <= loss <= high)
    else:
        out["loss"] = ("—", False)
    m = report.get("path_mtu")
    truth = pmtu or 1500
    if m:
        out["mtu"] = (f"{m['value']:.0f} [{m['low']:.0f}, {m['high']:.0f}]",
                      m["low"] <= truth <= m["high"])
    else:
        out["mtu"] = ("—", False)
    return out


def mark(v):
    text, ok = v
    return text if ok is None else f"{text} {'ok' if ok else '**MISS**'}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "ci", "longhaul"))
    ap.add_argument("--only", help="cells to run, 1-based, comma-separated")
    ap.add_argument("--time", default="30s", help="probe --time")
    ap.add_argument("--json", help="write each cell's report here")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"bench/probe: no longhaul binary at {a.bin}; build it with: "
                 "cargo build --profile ci -p longhaul")
    if os.geteuid() != 0:
        sys.exit("bench/probe: needs root (the emulator's namespaces and TUN devices)")
    only = {int(x) for x in a.only.split(",")} if a.only else None
    scratch = f"/tmp/lh-bench-probe-{os.getpid()}"
    os.makedirs(scratch, exist_ok=True)
    names = ["rtt", "capacity", "queue", "available", "loss", "mtu"]
    print("| # | path (rate, RTT, buffer, cross traffic, loss a→b) | base RTT | capacity | queue "
          "| available, Mb/s | random loss | path MTU | took |")
    print("|---|---|---|---|---|---|---|---|---|")
    misses, judged, records = 0, 0, []
    for i, cell in enumerate(GRID, 1):
        if only and i not in only:
            continue
        try:
            report, buffer = run_cell(a.bin, cell, a.time, scratch)
        except Exception as e:  # a cell that fails is a row, not the end of the grid
            print(f"| {i} | {describe(cell)} | failed: {e} |||||||")
            misses += 1
            continue
        j = judge(cell, report, buffer)
        for n in names:
            if j[n][1] is not None:
                judged += 1
                misses += not j[n][1]
        took = f"{report['duration_s']:.1f} s, {report['bytes_sent'] / 1e6:.1f} MB"
        print(f"| {i} | {describe(cell)} | " + " | ".join(mark(j[n]) for n in names)
              + f" | {took} |", flush=True)
        records.append({"cell": describe(cell), "emu": emu_args(cell)[0], "report": report})
    print(f"\n{misses} of {judged} judged estimates missed their tolerance")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
