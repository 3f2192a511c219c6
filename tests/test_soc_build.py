"""litedav-soc generates a SoC with either NIC: LiteEth's SRAM MAC or the offload NIC.

Generation only (LiteX's own Verilog writer, headers): no Verilator compile, a few seconds each.
The offload NIC's headers must name the registers of docs/nic_registers.md and its interrupt."""
import os
import re
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generate_sim_soc(out, args, timeout=300):
    """`litedav-soc --platform sim ARGS` into `out` (generation only); fails the test on an error."""
    proc = subprocess.run([sys.executable, "-m", "litedav.soc.build", "--platform", "sim", *args,
                           "--output-dir", out], cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:]


def generate(nic, out):
    generate_sim_soc(out, ["--nic", nic])
    with open(os.path.join(out, "software", "include", "generated", "csr.h")) as f:
        csr = f.read()
    with open(os.path.join(out, "software", "include", "generated", "soc.h")) as f:
        soc = f.read()
    return csr, soc


def test_liteeth_soc(tmp_path):
    csr, soc = generate("liteeth", str(tmp_path))
    assert "CSR_ETHMAC_BASE" in csr and "CSR_NIC_BASE" not in csr
    assert "ETHMAC_INTERRUPT" in soc


def test_offload_soc(tmp_path):
    csr, soc = generate("offload", str(tmp_path))
    assert "CSR_NIC_BASE" in csr and "CSR_ETHMAC_BASE" not in csr
    assert "NIC_INTERRUPT" in soc and "LITEDAV_NIC_OFFLOAD" in soc
    with open(os.path.join(TOP, "docs", "nic_registers.md")) as f:
        documented = re.findall(r"^\| 0x([0-9a-f]+) \| `(nic_\w+)` \|", f.read(), re.M)
    base = int(re.search(r"#define CSR_NIC_BASE \(CSR_BASE \+ (0x[0-9a-f]+)L\)", csr).group(1), 16)
    for offset, name in documented:
        m = re.search(rf"#define CSR_{name.upper()}_ADDR \(CSR_BASE \+ (0x[0-9a-f]+)L\)", csr)
        assert m, f"{name} missing from csr.h"
        assert int(m.group(1), 16) - base == int(offset, 16), f"{name}: csr.h and docs/nic_registers.md disagree"


def test_arty_a7_vivado_project(tmp_path):
    """The MII board's Vivado project, BIOS included (its DDR3 BIOS once overflowed a 32 KiB ROM)."""
    proc = subprocess.run([sys.executable, "-m", "litedav.soc.build", "--platform", "arty_a7",
                           "--output-dir", str(tmp_path)], cwd=TOP, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    gateware = tmp_path / "gateware"
    assert (gateware / "arty_a7.tcl").is_file() and (gateware / "arty_a7.xdc").is_file()
    assert (tmp_path / "software" / "bios" / "bios.bin").is_file()


def test_colorlight_i5_main_ram_behind_litedav_l2(tmp_path):
    """The ECP5 board's SoC (generation only): its default sys_clk, main RAM in SDRAM behind
    gateware/l2_cache.py (registered tag compare), not LiteX's wishbone.Cache."""
    from litedav.platforms import colorlight_i5
    proc = subprocess.run([sys.executable, "-m", "litedav.soc.build", "--platform", "colorlight_i5",
                           "--output-dir", str(tmp_path)], cwd=TOP, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    soc = (tmp_path / "software" / "include" / "generated" / "soc.h").read_text()
    assert f"#define CONFIG_CLOCK_FREQUENCY {int(colorlight_i5.DEFAULT_SYS_CLK_FREQ)}" in soc
    assert "#define CONFIG_L2_SIZE 8192" in soc
    assert "#define LITEDAV_MAIN_RAM_SIZE 8388608" in soc
    assert "l2_cache (L2Cache)" in proc.stdout and "(Cache)" not in proc.stdout
    # The NIC's DMA masters through register slices, the board's default (NIC_SDRAM_PORTS).
    assert "nic_rx_slice (WishboneRegisterSlice)" in proc.stdout and "(SDRAMDMAPort)" not in proc.stdout


def test_colorlight_i5_nic_on_sdram_dma_ports(tmp_path):
    """`--nic-sdram-ports`: the offload NIC's masters on SDRAM DMA ports (gateware/sdram_dma.py),
    coherent with the L2 through its snoop ports; the slices stay for their other accesses."""
    proc = subprocess.run([sys.executable, "-m", "litedav.soc.build", "--platform", "colorlight_i5",
                           "--nic-sdram-ports", "--output-dir", str(tmp_path)], cwd=TOP,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "nic_rx_sdram (SDRAMDMAPort)" in proc.stdout and "nic_tx_sdram (SDRAMDMAPort)" in proc.stdout
    assert "nic_rx_slice (WishboneRegisterSlice)" in proc.stdout


def uncached_memories(out):
    import json
    with open(os.path.join(out, "csr.json")) as f:
        memories = json.load(f)["memories"]
    return {name: (m["base"], m["size"]) for name, m in memories.items() if m["type"].startswith("io")}


@pytest.mark.parametrize("platform,args", [
    ("sim", ["--nic", "liteeth", "--cpu-variant", "linux+no-dsp"]),
    ("sim", ["--nic", "liteeth"]),
    ("colorlight_i5", ["--cpu-variant", "linux+no-dsp"]),
])
def test_uncached_regions_are_uncached_for_the_cpu_variant(tmp_path, platform, args):
    """The flash windows and LiteEth's packet SRAM are mapped where the variant's netlist bypasses
    its data cache: VexRiscv linux* caches 0x80000000-0xAFFFFFFF, which LiteX calls IO."""
    from litedav.soc.litedav_soc import VEXRISCV_UNCACHED
    out = str(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "litedav.soc.build", "--platform", platform, *args,
                           "--output-dir", out], cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    variant = args[args.index("--cpu-variant") + 1] if "--cpu-variant" in args else "standard"
    ranges = VEXRISCV_UNCACHED["linux" if variant.startswith("linux") else "default"]
    io = uncached_memories(out)
    expected = {"sim": {"sim_flash", "ethmac", "csr"}, "colorlight_i5": {"spiflash", "csr"}}[platform]
    assert expected <= set(io), io
    for name, (base, size) in io.items():
        assert any(o <= base and base + size <= o + n for o, n in ranges), (name, hex(base), variant)


def test_uncached_region_the_cpu_caches_is_an_error(monkeypatch):
    """A region LiteX maps uncached where VexRiscv linux+no-dsp would cache it stops the build
    (0x90000000: the simulator's flash window before it moved, read through the data cache)."""
    from litedav.platforms import sim
    from litedav.soc.litedav_soc import LiteDAVSoC
    monkeypatch.setattr(sim, "SIM_FLASH_BASE", 0x90000000)
    with pytest.raises(ValueError, match="sim_flash at 0x90000000.*caches it"):
        LiteDAVSoC(sim.Platform(), sim.SimBoard(main_ram_size=16 << 20), sys_clk_freq=125e6,
                   cpu_variant="linux+no-dsp")
    LiteDAVSoC(sim.Platform(), sim.SimBoard(main_ram_size=16 << 20), sys_clk_freq=125e6, cpu_variant="standard")
