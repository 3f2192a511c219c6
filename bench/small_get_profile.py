"""Where a keep-alive small GET's cycles go, by layer: a PC-sampling profile (issue 29).

The SoC's firmware is built with the profiler (firmware/Makefile PROFILE=1, in a build folder of
its own: build/profile-<soc>-<nic>): timer0 interrupts every 10,007 cycles and the firmware counts
the interrupted PC in 16-byte buckets (firmware/ports/litex/profile.c, bench/README.md). This
runs `ab -k -c 10` on nic_compare's small GET, reads GET /profile before (to start a fresh
profile) and after, and maps each bucket through the linker map to the object it lies in, and
from there to a layer: lwIP, each folder of firmware/app, the NIC driver, the string routines,
the port's main loop, libc/libgcc. Cycles per request are samples x period / requests; the
CPU's busy cycles (status page, as nic_compare counts them) are given beside them, so the
share of idle polling between requests is visible (it lands in the driver and the main loop).
Sampling costs about a hundred cycles per period (1 %), so the firmware is not the one
nic_compare measures: compare shares, not totals.

    python3 -m litedav.bench.small_get_profile [--soc ideal] [--nic offload] [--requests 3000]
                                               [--top 25] [--out DIR]

Writes DIR/small_get_profile.md and .json (default bench/results).
"""

import argparse
import bisect
import json
import os
import re
import subprocess
import sys
import urllib.request
from collections import Counter

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERIOD = 10007          # firmware/ports/litex/profile.c PROFILE_PERIOD
NM = "riscv64-unknown-elf-nm"

PORT_LAYERS = {
    "offload_netif": "driver (rings, TSO, RX merge)", "offload_tso": "driver (rings, TSO, RX merge)",
    "rx_merge": "driver (rings, TSO, RX merge)", "liteeth_netif": "driver (rings, TSO, RX merge)",
    "memcpy": "string (memcpy, memset, scans)", "memset": "string (memcpy, memset, scans)",
    "string_scan": "string (memcpy, memset, scans)", "profile": "profiler",
}


def layer(obj):
    """The layer an object file of the link (the map's path) belongs to."""
    if obj is None:
        return "outside the image"
    if obj.endswith(".a") or ".a(" in obj:
        return "libc, libgcc"
    m = re.search(r"/firmware/(lwip|app|port|gen)/([^/]+)", obj)
    if not m:
        return "other (" + os.path.basename(obj) + ")"
    kind, name = m.groups()
    if kind == "lwip":
        return "lwIP"
    if kind == "app":
        return f"app: {name}"
    if kind == "port":
        return PORT_LAYERS.get(os.path.splitext(name)[0], "port (main loop, timer, flash)")
    return "generated data"


def map_ranges(map_path):
    """[(start, end, object)] of the linked input sections, sorted, from the linker map."""
    ranges = []
    pending = None
    with open(map_path) as f:
        for line in f:      # the discarded sections' list comes first, at address 0
            if line.startswith("Linker script and memory map"):
                break
        for line in f:
            if pending is not None:
                m = re.match(r"\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)", line)
                if m:
                    ranges.append((int(m[1], 16), int(m[1], 16) + int(m[2], 16), m[3]))
                pending = None
                continue
            m = re.match(r"^ (\.text\S*)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+))?\s*$", line)
            if m:
                if m[2] is None:
                    pending = m[1]
                else:
                    ranges.append((int(m[2], 16), int(m[2], 16) + int(m[3], 16), m[4]))
    ranges = sorted(r for r in ranges if r[1] > r[0])
    return ranges


def functions(elf):
    """[(start, name)] of the image's functions, sorted."""
    out = subprocess.run([NM, "-n", "--defined-only", elf], capture_output=True, text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            funcs.append((int(parts[0], 16), parts[2]))
    return funcs


def attribute(samples, ranges, funcs):
    """(Counter by layer, Counter by function) of the sample counts {pc: count}."""
    starts = [r[0] for r in ranges]
    fstarts = [f[0] for f in funcs]
    by_layer, by_function = Counter(), Counter()
    for pc, count in samples.items():
        i = bisect.bisect_right(starts, pc) - 1
        obj = ranges[i][2] if i >= 0 and pc < ranges[i][1] else None
        j = bisect.bisect_right(fstarts, pc) - 1
        name = funcs[j][1] if pc and j >= 0 and obj is not None else "(outside the image)"
        by_layer[layer(obj)] += count
        by_function[(name, layer(obj))] += count
    return by_layer, by_function


def get_profile(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/profile", timeout=600) as r:
        body = r.read().decode()
    samples = {}
    for line in body.splitlines():
        m = re.match(r"^([0-9a-f]{8}) (\d+)$", line)
        if m:
            samples[int(m[1], 16)] = int(m[2])
    return samples


def run(soc, nic, phy, requests):
    from litedav.bench import nic_compare as nc
    from litedav.sim.run import SimOptions, Simulator, build, free_port, read_build_commit
    build_dir = os.path.join(TOP, "build", f"profile-{soc}-{nic}")
    build(build_dir, nic=nic, board=nc.soc_board(soc), fw_vars=("PROFILE=1",))
    with Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True, phy=phy,
                                         peer_pid=os.getpid())) as sim:
        sim.wait_ready()
        hz = nc.read_status(sim.port)["sys_clk_hz"]
        nc.ab(sim.port, 20, 10, True)               # warm up: connections, caches
        get_profile(sim.port)                       # starts a fresh profile
        d = nc.ab(sim.port, requests, 10, True)
        samples = get_profile(sim.port)
    firmware = os.path.join(build_dir, "firmware")
    by_layer, by_function = attribute(samples, map_ranges(os.path.join(firmware, "litedav.map")),
                                      functions(os.path.join(firmware, "litedav.elf")))
    total = sum(samples.values())
    if total < 100:
        raise RuntimeError(f"only {total} samples: is the profiler in the firmware (PROFILE=1)?")
    return {"soc": soc, "nic": nic, "phy": phy, "sys_clk_hz": hz, "commit": read_build_commit(build_dir),
            "requests": d["requests"], "failed": d["failed"], "period_cycles": PERIOD, "samples": total,
            "busy_cycles_per_request": round(d["busy_cycles"] / d["requests"]),
            "sampled_cycles_per_request": round(total * PERIOD / d["requests"]),
            "layers": {k: v for k, v in by_layer.most_common()},
            "functions": [{"function": f, "layer": l, "samples": v} for (f, l), v in by_function.most_common()]}


def markdown(r, top):
    from litedav.bench.nic_compare import soc_label
    n, total = r["requests"], r["samples"]
    per = lambda s: f"{s * r['period_cycles'] / n:,.0f}"
    lines = [f"**Where a keep-alive small GET's cycles go, {soc_label(r['soc'])} ({r['sys_clk_hz'] / 1e6:g} MHz, "
             f"{r['nic']}, {r['phy'].upper()}; commit {r['commit']})** (`python3 -m litedav.bench.small_get_profile`: "
             f"`ab -k -c 10 -n {n}` on the firmware built with PROFILE=1, {total:,} PC samples, one per "
             f"{r['period_cycles']:,} cycles; busy cycles per request on this firmware {r['busy_cycles_per_request']:,}, "
             f"sampled {r['sampled_cycles_per_request']:,}: the difference is idle polling, counted in the driver and the "
             "main loop)", "",
             "| layer | share | cycles/request |", "|---|---|---|"]
    for name, s in r["layers"].items():
        lines.append(f"| {name} | {100 * s / total:.1f} % | {per(s)} |")
    lines += ["", f"Top {top} functions:", "", "| function | layer | share | cycles/request |", "|---|---|---|---|"]
    for f in r["functions"][:top]:
        lines.append(f"| `{f['function']}` | {f['layer']} | {100 * f['samples'] / total:.1f} % | {per(f['samples'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="small_get_profile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--soc", default="ideal", choices=["ideal", "colorlight_i5"])
    parser.add_argument("--nic", default="offload", choices=["liteeth", "offload"])
    parser.add_argument("--phy", default=None, choices=["gmii", "mii"],
                        help="default: gmii on the ideal SoC, mii on a board model")
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--top", type=int, default=25, help="functions listed")
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"))
    args = parser.parse_args(argv)
    phy = args.phy or ("gmii" if args.soc == "ideal" else "mii")
    try:
        result = run(args.soc, args.nic, phy, args.requests)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        sys.exit(f"small_get_profile: {e}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "small_get_profile.json"), "w") as f:
        json.dump(result, f, indent=2)
    table = markdown(result, args.top)
    with open(os.path.join(args.out, "small_get_profile.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
