"""The board model: the Colorlight i5's SoC as its bitstream builds it, in the simulator
(`litedav-sim --board colorlight_i5`, platforms/sim.py ColorlightI5Model, docs/board_model.md),
built in build/sim-colorlight_i5-offload (LITEDAV_BOARD_MODEL_BUILD: another folder).

  1. It is the board's SoC: the firmware reports the board's sys_clk (75 MHz) and main RAM (8 MiB
     of SDRAM through LiteDRAM, the 8 KiB L2 in front), the store on the store flash's chip model
     (32 MiB), the offload NIC's driver.
  2. /bulk (nic_compare's bulk GET and PUT) has its 1 MiB buffer in the 8 MiB: 64 KiB go in and
     come back byte for byte.
  3. python caldav's calendar round trip (the same flow as on the ideal SoC, tests/caldav_suite.py)
     completes against it over MII, the PHY rate its 75 MHz carries.
"""
import base64
import os
import re

import pytest

from caldav_checks import app_limits
from caldav_suite import test_caldav_client_flow  # noqa: F401  (run against this target)
from http_checks import Target, status
from sim_boot import booted

BOARD = "colorlight_i5"
BOARD_SYS_CLK_HZ = 75_000_000   # platforms/colorlight_i5.py DEFAULT_SYS_CLK_FREQ
BOARD_MAIN_RAM = 8 * 1024 * 1024  # M12L64322A: 8 MiB
TIMEOUT = 300  # wall seconds per exchange: the board model simulates slower than the ideal SoC


@pytest.fixture(scope="module")
def board_model():
    from litedav.sim.run import build, default_build_dir
    folder = os.environ.get("LITEDAV_BOARD_MODEL_BUILD") or default_build_dir("offload", board=BOARD)
    build_dir = build(folder, nic="offload", board=BOARD)
    yield from booted(build_dir, "board model", timeout=600, fresh_flash=True, phy="mii")


@pytest.fixture(scope="module")
def target(board_model):
    return Target(port=board_model.port, cycles_hz=BOARD_SYS_CLK_HZ, timeout=TIMEOUT, quick=True,
                  **app_limits())


def test_it_is_the_boards_soc(board_model, target):
    console = "\n".join(board_model.console)
    assert f", {BOARD_SYS_CLK_HZ} Hz)" in console, console  # the firmware's banner
    # the store on the board's store flash (the Pmod's MT25QL256: platforms/store_flash.py)
    assert re.search(r"flash: .*mt25ql256.*JEDEC ID 20ba19.*store at 0x000000, 32768 KiB", console), console
    generated = os.path.join(board_model.build_dir, "software", "include", "generated")
    with open(os.path.join(generated, "mem.h")) as f:
        mem = f.read()
    assert re.search(r"#define MAIN_RAM_SIZE 0x0*%x\b" % BOARD_MAIN_RAM, mem), mem
    with open(os.path.join(generated, "soc.h")) as f:
        soc = f.read()
    assert re.search(r"#define CONFIG_L2_SIZE 8192\b", soc), soc
    assert re.search(r'#define CONFIG_CPU_HUMAN_NAME "VexRiscv_LinuxNoDsp', soc), soc  # linux+no-dsp
    with open(os.path.join(generated, "csr.h")) as f:
        assert "CSR_NIC_BASE" in f.read()  # the offload NIC, whose driver the firmware then has
    assert status(target)["sys_clk_hz"] == BOARD_SYS_CLK_HZ


def test_bulk_round_trip(target):
    body = bytes((i * 13 + 5) & 0xFF for i in range(64 * 1024))
    auth = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}  # firmware/users.conf
    conn = target.connection()
    conn.request("PUT", "/bulk", body, {**auth, "Content-Type": "application/octet-stream"})
    resp = conn.getresponse()
    assert resp.status == 204, (resp.status, resp.read()[:200])  # 404: no room for the buffer
    resp.read()
    conn.request("GET", "/bulk")
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read() == body
    conn.close()
