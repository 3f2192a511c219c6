#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Plumbing shared by the cocotb tests: Migen core -> Verilog with a clock -> cocotb-test run.

Each test wraps its core in a small Migen harness whose ports are packed into a few wide signals,
so that a simulated cycle costs the Python testbench one write and one read. The clock is made in
Verilog (Verilator --timing): a cocotb Clock would add two Python callbacks per cycle. Because the
edge is evaluated inside Verilator, cocotb sees registers already updated at RisingEdge: harnesses
register what each edge transferred, and testbenches write their inputs for the next edge at once
(setimmediatevalue) instead of in the ReadWrite phase. streams.py packs stream endpoints that way
and drives them.

The cores are imported as `litedav.gateware.*`, the package setup.py installs, as the SoC imports
them; the simulator's Python sees the same sys.path as pytest's (cocotb-test passes it on).
"""

import os

TESTS     = os.path.dirname(os.path.abspath(__file__))
SIM_BUILD = os.path.join(TESTS, "sim_build")

FUZZ = os.environ.get("LITEDAV_FUZZ", "0") not in ("", "0")
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))

VERILATOR_ARGS = ["--timing", "-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-COMBDLY", "-Wno-INITIALDLY"]


def sim_build(name):
    return os.path.join(SIM_BUILD, name)


def build_verilog(name, harness, inputs, outputs, clock_period_ns=8, extra_clocks=None):
    """Write `<name>_tb.v`: the Migen `harness` (sys clock domain; `inputs`/`outputs` are named
    Signals) and a top `<name>_tb` that generates sys_clk. Rewritten only when it changes, so that
    Verilator's make stays incremental."""
    from migen.fhdl.verilog import convert

    ports = [("input", s) for s in inputs] + [("output", s) for s in outputs]
    clocks  = extra_clocks or {}
    verilog = str(convert(harness, ios={s for _, s in ports} | set(clocks), name=f"{name}_harness"))
    declarations = ", ".join(f"{direction} [{len(s) - 1}:0] {s.name_override}" for direction, s in ports)
    connections  = ", ".join(f".{s.name_override}({s.name_override})" for s in [s for _, s in ports] + list(clocks))
    generators   = "".join(f"\n    reg {c.name_override} = 1'b0;\n    always #{p/2} {c.name_override} = ~{c.name_override};"
                           for c, p in clocks.items())
    verilog += f"""
`timescale 1ns/1ps
module {name}_tb(input sys_rst, {declarations});
    reg sys_clk = 1'b0;
    always #{clock_period_ns/2} sys_clk = ~sys_clk;{generators}
    {name}_harness harness(.sys_clk(sys_clk), .sys_rst(sys_rst), {connections});
endmodule
"""
    os.makedirs(sim_build(name), exist_ok=True)
    path = os.path.join(sim_build(name), f"{name}_tb.v")
    if not os.path.exists(path) or open(path).read() != verilog:
        with open(path, "w") as f:
            f.write(verilog)
    return path


def run_cocotb(name, module, verilog, testcase):
    """Build with Verilator (incrementally) and run one cocotb test of `module`."""
    from cocotb_test.simulator import run

    # One results file per core, removed first so that a crashed simulation cannot pass on an old
    # one (cocotb-test would otherwise leave a new temporary file behind on every run).
    results = os.path.join(sim_build(name), "results.xml")
    if os.path.exists(results):
        os.remove(results)
    os.environ["COCOTB_RESULTS_FILE"] = results
    try:
        run(verilog_sources=[verilog], toplevel=f"{name}_tb", module=module, testcase=testcase,
            simulator="verilator", sim_build=sim_build(name), compile_args=VERILATOR_ARGS,
            make_args=["-j2"], python_search=[TESTS],
            extra_env={"LITEDAV_FUZZ": "1" if FUZZ else "0", "LITEDAV_SEED": str(SEED)})
    finally:
        del os.environ["COCOTB_RESULTS_FILE"]


async def reset(dut, cycles=3):
    from cocotb.triggers import RisingEdge

    dut.sys_rst.value = 1
    for _ in range(cycles):
        await RisingEdge(dut.sys_clk)
    dut.sys_rst.value = 0
    await RisingEdge(dut.sys_clk)
