"""Plain LiteEth MAC vs the offload NIC, side by side, on the simulated SoCs: the ideal SoC
(VexRiscv at 125 MHz, single-cycle RAM) and each board model (the board's SoC as built:
docs/board_model.md), each at the PHYs its sys_clk carries.

For each PHY (GMII 1000 Mbit/s and MII 100 Mbit/s, both paced at wire rate with preamble,
FCS and inter-frame gap) and each NIC, boots the simulator with a pcap trace and measures:

  bulk GET   1 MiB from /bulk: goodput (MB/s) and CPU cycles per byte
  bulk PUT   1 MiB to /bulk: goodput and CPU cycles per byte
  small GET  /static/task.ics (709 bytes), one connection per request (ab -c 8) and
             keep-alive (ab -k -c 10): requests/s and CPU cycles per request
  latency    the request's last byte in -> the response's first byte out, for small GETs
             one at a time (ab -k -c 1), so no request waits behind another

Every figure comes from simulated time: CPU cycles from the SoC's cycle counter (status page,
busy = not idle in the main loop), goodput and latency from the pcap's simulated-time stamps.
bench/README.md defines each figure.

    python3 -m litedav.bench.nic_compare [--soc ideal colorlight_i5] [--phy gmii mii] [--requests N]
                                         [--out DIR]

Writes DIR/latest.json (section "soc"), DIR/latest.md and DIR/latest.png (default bench/results/),
keeping the sections other benchmarks merged into latest.json and latest.md (`make bench` adds the
LM3S9B95 port's instructions per request: litedav.bench.lm3s_instructions).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request

from litedav.bench.pcap_flows import latencies_ns, tcp_flows
from litedav.sim.config import BOARD_MODEL_PHYS, IDEAL_SOC, check_phy
from litedav.sim.run import NICS, SimOptions, Simulator, build, default_build_dir, free_port, read_build_commit

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NIC_LABELS = {"liteeth": "LiteEth", "offload": "offload NIC"}
PHY_MBPS = {"gmii": 1000, "mii": 100}
BULK_SIZE = 1024 * 1024
# A full-sized TCP segment on the wire: 1460 payload + 40 TCP/IPv4 + 14 Ethernet + 4 FCS +
# 8 preamble + 12 inter-frame gap bytes.
WIRE_BYTES_PER_SEGMENT = 1460 + 40 + 14 + 4 + 8 + 12


class BenchError(RuntimeError):
    """A measurement that could not be made (a wrong answer, a failed client)."""


def link_limit_MBps(phy):
    """The most TCP payload the link carries, MB/s (10^6 bytes)."""
    return PHY_MBPS[phy] / 8 * 1460 / WIRE_BYTES_PER_SEGMENT
SMALL_PATH = "/static/task.ics"
AUTH = "Basic ZGVtbzpkZW1v"  # demo:demo, the demo user (README)
LATENCY_REQUESTS = 50
LATENCY_QUERY = "?latency"


def read_status(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=300) as r:
        body = r.read().decode()
    return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", body, re.M)}


def status_cost(port):
    """Busy cycles one status read adds to a before/after difference (it is rendered in
    the middle of the second read), measured the same way with nothing in between."""
    costs = []
    for _ in range(3):
        a, b = read_status(port), read_status(port)
        costs.append(b["busy_cycles"] - a["busy_cycles"])
    return min(costs)


# A socket's inactivity limit for the bulk transfers: a board model at MII that loses frames waits
# out slirp's retransmission timeouts in simulated time, at a few hundred thousand cycles per
# wall second (a 1 MiB PUT took 8 minutes of wall time on a quiet host).
BULK_TIMEOUT_S = 3600


def http(port, method, path, body=None, headers=None, timeout=BULK_TIMEOUT_S):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                 headers=headers or {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def deltas(before, after):
    return {k: after[k] - before[k] for k in after if k in before}


def bulk(sim, payload, overhead):
    """PUT then GET of payload through /bulk; CPU cycles from the status page."""
    rows = {}
    before = read_status(sim.port)
    status, _ = http(sim.port, "PUT", "/bulk", payload,
                     {"Authorization": AUTH, "Content-Type": "application/octet-stream"})
    after = read_status(sim.port)
    if status != 204:
        raise BenchError(f"PUT /bulk answered {status}")
    rows["put"] = deltas(before, after)
    before = read_status(sim.port)
    status, body = http(sim.port, "GET", "/bulk")
    after = read_status(sim.port)
    if status != 200 or body != payload:
        raise BenchError(f"GET /bulk answered {status} with {len(body)} bytes that differ from the PUT")
    rows["get"] = deltas(before, after)
    for d in rows.values():
        d["busy_cycles"] -= overhead
    return rows


def ab(port, requests, concurrency, keepalive, query=""):
    cmd = ["ab", "-q", "-n", str(requests), "-c", str(concurrency), "-s", "300"]
    if keepalive:
        cmd.append("-k")
    before = read_status(port)
    out = subprocess.run(cmd + [f"http://127.0.0.1:{port}{SMALL_PATH}{query}"], capture_output=True, text=True)
    after = read_status(port)
    failed = re.search(r"^Failed requests:\s+(\d+)", out.stdout, re.M)
    length = re.search(r"^Document Length:\s+(\d+)", out.stdout, re.M)
    if out.returncode != 0 or not failed:
        raise BenchError(f"ab failed:\n{out.stdout}\n{out.stderr}")
    d = deltas(before, after)
    d["failed"] = int(failed.group(1))
    d["document_length"] = int(length.group(1)) if length else None
    d["requests"] -= 1  # the second status read is itself a request
    return d


def transfer_times(flows):
    """Simulated wire time of the bulk transfers: GET from the request's last byte in to
    the response's last byte out; PUT from the request's first byte in to the response's
    first byte out (the 204 leaves once the last body byte is stored)."""
    times = {}
    for flow in flows.values():
        for line, request, response in flow.requests():
            if not response:
                continue
            if line.startswith("GET /bulk"):
                times["get"] = response[-1].end_ns - request[-1].end_ns
            elif line.startswith("PUT /bulk"):
                times["put"] = response[0].start_ns - request[0].start_ns
    return times


def soc_board(soc):
    """The board model a SoC name stands for, None for the ideal SoC (build()'s `board`)."""
    return None if soc == IDEAL_SOC else soc


def soc_build_dir(soc, nic):
    return default_build_dir(nic, board=soc_board(soc))


def soc_label(soc):
    return "ideal SoC" if soc == IDEAL_SOC else f"{soc} board model"


def measure(nic, phy, requests, new_requests, out_dir, keep_pcap=False, new_concurrency=8, soc=IDEAL_SOC,
            build_dir=None):
    """build_dir: a build of soc's other than its default folder (bench/cpu_caches.py's)."""
    build_dir = build_dir or soc_build_dir(soc, nic)
    pcap = os.path.join(out_dir, f"{nic}-{phy}.pcap" if soc == IDEAL_SOC else f"{soc}-{nic}-{phy}.pcap")
    payload = os.urandom(BULK_SIZE)
    t0 = time.time()
    # peer_pid: simulated time waits for this process and ab (bench/README.md, "The peer")
    with Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True, phy=phy,
                                         pcap=pcap, peer_pid=os.getpid())) as sim:
        sim.wait_ready()
        hz = read_status(sim.port)["sys_clk_hz"]
        overhead = status_cost(sim.port)
        bulk_rows = bulk(sim, payload, overhead)
        small = {"new connection": ab(sim.port, new_requests, new_concurrency, False),
                 "keep-alive": ab(sim.port, requests, 10, True)}
        # the query string marks these requests in the pcap (/static/ ignores it)
        ab(sim.port, LATENCY_REQUESTS, 1, True, LATENCY_QUERY)
    peer = sim.peer_counters()
    if not peer or peer["unsynchronized"]:
        print(f"nic_compare: warning: {nic} {phy}: simulated time went on without the clients "
              f"({peer}): its figures depend on the host's speed", file=sys.stderr)
    byte_ns = 8000 / PHY_MBPS[phy]
    flows = tcp_flows(pcap, byte_ns)
    times = transfer_times(flows)
    lat = latencies_ns(flows, f"GET {SMALL_PATH}{LATENCY_QUERY}")
    result = {"soc": soc, "nic": nic, "phy": phy, "commit": read_build_commit(build_dir), "link_mbps": PHY_MBPS[phy], "sys_clk_hz": hz,
              "wall_s": round(time.time() - t0), "status_read_cycles": overhead, "peer": peer}
    for kind in ("get", "put"):
        d = bulk_rows[kind]
        result[f"bulk_{kind}"] = {
            "bytes": BULK_SIZE,
            "goodput_MBps": round(BULK_SIZE / times[kind] * 1e3, 2) if kind in times else None,
            "wire_ns": round(times.get(kind, 0)),
            "cpu_cycles": d["busy_cycles"],
            "cpu_cycles_per_byte": round(d["busy_cycles"] / BULK_SIZE, 3),
            "frames_in": d["frames_in"], "frames_out": d["frames_out"],
            "rx_dropped": d["rx_dropped"], "tx_dropped": d["tx_dropped"],
        }
    for mode, d in small.items():
        n = d["requests"]
        busy = d["busy_cycles"] - overhead
        result[f"small_get_{mode.replace(' ', '_').replace('-', '_')}"] = {
            "requests": n, "failed": d["failed"], "document_length": d["document_length"],
            "cpu_cycles_per_request": round(busy / n),
            "cpu_bound_requests_per_s": round(hz / (busy / n)),
            "requests_per_s": round(n / (d["uptime_cycles"] / hz)),
            "rx_driver_cycles_per_request": round(d["rx_copy_cycles"] / n),
            "tx_driver_cycles_per_request": round(d["tx_copy_cycles"] / n),
            "frames_per_request": round((d["frames_in"] + d["frames_out"]) / n, 2),
            "rx_dropped": d["rx_dropped"],
        }
    if lat:
        result["latency"] = {
            "samples": len(lat),
            "median_cycles": round(statistics.median(lat) * hz / 1e9),
            "median_us": round(statistics.median(lat) / 1e3, 2),
            "p95_us": round(sorted(lat)[int(0.95 * (len(lat) - 1))] / 1e3, 2),
        }
    if not keep_pcap:
        os.remove(pcap)  # megabytes of frames; --keep-pcap keeps it for wireshark/tcpdump -r
    return result


def ratio(a, b, digits=1):
    return f"{a / b:.{digits}f}x" if a and b else "-"


class NotMeasured:
    """A NIC a run did not measure (--nic): every figure of it reads "-"."""
    def __getitem__(self, key):
        return self

    def get(self, key, default=None):
        return default

    def __bool__(self):
        return False

    def __format__(self, spec):
        return "-"

    __str__ = __repr__ = lambda self: "-"


def markdown(results):
    lines = []
    # rows written before the board models are the ideal SoC's
    by = {(r.get("soc", IDEAL_SOC), r["nic"], r["phy"]): r for r in results}
    for soc, phy in dict.fromkeys((r.get("soc", IDEAL_SOC), r["phy"]) for r in results):
        le, off = by.get((soc, "liteeth", phy)), by.get((soc, "offload", phy))
        mhz = (le or off)["sys_clk_hz"] / 1e6
        le, off = le or NotMeasured(), off or NotMeasured()
        commits = {r.get("commit") or "not recorded (rows before 8171622)" for r in (le, off) if r}
        commit_text = (f"commit {commits.pop()}" if len(commits) == 1 else
                       f"commits: LiteEth {le.get('commit')}, offload NIC {off.get('commit')}")
        lines += [f"\n**{phy.upper()} {PHY_MBPS[phy]} Mbit/s (TCP payload limit {link_limit_MBps(phy):.2f} MB/s), "
                  f"{soc_label(soc)}: VexRiscv at {mhz:g} MHz; {commit_text}**\n",
                  "| figure | LiteEth | offload NIC | offload gain |", "|---|---|---|---|"]

        def row(name, a, b, gain):
            lines.append(f"| {name} | {a} | {b} | {gain} |")

        for kind in ("get", "put"):
            a, b = le[f"bulk_{kind}"], off[f"bulk_{kind}"]
            row(f"bulk {kind.upper()} 1 MiB: goodput MB/s", a["goodput_MBps"], b["goodput_MBps"],
                ratio(b["goodput_MBps"], a["goodput_MBps"], 2))
            row(f"bulk {kind.upper()} 1 MiB: CPU cycles/byte", a["cpu_cycles_per_byte"],
                b["cpu_cycles_per_byte"], ratio(a["cpu_cycles_per_byte"], b["cpu_cycles_per_byte"]))
        for mode, key in (("new connection per request, ab -c 8", "small_get_new_connection"),
                          ("keep-alive, ab -k -c 10", "small_get_keep_alive")):
            a, b = le[key], off[key]
            row(f"small GET ({mode}): CPU cycles/request", a["cpu_cycles_per_request"],
                b["cpu_cycles_per_request"], ratio(a["cpu_cycles_per_request"], b["cpu_cycles_per_request"], 2))
            row(f"small GET ({mode}): CPU-bound requests/s", a["cpu_bound_requests_per_s"],
                b["cpu_bound_requests_per_s"], ratio(b["cpu_bound_requests_per_s"], a["cpu_bound_requests_per_s"], 2))
            row(f"small GET ({mode}): requests/s served, failed", f"{a['requests_per_s']}, {a['failed']}",
                f"{b['requests_per_s']}, {b['failed']}", ratio(b["requests_per_s"], a["requests_per_s"], 2))
        la, lb = le.get("latency"), off.get("latency")
        if la and lb:
            row("small GET latency (one at a time), last byte in -> first byte out: median cycles (µs)",
                f"{la['median_cycles']} ({la['median_us']})", f"{lb['median_cycles']} ({lb['median_us']})",
                ratio(la["median_cycles"], lb["median_cycles"], 2))
    return "\n".join(lines) + "\n"


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = [r for r in results if r.get("soc", IDEAL_SOC) == IDEAL_SOC]  # the board models: the table

    phys = list(dict.fromkeys(r["phy"] for r in results))
    panels = [("bulk GET goodput, MB/s\n(dashed: the link's limit)", lambda r: r["bulk_get"]["goodput_MBps"]),
              ("bulk PUT goodput, MB/s\n(dashed: the link's limit)", lambda r: r["bulk_put"]["goodput_MBps"]),
              ("bulk GET, CPU cycles/byte", lambda r: r["bulk_get"]["cpu_cycles_per_byte"]),
              ("small GET, CPU cycles/request\n(new connection)",
               lambda r: r["small_get_new_connection"]["cpu_cycles_per_request"])]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6))
    for ax, (title, value) in zip(axes, panels):
        for i, nic in enumerate(NICS):
            vals = [next((value(r) or 0 for r in results if r["nic"] == nic and r["phy"] == p), 0) for p in phys]
            xs = [j + (i - 0.5) * 0.38 for j in range(len(phys))]
            bars = ax.bar(xs, vals, width=0.36, label=NIC_LABELS[nic])
            ax.bar_label(bars, fmt="%.3g", fontsize=7)
        if "goodput" in title:
            for j, p in enumerate(phys):
                ax.hlines(link_limit_MBps(p), j - 0.45, j + 0.45, colors="gray", linestyles="dashed")
        ax.set_xticks(range(len(phys)), [f"{p.upper()}\n{PHY_MBPS[p]} Mbit/s" for p in phys])
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=8)
    mhz = results[0]["sys_clk_hz"] / 1e6
    fig.suptitle(f"LiteDAV on the simulated SoC (VexRiscv {mhz:g} MHz): plain LiteEth vs offload NIC",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="nic_compare", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phy", nargs="+", default=["gmii", "mii"], choices=list(PHY_MBPS),
                        help="link rates to measure")
    parser.add_argument("--nic", nargs="+", default=list(NICS), choices=NICS)
    parser.add_argument("--soc", nargs="+", default=[IDEAL_SOC, *BOARD_MODEL_PHYS],
                        choices=[IDEAL_SOC, *BOARD_MODEL_PHYS],
                        help="SoCs to measure: the ideal SoC (125 MHz, single-cycle RAM) and the board "
                             "models (docs/board_model.md); a board model runs only the PHYs its sys_clk "
                             "carries (the simulated PHY moves a byte per cycle)")
    parser.add_argument("--requests", type=int, default=300, help="requests of the keep-alive ab run")
    parser.add_argument("--new-requests", type=int, default=200,
                        help="requests of the new-connection ab run (waves of --new-concurrency)")
    parser.add_argument("--new-concurrency", type=int, default=8,
                        help="concurrent new connections (ab -c): a wave the SoC's receive buffers absorb "
                             "(bench/README.md: larger waves lose frames and wait out slirp's timeouts)")
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"), help="output directory")
    parser.add_argument("--replot", metavar="JSON",
                        help="no simulation: write the table and plot again from an earlier latest.json")
    parser.add_argument("--keep-pcap", action="store_true",
                        help="keep each run's trace as OUT/<nic>-<phy>.pcap (simulated-time stamps)")
    args = parser.parse_args(argv)

    os.makedirs(args.out, exist_ok=True)
    if args.replot:
        with open(args.replot) as f:
            results = json.load(f)
        if isinstance(results, dict):
            results = results["soc"]
        write_reports(results, args.out, write_json=False)
        return
    sys_clk_hz = {}
    for soc in args.soc:
        for nic in args.nic:
            build_dir = build(soc_build_dir(soc, nic), nic=nic, board=soc_board(soc))
            sys_clk_hz[soc] = Simulator._sys_clk_hz(os.path.join(build_dir, "gateware"))
    results, failed = [], []
    for soc in args.soc:
        for phy in args.phy:
            try:
                check_phy(phy, sys_clk_hz[soc])
            except ValueError as e:
                print(f"[bench] {soc_label(soc)}, {phy.upper()}: skipped ({e})", flush=True)
                continue
            for nic in args.nic:
                what = f"{soc_label(soc)}, {NIC_LABELS[nic]}, {phy.upper()} {PHY_MBPS[phy]} Mbit/s"
                print(f"[bench] {what} ...", flush=True)
                try:
                    results.append(measure(nic, phy, args.requests, args.new_requests, args.out,
                                           args.keep_pcap, args.new_concurrency, soc))
                except Exception as e:  # noqa: BLE001
                    # the other measurements still run; this one keeps its old row, if any
                    failed.append(f"{what}: {e!r}")
                    print(f"[bench]   FAILED: {e!r}", file=sys.stderr, flush=True)
                    continue
                print(f"[bench]   done in {results[-1]['wall_s']} s of wall time", flush=True)
                # written after every measurement: a later failure loses nothing measured
                write_reports(results, args.out)
    if not results and not failed:
        sys.exit("nic_compare: nothing measured (every PHY skipped)")
    if failed:
        sys.exit("nic_compare: these measurements failed; their rows were not written:\n  " + "\n  ".join(failed))


def write_reports(results, out, write_json=True):
    json_path, md_path = os.path.join(out, "latest.json"), os.path.join(out, "latest.md")
    if write_json:
        data = {}
        if os.path.exists(json_path):
            with open(json_path) as f:
                data = json.load(f)
        # a latest.json without sections is a list, the SoC rows alone: replaced here
        data = data if isinstance(data, dict) else {}
        # rows of a SoC, NIC and PHY this run did not measure (--soc, --nic, --phy) are kept
        key = lambda r: (r.get("soc", IDEAL_SOC), r["nic"], r["phy"])  # noqa: E731
        fresh = {key(r) for r in results}
        results = [r for r in data.get("soc", []) if key(r) not in fresh] + results
        data["soc"] = results
        with open(json_path, "w") as f:
            json.dump(data, f, indent=2)
    table = markdown(results)
    print(table)
    others = ""
    if os.path.exists(md_path):
        with open(md_path) as f:
            others = "".join(m.group(0) for m in re.finditer(r"<!-- (\w+) begin.*?<!-- \1 end -->\n?",
                                                               f.read(), re.S))
    with open(md_path, "w") as f:
        f.write(table + ("\n" + others if others else ""))
    plot(results, os.path.join(out, "latest.png"))
    print(f"[bench] wrote {', '.join(['latest.json'] * write_json + ['latest.md', 'latest.png'])} in {out}")


if __name__ == "__main__":
    main()
