"""soc/vexriscv_netlist.py: VexRiscv's generator makes a netlist with the caches asked for, the
same CPU otherwise (ports, the other cache), that Verilator takes; sizes it cannot make are
refused before anything runs; the prebuilt sizes use pythondata's netlist."""
import os
import re
import subprocess

import pytest

from litedav.soc import vexriscv_netlist as vn


def module(verilog, name):
    begin = verilog.index(f"module {name} (")
    return verilog[begin:verilog.index("endmodule", begin)]


def ports(verilog):
    """The VexRiscv module's port list (direction, width, name)."""
    head = module(verilog, "VexRiscv")
    head = head[:head.index(");")]
    return re.findall(r"(input|output)\s+(?:wire|reg)?\s*(\[[^\]]*\])?\s*(\w+)", head)


def test_sizes_it_cannot_make_are_refused():
    with pytest.raises(vn.NetlistError, match="power of two"):
        vn.generator_args("standard", 12288, None)
    with pytest.raises(vn.NetlistError, match="power of two"):
        vn.generator_args("standard", None, 512)
    with pytest.raises(vn.NetlistError, match="made for"):
        vn.generator_args("lite", 8192, None)
    assert vn.generator_args("linux+no-dsp", 16384, 8192)[-4:] == [
        "--iCacheSize", "16384", "--dCacheSize", "8192"]


def test_prebuilt_sizes_use_pythondata():
    path = vn.netlist("standard")
    assert path == os.path.join(vn.pythondata_dir(), "VexRiscv.v")
    assert vn.netlist("linux+no-dsp").endswith("VexRiscv_LinuxNoDspFmax.v")
    assert not vn.is_prebuilt("standard", 4096, None)     # a size given: generated


def test_soc_build_refuses_a_bad_size_clearly():
    result = subprocess.run(["litedav-soc", "--platform", "sim", "--cpu-icache", "3000",
                             "--output-dir", "/nonexistent-unused"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "--cpu-icache/--cpu-dcache: the instruction cache: 3000 is not a power of two" in result.stderr


def test_generated_netlist():
    """A few minutes the first time on a machine (sbt and SpinalHDL from Maven Central, VexRiscv
    compiled into build/vexriscv, which tests/test_sim_cpu_caches.py's SoC then shares), seconds
    once the netlist is there."""
    path = vn.netlist("standard", icache=8192, dcache=4096)
    with open(path) as f:
        generated = f.read()
    with open(vn.netlist("standard")) as f:
        prebuilt = f.read()
    icache = module(generated, "InstructionCache")
    assert re.search(r"reg \[31:0\] banks_0 \[0:2047\];", icache)          # 8 KiB of words
    assert re.search(r"reg \[\d+:0\] ways_0_tags \[0:255\];", icache)      # 256 lines of 32 bytes
    assert re.search(r"reg \[31:0\] banks_0 \[0:1023\];", module(prebuilt, "InstructionCache"))
    # the data cache keeps its 4 KiB: 128 lines
    assert re.search(r"ways_0_tags \[0:127\];", module(generated, "DataCache"))
    assert ports(generated) == ports(prebuilt) and len(ports(prebuilt)) > 20
    # asked again: the same file, not generated again
    mtime = os.path.getmtime(path)
    assert vn.netlist("standard", icache=8192, dcache=4096) == path
    assert os.path.getmtime(path) == mtime
    lint = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "--top-module", "VexRiscv", path],
                          capture_output=True, text=True, timeout=600)
    assert lint.returncode == 0, lint.stderr[-2000:]
