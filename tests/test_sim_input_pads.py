"""No logic of a simulated SoC depends combinationally on an input pad (bench/README.md, the
simulator's own speed).

Verilator evaluates the logic that follows a top-level input at every eval, at both clock edges:
through a combinational `ready`, `ack` or interrupt that was the NIC's TX path, the bus and the
CPU's interrupt logic, twice a cycle. The sim pads' inputs (sim/phy.py SimPHY and SimSerialPads,
sim/flash.py SimFlash, LiteSPI's PHY) feed registers only, and the sim modules drive them a cycle
ahead. This test reads the generated Verilog of each simulated SoC (generation only, no Verilator
compile): every use of an input port of the `sim` module must sit inside an `always
@(posedge ...)` block; an `assign`, an `always @(*)` or an instance's port that reads one fails.
"""
import os
import re

import pytest

from test_soc_build import generate_sim_soc

# Inputs that are clocks, not data.
CLOCKS = {"sys_clk"}


def input_ports(verilog):
    header = verilog[verilog.index("module sim ("):]
    header = header[:header.index(");")]
    return re.findall(r"^\s*input\s+wire\s+(?:\[\d+:\d+\]\s+)?(\w+)", header, re.M)


def combinational_uses(verilog, names):
    """{name: [line, ...]} of the uses of `names` outside sequential blocks (after the port list)."""
    body = verilog[verilog.index(");", verilog.index("module sim (")) + 2:]
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    uses, block = {}, None
    for line in body.splitlines():
        if line.startswith("always @(posedge"):
            block = "sequential"
        elif line.startswith("always @"):
            block = "combinational"
        elif line.startswith("end") and not line.startswith("endmodule"):
            block = None
        if block == "sequential":
            continue
        for name in pattern.findall(line):
            uses.setdefault(name, []).append(line.strip())
    return uses


def generated_verilog(out, args):
    generate_sim_soc(out, args, timeout=600)
    with open(os.path.join(out, "gateware", "sim.v")) as f:
        return f.read()


@pytest.mark.parametrize("args", [
    ["--nic", "liteeth"],
    ["--nic", "offload"],
    ["--nic", "offload", "--spi-flash"],
    ["--board", "colorlight_i5"],
], ids=["liteeth", "offload", "spi-flash", "colorlight_i5-model"])
def test_input_pads_feed_registers_only(tmp_path, args):
    verilog = generated_verilog(str(tmp_path), args)
    inputs = [name for name in input_ports(verilog) if name not in CLOCKS]
    assert any(name.startswith("eth") for name in inputs), inputs
    assert any(name.startswith("serial") for name in inputs), inputs
    uses = combinational_uses(verilog, inputs)
    assert not uses, "input pads read outside a clocked block:\n" + "\n".join(
        f"  {name}: {lines[0]}" for name, lines in sorted(uses.items()))


def test_the_check_sees_a_combinational_input():
    """The parser itself: an assign, an always @(*) and an instance port are found, a clocked
    block is not."""
    verilog = """module sim (
    input  wire          a,
    input  wire    [7:0] b,
    input  wire          c,
    input  wire          d,
    input  wire          sys_clk
);
assign x = a;
always @(*) begin
    y <= b;
end
always @(posedge sys_clk) begin
    z <= d;
end
Inst inst(
    .p(c)
);
endmodule
"""
    inputs = [name for name in input_ports(verilog) if name not in CLOCKS]
    assert inputs == ["a", "b", "c", "d"]
    assert sorted(combinational_uses(verilog, inputs)) == ["a", "b", "c"]
