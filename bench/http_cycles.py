"""CPU cycles per HTTP request on the simulated SoC, read from its status page.

Boots the simulator, reads the status counters, drives load with ApacheBench,
reads them again, and reports the differences. Every figure is in simulated
sys_clk cycles (the SoC's own counter), never the simulator's wall time.

  python3 -m litedav.bench.http_cycles [--requests N] [--concurrency C] [--nic liteeth|offload|both]

With the offload NIC there is no copy: "rx copy" and "tx copy" are then the driver's
descriptor work (ring refill, pbuf bookkeeping, TX descriptors).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request

from litedav.sim.run import NICS, Simulator, build, default_build_dir, free_port

NIC_LABELS = {"liteeth": "plain LiteEth MAC", "offload": "offload NIC"}


def read_status(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=120) as r:
        body = r.read().decode()
    return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", body, re.M)}


def measure(port, path, requests, concurrency, keepalive):
    before = read_status(port)
    cmd = ["ab", "-q", "-n", str(requests), "-c", str(concurrency), "-s", "120"]
    if keepalive:
        cmd.append("-k")
    out = subprocess.run(cmd + [f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True)
    after = read_status(port)
    failed = re.search(r"^Failed requests:\s+(\d+)", out.stdout, re.M)
    if out.returncode != 0 or not failed:
        sys.exit(f"ab failed:\n{out.stdout}\n{out.stderr}")
    d = {k: after[k] - before[k] for k in after if k in before}
    n = d["requests"] - 1  # the second status read is itself a request
    hz = after["sys_clk_hz"]
    return {
        "path": path, "requests": n, "concurrency": concurrency, "keepalive": keepalive,
        "failed": int(failed.group(1)), "sys_clk_hz": hz,
        "busy_cycles_per_request": round(d["busy_cycles"] / n),
        "rx_copy_cycles_per_request": round(d["rx_copy_cycles"] / n),
        "tx_copy_cycles_per_request": round(d["tx_copy_cycles"] / n),
        "rx_handle_cycles_per_request": round(d["rx_handle_cycles"] / n),
        "frames_in_per_request": round(d["frames_in"] / n, 2),
        "frames_out_per_request": round(d["frames_out"] / n, 2),
        "rx_dropped": d["rx_dropped"],
        "cpu_bound_requests_per_s": round(hz / (d["busy_cycles"] / n)),
        "sim_cycles": d["uptime_cycles"],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="http_cycles", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--path", default="/static/task.ics")
    parser.add_argument("--nic", default="liteeth", choices=(*NICS, "both"),
                        help="the SoC's Ethernet: LiteEth's MAC, the offload NIC, or both in turn")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)

    nics = NICS if args.nic == "both" else (args.nic,)
    rows = []
    for nic in nics:
        build_dir = build(default_build_dir(nic), nic=nic)
        with Simulator(build_dir, port=free_port(), echo=False, fresh_flash=True) as sim:
            sim.wait_ready()
            for keepalive in (False, True):
                rows.append({"nic": nic, **measure(sim.port, args.path, args.requests, args.concurrency,
                                                   keepalive)})
    print(f"\nVexRiscv at {rows[0]['sys_clk_hz'] / 1e6:.0f} MHz, GET {args.path}, "
          f"ab -n {args.requests} -c {args.concurrency}")
    print("| NIC | mode | busy cycles/req | rx copy | tx copy | rx handling (lwIP+app+tx) | frames in/out per req | "
          "CPU-bound req/s | failed | rx dropped |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {NIC_LABELS[r['nic']]} | {'keep-alive' if r['keepalive'] else 'new connection'} | "
              f"{r['busy_cycles_per_request']} | "
              f"{r['rx_copy_cycles_per_request']} | {r['tx_copy_cycles_per_request']} | "
              f"{r['rx_handle_cycles_per_request']} | {r['frames_in_per_request']}/{r['frames_out_per_request']} | "
              f"{r['cpu_bound_requests_per_s']} | {r['failed']} | {r['rx_dropped']} |")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
