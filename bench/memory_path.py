#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The Colorlight i5's memory path: sustained bytes per cycle per bus master (issue 27).

Runs the cocotb test cocotb_tests/test_memory_path.py (the board's SDRAM DMA ports and L2, LiteDRAM
controller and SDRAM model with the M12L64322A's timings, driven by gateware traffic generators)
and writes its figures as section "memory_path" of bench/results/latest.{json,md}: for each phase
(RX-DMA-like writes, TX-DMA-like reads, each alone and with CPU-like cache traffic beside it),
bytes per sys_clk cycle per master and MB/s at the board's 75 MHz.

    python3 -m litedav.bench.memory_path [--out DIR]
"""

import argparse
import json
import os
import subprocess
import sys

from litedav.bench.lm3s_instructions import merge_section
from litedav.sim.run import source_commit

TOP       = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST      = os.path.join(TOP, "cocotb_tests", "test_memory_path.py")
FIGURES   = os.path.join(TOP, "cocotb_tests", "sim_build", "memory_path", "figures.json")
SECTION   = "memory_path"
MD_BEGIN  = "<!-- memory_path begin (written by litedav.bench.memory_path) -->"
MD_END    = "<!-- memory_path end -->"


def markdown(result):
    hz = result["sys_clk_hz"]
    lines = [MD_BEGIN,
             f"\n**Colorlight i5 memory path: bytes per sys_clk cycle per master** (cocotb: the NIC's masters "
             f"on SDRAM DMA ports, `litedav-soc --nic-sdram-ports`, not yet the bitstream's; "
             f"{result['l2_size'] // 1024} KiB L2, LiteDRAM, M12L64322A model; "
             f"{result['burst_words']}-word bursts; MB/s at {hz / 1e6:g} MHz; goal "
             f"{result['goal_bytes_per_cycle']} B/cycle per DMA master with the CPU running; "
             f"commit {result['commit']})\n",
             "| phase | RX DMA B/cycle | TX DMA B/cycle | CPU B/cycle | RX MB/s | TX MB/s |",
             "|---|---|---|---|---|---|"]
    for row in result["phases"]:
        lines.append(f"| {row['phase']} | {row['rx_bytes_per_cycle']:.3f} | {row['tx_bytes_per_cycle']:.3f} | "
                     f"{row['cpu_bytes_per_cycle']:.3f} | {row['rx_bytes_per_cycle'] * hz / 1e6:.1f} | "
                     f"{row['tx_bytes_per_cycle'] * hz / 1e6:.1f} |")
    lines.append(MD_END)
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="memory_path", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"),
                        help="folder of latest.json / latest.md to merge into (default bench/results)")
    args = parser.parse_args(argv)
    if os.path.exists(FIGURES):
        os.remove(FIGURES)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", TEST], cwd=TOP)
    if run.returncode != 0 or not os.path.exists(FIGURES):
        sys.exit("memory_path: the cocotb test failed; no figures written")
    with open(FIGURES) as f:
        result = json.load(f)
    result["commit"] = source_commit() or "unknown"
    print(merge_section(args.out, SECTION, result, markdown(result), MD_BEGIN, MD_END))


if __name__ == "__main__":
    main()
