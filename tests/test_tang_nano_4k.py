"""Tang Nano 4K (Gowin EMCU) and the DesignStart soft cores, the fast checks (the bitstream itself
is `make bitstreams BOARDS=tang_nano_4k`).

- The EMCU SoC generates: the EMCU hard macro, LiteEth's MAC behind the RMII PHY, and an SDC file
  that constrains every clock (27 MHz oscillator, sys_clk from the PLL, the RMII module's 50 MHz).
- The EMCU firmware port builds against those headers and fits the EMCU's 32 KiB flash / 8 KiB SRAM.
- --load without the board names the cable; --cpu cortex_m3 without Arm's RTL names the files.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

from litedav.platforms import tang_nano_4k
from litedav.soc import designstart

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def litedav_soc(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "litedav.soc.build", *args], cwd=TOP,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def soc_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("tang_nano_4k")
    proc = litedav_soc("--platform", "tang_nano_4k", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:]
    return out


def test_soc_generates_emcu_rmii_and_clock_constraints(soc_dir):
    verilog = (soc_dir / "gateware" / "tang_nano_4k.v").read_text()
    assert re.search(r"^EMCU\s", verilog, re.M), "no EMCU hard macro instance"
    assert "FLASH256K" in verilog
    for pin in ("eth_clocks0_ref_clk", "eth0_crs_dv", "eth0_rx_data", "eth0_tx_en", "eth0_tx_data"):
        assert pin in verilog, pin
    sdc = (soc_dir / "gateware" / "tang_nano_4k.sdc").read_text().splitlines()
    periods = dict(re.match(r"create_clock -period ([\d.]+) -name (\S+)", line).group(2, 1) for line in sdc)
    assert periods == {"clk27": "37.037", "sys_clk": "18.518", "eth_clocks0_ref_clk": "20.000"}, sdc
    script = (soc_dir / "gateware" / "build_tang_nano_4k.sh").read_text()
    assert "--sdc tang_nano_4k.sdc" in script   # (--build adds no --timing-allow-fail: timingstrict)
    mem = (soc_dir / "software" / "include" / "generated" / "mem.h").read_text()
    assert re.search(r"#define ETHMAC_BASE 0xa0100000L", mem), mem
    assert re.search(r"#define ROM_SIZE 0x00008000", mem) and re.search(r"#define SRAM_SIZE 0x00002000", mem)


def test_sdc_refuses_a_design_without_clocks():
    class Toolchain:
        clocks = {}
        _build_name = "x"
    with pytest.raises(ValueError, match="no clock constraint"):
        tang_nano_4k.write_sdc(Toolchain(), None)


@pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc"), reason="arm-none-eabi-gcc missing (make deps)")
def test_emcu_firmware_builds_and_fits(soc_dir, tmp_path):
    if not os.path.isfile(os.path.join(TOP, "build", "lwip", "src", "core", "tcp.c")):
        pytest.fail("lwIP sources missing in build/lwip: run `make deps`")
    proc = subprocess.run(["make", "-C", os.path.join(TOP, "firmware", "ports", "gowin_emcu"), "-j2",
                           f"SOC_BUILD={soc_dir}", f"OUT={tmp_path}"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    flash = re.search(r"\[gowin_emcu\] flash:\s+(\d+) of\s+32768", proc.stdout)
    sram = re.search(r"\[gowin_emcu\] SRAM :\s+(\d+) of\s+8192", proc.stdout)
    assert flash and sram, proc.stdout[-2000:]
    assert os.path.getsize(tmp_path / "litedav-emcu.bin") == int(flash.group(1))
    # The shared Cortex-M3 code and the LiteX MAC driver are what the image runs on.
    nm = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "litedav-emcu.elf")],
                        capture_output=True, text=True, check=True).stdout
    for symbol in ("Reset_Handler", "core_vectors", "emcu_irq_vectors", "cortex_m_systick_init",
                   "liteeth_netif_poll"):
        assert re.search(rf" {symbol}$", nm, re.M), symbol


@pytest.mark.skipif(shutil.which("openFPGALoader") is None, reason="openFPGALoader not installed (make deps)")
def test_load_without_board_names_the_cable():
    proc = litedav_soc("--platform", "tang_nano_4k", "--load", timeout=120)
    assert proc.returncode != 0
    assert "no board found on cable `ft2232`" in proc.stdout, proc.stdout


def test_designstart_missing_names_the_files(tmp_path):
    proc = litedav_soc("--platform", "arty_a7", "--cpu", "cortex_m3", "--designstart-dir", str(tmp_path),
                       timeout=120)
    assert proc.returncode != 0
    assert ("Cortex-M3 DesignStart FPGA-Xilinx edition" in proc.stdout and
            "AT426-BU-98000-r0p1-00rel0/vivado/Arm_ipi_repository/CM3DbgAXI/rtl" in proc.stdout and
            str(tmp_path) in proc.stdout), proc.stdout
    with pytest.raises(SystemExit, match="CM1DbgAXI/logical/rtl"):
        designstart.check("cortex_m1", str(tmp_path))


def test_designstart_found_when_the_rtl_is_there(tmp_path):
    rtl = tmp_path / "AT426-BU-98000-r0p1-00rel0" / "vivado" / "Arm_ipi_repository" / "CM3DbgAXI" / "rtl"
    rtl.mkdir(parents=True)
    (rtl / "README.txt").write_text("not RTL")
    with pytest.raises(SystemExit):
        designstart.check("cortex_m3", str(tmp_path))
    (rtl / "cortexm3.v").write_text("module CortexM3DbgAXI(); endmodule\n")
    assert designstart.check("cortex_m3", str(tmp_path)) == str(tmp_path)
