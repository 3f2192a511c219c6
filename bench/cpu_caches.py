"""What VexRiscv's cache sizes give each SoC: nic_compare's rows on builds that differ from the
SoC's own in the CPU's caches alone (issue 29, "the CPU's memory system chosen by measurement").

Every LiteX VexRiscv variant ships with a 4 KiB instruction cache and a 4 KiB data cache. Other
sizes come from VexRiscv's own generator (soc/vexriscv_netlist.py; `litedav-soc --cpu-icache
--cpu-dcache`), whose netlists also invalidate single data-cache lines: the offload driver then
drops only the lines of the descriptors and frames the NIC wrote instead of the whole cache, so
`4096:4096` differs from `prebuilt` in that alone, and `I:D:whole` builds the driver with
whole-cache invalidation on a generated netlist (LITEDAV_RX_INVALIDATE_WHOLE_CACHE). On the ideal SoC (`standard`, no MMU) the caches are direct-mapped; on the
Colorlight i5 model (`linux+no-dsp`, with an MMU) each 4 KiB is one way.

For each SoC and each CONFIG (instruction:data bytes, or `prebuilt`: the variant's own netlist,
whose data cache can only be invalidated whole), the SoC is built in
build/cpu-caches/<soc>-i<I>-d<D>-<nic> (firmware and all, the model without the profile-guided
pass: that changes no simulated cycle) and nic_compare's measurement runs on it: bulk GET and PUT,
ab -c 8, ab -k -c 10 and the latency. Figures are simulated cycles at the SoC's own clock.

    python3 -m litedav.bench.cpu_caches [--soc ideal colorlight_i5] [--nic offload]
                                        [--configs prebuilt 4096:4096 32768:8192] [--out DIR]

Writes DIR/cpu_caches.json and DIR/cpu_caches.md (default bench/results), keeping the rows of
earlier runs that this one does not measure again (--fresh: only this run's); not part of
`make bench`. Whether a board's FPGA takes the caches (block RAM, timing at its clock) is
`litedav-soc --platform colorlight_i5 --build --cpu-icache ... --cpu-dcache ...`
(docs/colorlight_i5.md).
"""

import argparse
import json
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CONFIGS = ["prebuilt", "4096:4096", "32768:8192", "32768:8192:whole"]
DEFAULT_SOCS = ["ideal"]


def parse_config(text):
    """(icache, dcache, whole): sizes in bytes (None, None: the prebuilt netlist), and whether
    the driver invalidates the whole data cache per poll although the CPU can drop lines."""
    if text == "prebuilt":
        return None, None, True
    parts = text.split(":")
    try:
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "whole"):
            raise ValueError
        return int(parts[0]), int(parts[1]), len(parts) == 3
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: INSTRUCTION:DATA cache bytes, e.g. 32768:4096, "
                                         "with :whole for whole-cache invalidation, or prebuilt")


def build_dir(soc, variant, nic, icache, dcache, whole):
    name = "prebuilt" if icache is None else f"i{icache}-d{dcache}" + ("-whole" if whole else "")
    return os.path.join(TOP, "build", "cpu-caches", f"{soc}-{variant.replace('+', '-')}-{name}-{nic}")


def build(soc, variant, nic, icache, dcache, whole):
    from litedav.bench.nic_compare import soc_board
    from litedav.sim.run import build as sim_build
    os.environ["LITEDAV_SIM_PGO"] = "0"
    soc_args = ("--cpu-variant", variant)
    if icache is not None:
        soc_args += ("--cpu-icache", str(icache), "--cpu-dcache", str(dcache))
    defs = ("-DLITEDAV_RX_INVALIDATE_WHOLE_CACHE",) if whole and icache is not None else ()
    return sim_build(build_dir(soc, variant, nic, icache, dcache, whole), nic=nic, board=soc_board(soc),
                     soc_args=soc_args, fw_defs=defs)


def measure(soc, nic, phy, path):
    from litedav.bench import nic_compare
    out = os.path.join(path, "bench")
    os.makedirs(out, exist_ok=True)
    return nic_compare.measure(nic, phy, 300, 200, out, soc=soc, build_dir=path)


ROWS = [
    ("small GET, keep-alive (ab -k -c 10): CPU cycles/request",
     lambda r: r["small_get_keep_alive"]["cpu_cycles_per_request"]),
    ("small GET, new connection (ab -c 8): CPU cycles/request",
     lambda r: r["small_get_new_connection"]["cpu_cycles_per_request"]),
    ("small GET latency, last byte in -> first byte out: median cycles",
     lambda r: r["latency"]["median_cycles"]),
    ("bulk GET 1 MiB: CPU cycles/byte", lambda r: r["bulk_get"]["cpu_cycles_per_byte"]),
    ("bulk PUT 1 MiB: CPU cycles/byte", lambda r: r["bulk_put"]["cpu_cycles_per_byte"]),
    ("bulk PUT 1 MiB: MB/s", lambda r: r["bulk_put"]["goodput_MBps"]),
]


def config_label(icache, dcache, whole=False):
    if icache is None:
        return "I 4 / D 4 KiB, prebuilt (whole D-cache invalidated)"
    return f"I {icache // 1024} / D {dcache // 1024} KiB" + (", whole D-cache invalidated" if whole else "")


def markdown(results):
    """results: [{"soc", "cpu_variant", "nic", "phy", "icache", "dcache", "whole", "result"}], one
    table per SoC; with more than one CPU variant on a SoC, its columns name theirs."""
    from litedav.bench.nic_compare import soc_label
    lines = []
    for soc in dict.fromkeys(r["soc"] for r in results):
        rows = sorted((r for r in results if r["soc"] == soc),
                      key=lambda r: (r["cpu_variant"], r["icache"] is not None, r["icache"] or 0,
                                     r["dcache"] or 0, bool(r.get("whole"))))
        variants = list(dict.fromkeys(r["cpu_variant"] for r in rows))
        first = rows[0]
        hz = first["result"]["sys_clk_hz"]
        commits = sorted({r["result"]["commit"] for r in rows})
        ways = ", ".join(f"{v}: " + ("one 4 KiB way per 4 KiB" if v.startswith("linux") else "direct-mapped")
                         for v in variants)
        lines += [f"**VexRiscv cache sizes on the {soc_label(soc)} ({', '.join(variants)} at "
                  f"{hz / 1e6:g} MHz, {first['nic']}, {first['phy'].upper()}; commit "
                  f"{', '.join(commits)})** (`python3 -m litedav.bench.cpu_caches`: the netlists "
                  f"from VexRiscv's generator, soc/vexriscv_netlist.py, except `prebuilt`; 32-byte lines; "
                  f"{ways}; nothing else changed)", ""]
        label = lambda r: ((f"{r['cpu_variant']}, " if len(variants) > 1 else "")
                           + config_label(r["icache"], r["dcache"], r.get("whole")))
        lines += ["| row | " + " | ".join(label(r) for r in rows) + " |", "|---|" + "---|" * len(rows)]
        for name, get in ROWS:
            cells = []
            for r in rows:
                try:
                    cells.append(f"{get(r['result']):,}")
                except (KeyError, TypeError):
                    cells.append("-")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    from litedav.bench.nic_compare import soc_board
    from litedav.soc import vexriscv_netlist
    parser = argparse.ArgumentParser(prog="cpu_caches", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--soc", nargs="+", default=DEFAULT_SOCS, choices=["ideal", "colorlight_i5"])
    parser.add_argument("--configs", type=parse_config, nargs="+",
                        default=[parse_config(c) for c in DEFAULT_CONFIGS],
                        help="INSTRUCTION:DATA cache bytes (default: %(default)s)")
    parser.add_argument("--cpu-variant", default=None,
                        help="VexRiscv variant (litedav-soc --cpu-variant; default: each SoC's own, standard "
                             "on the ideal SoC, linux+no-dsp on the Colorlight i5)")
    parser.add_argument("--nic", default="offload", choices=["liteeth", "offload"])
    parser.add_argument("--phy", default=None, choices=["gmii", "mii"],
                        help="default: gmii on the ideal SoC, mii on a board model")
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"))
    parser.add_argument("--fresh", action="store_true",
                        help="drop the rows of earlier runs (default: keep those not measured again)")
    args = parser.parse_args(argv)
    variants = {}
    for soc in args.soc:
        board = soc_board(soc)
        if args.cpu_variant:
            variants[soc] = args.cpu_variant
        elif board:
            from litedav.platforms.sim import BOARD_MODELS
            variants[soc] = BOARD_MODELS[board].CPU_VARIANT
        else:
            from litedav.platforms.sim import CPU_VARIANT
            variants[soc] = CPU_VARIANT
        for icache, dcache, _ in args.configs:   # every size is checked before anything is built
            try:
                vexriscv_netlist.generator_args(variants[soc], icache, dcache)
            except vexriscv_netlist.NetlistError as e:
                sys.exit(f"cpu_caches: {soc}, {icache}:{dcache}: {e}")
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "cpu_caches.json")
    results = []
    if os.path.exists(json_path) and not args.fresh:   # rows of earlier runs stay, unless remeasured
        with open(json_path) as f:
            results = json.load(f)
    for soc in args.soc:
        phy = args.phy or ("mii" if soc_board(soc) else "gmii")
        for icache, dcache, whole in args.configs:
            label = config_label(icache, dcache, whole)
            print(f"[cpu_caches] {soc}, {label}: building", flush=True)
            path = build(soc, variants[soc], args.nic, icache, dcache, whole)
            print(f"[cpu_caches] {soc}, {label}: measuring", flush=True)
            row = {"soc": soc, "cpu_variant": variants[soc], "nic": args.nic, "phy": phy,
                   "icache": icache, "dcache": dcache, "whole": whole,
                   "result": measure(soc, args.nic, phy, path)}
            key = lambda r: (r["soc"], r["cpu_variant"], r["nic"], r["phy"], r["icache"], r["dcache"],
                             r.get("whole", r["icache"] is None))
            results = [r for r in results if key(r) != key(row)] + [row]
            # written after every measurement: a later failure loses nothing measured
            with open(json_path, "w") as f:
                json.dump(results, f, indent=2, default=str)
            table = markdown(results)
            with open(os.path.join(args.out, "cpu_caches.md"), "w") as f:
                f.write(table)
    print(table)


if __name__ == "__main__":
    main()
