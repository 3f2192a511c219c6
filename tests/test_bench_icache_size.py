"""bench/icache_size.py derives the ideal SoC's VexRiscv with a larger instruction cache from the
installed VexRiscv.v: the derived Verilog passes Verilator's lint, its cache arrays have the
size asked for, and a VexRiscv.v it was not written for is refused rather than half-edited."""
import re
import subprocess

import pytest

from litedav.bench import icache_size


def test_derived_icache_lints(tmp_path):
    with open(icache_size.installed_vexriscv()) as f:
        original = f.read()
    derived = icache_size.widen_icache(original, 16384)
    assert "reg [31:0] banks_0 [0:4095];" in derived        # 16 KiB of 32-bit words
    assert "reg [21:0] ways_0_tags [0:511];" in derived      # 512 lines of 32 bytes
    assert re.search(r"io_cpu_prefetch_pc\[13 : 5\]", derived)
    # the data cache is not touched
    data_cache = lambda v: v[v.find("module DataCache ("):v.find("module InstructionCache (")]
    assert data_cache(derived) == data_cache(original)
    path = tmp_path / "VexRiscv.v"
    path.write_text(derived)
    lint = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "--top-module", "VexRiscv",
                           str(path)], capture_output=True, text=True, timeout=300)
    assert lint.returncode == 0, lint.stderr[-2000:]


def test_unexpected_verilog_is_refused():
    with open(icache_size.installed_vexriscv()) as f:
        original = f.read()
    assert icache_size.widen_icache(original, 4096) == original
    with pytest.raises(icache_size.ExperimentError, match="another VexRiscv version"):
        icache_size.widen_icache(original.replace("reg [31:0] banks_0 [0:1023];",
                                                  "reg [31:0] banks_0 [0:2047];"), 32768)
    with pytest.raises(icache_size.ExperimentError, match="power of two"):
        icache_size.widen_icache(original, 12288)
