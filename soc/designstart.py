#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Arm's soft Cortex-M cores for LiteX (`--cpu cortex_m1`, `--cpu cortex_m3`): the user supplies
the RTL.

LiteX 2024.12 has CPU wrappers for Arm's Cortex-M1 and Cortex-M3 DesignStart FPGA cores, but not
the cores themselves: Arm distributes them from its website (the "DesignStart FPGA" Xilinx
editions, free after registration, under Arm's licence), not through any package registry, so
LiteDAV cannot install them. Unpack the archive into the DesignStart folder (default
`third_party/arm-designstart` in this repository, or `--designstart-dir DIR`, or the
LITEDAV_DESIGNSTART environment variable) so that the folder LiteX reads exists:

    <dir>/AT426-BU-98000-r0p1-00rel0/vivado/Arm_ipi_repository/CM3DbgAXI/rtl/          (Cortex-M3)
    <dir>/AT472-BU-98000-r0p1-00rel0/vivado/Arm_ipi_repository/CM1DbgAXI/logical/rtl/  (Cortex-M1)

Both are Xilinx editions (Arm's reference board is the Arty A7): `--platform arty_a7 --cpu
cortex_m3` writes the Vivado project with them. Without the files litedav-soc stops before
building anything and names the folder it looked for.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join("third_party", "arm-designstart")

# cpu type -> (Arm's product name, archive folder, RTL folder inside it, top module LiteX instantiates)
CORES = {
    "cortex_m3": ("Cortex-M3 DesignStart FPGA-Xilinx edition", "AT426-BU-98000-r0p1-00rel0",
                  "vivado/Arm_ipi_repository/CM3DbgAXI/rtl", "CortexM3DbgAXI"),
    "cortex_m1": ("Cortex-M1 DesignStart FPGA-Xilinx edition", "AT472-BU-98000-r0p1-00rel0",
                  "vivado/Arm_ipi_repository/CM1DbgAXI/logical/rtl", "CortexM1DbgAXI"),
}

RTL_EXTENSIONS = (".v", ".sv", ".vhd", ".vhdl")


def designstart_dir(arg=None):
    """The DesignStart folder: --designstart-dir, else $LITEDAV_DESIGNSTART, else the default
    (relative paths: from the repository)."""
    path = arg or os.environ.get("LITEDAV_DESIGNSTART") or DEFAULT_DIR
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def check(cpu_type, base):
    """The folder LiteX must be run from (its wrapper adds the RTL by a relative path) when the
    core's RTL is there; SystemExit naming what is missing and where to put it otherwise."""
    product, archive, rtl, top = CORES[cpu_type]
    rtl_dir = os.path.join(base, archive, rtl)
    found = []
    if os.path.isdir(rtl_dir):
        for folder, _, files in os.walk(rtl_dir):
            found += [f for f in files if f.endswith(RTL_EXTENSIONS)]
    if not found:
        raise SystemExit(
            f"litedav-soc: --cpu {cpu_type} needs Arm's {product} RTL (module {top}), which is not "
            f"a registry package and is not installed: no Verilog in {rtl_dir}. Download it from "
            f"Arm (developer.arm.com, DesignStart FPGA, free registration), unpack it so that "
            f"{os.path.join(archive, rtl)} lies under {base} (or pass --designstart-dir DIR / set "
            f"LITEDAV_DESIGNSTART), then run again (soc/designstart.py).")
    return base
