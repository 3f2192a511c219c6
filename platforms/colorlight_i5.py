#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The `colorlight_i5` platform: Colorlight i5 v7.0 module (on its extension board).

Board
- FPGA: Lattice ECP5 LFE5U-25F-6BG381C (24k LUT4, 56 DP16KD block RAMs, speed grade 6).
- Pins and IO standards come from litex-boards' platform module (pinned in requirements.txt),
  imported, not copied: `litex_boards.platforms.colorlight_i5`, board "i5", revision "7.0".
- Clock: 25 MHz oscillator on P3 (`clk25`). One ECP5 PLL makes sys_clk (default 75 MHz) and the
  same frequency shifted by 180 degrees for the SDRAM clock pin (B9, driven through an ODDR).
- Reset: `cpu_reset_n` (K18, pulled up) resets the PLL and with it the whole SoC.
- UART: J17 (tx) / H18 (rx), 115200 baud, the console (the extension board's CMSIS-DAP probe
  also offers it as a USB serial port).
- SDRAM: 8 MiB, 32 bits (M12L64322A / EM638325 class) at sys_clk, 1:1, LiteDRAM GENSDRPHY:
  main RAM at 0x40000000 (firmware, lwIP heap, the offload NIC's rings and buffers), behind an
  8 KiB L2 cache (gateware/l2_cache.py, soc/main_ram.py); the offload NIC's DMA masters reach it
  through register slices (soc/bus_slice.py) and the L2 (NIC_SDRAM_PORTS below).
- SPI flash: 2 MiB GD25Q16 (R2 cs_n, W2 mosi, V2 miso; its clock is the ECP5's configuration
  clock, reached through the USRMCLK primitive), read at 1x; see FLASH_* below for its layout.
- Store flash: a Digilent Pmod SF3 (32 MiB MT25QL256) on the extension board's Pmod P3
  (litex-boards' `pmode`): CS# C17, MOSI B18, MISO B20, SCK F20, W# A18 and HOLD# A19 held high;
  the whole chip is the calendar store (platforms/store_flash.py). Without it the store stays in
  the GD25Q16's last 512 KiB.
- Ethernet: two Gigabit PHYs with RGMII; LiteDAV uses PHY 0: RX clock H2,
  RX_CTL P2, RXD K2 L1 N1 P1; TX clock G1, TX_CTL K1, TXD G2 H1 J1 J3; MDC N5, MDIO P5, reset_n P4
  (shared by both PHYs). RX and TX run at 125 MHz from the PHY's RX clock (LiteEth
  LiteEthPHYRGMII: DDR inputs with a 2 ns input delay, TX clock forwarded without delay: the PHY
  adds the TX skew). At 1 Gbit/s the wire moves one byte per 125 MHz cycle; the offload NIC's MAC
  datapath runs in sys_clk at 32 bits (LiteEth `with_sys_datapath`), so only the PHY, the 8<->32
  bit converters and the clock-domain FIFOs run at 125 MHz.

Boot
- The LiteX BIOS sits in on-chip ROM (block RAM); after the SDRAM is up it copies the firmware
  image (length + CRC32 header, LiteX's flash boot image) from flash offset FLASH_FIRMWARE_OFFSET
  into main RAM and jumps to it: the board boots into the CalDAV server without a host.

Flash layout (2 MiB)
    0x000000  bitstream (ECP5 loads it at power-up)
    0x100000  firmware boot image (FLASH_FIRMWARE_OFFSET, up to 512 KiB)
    0x180000  calendar store (FLASH_STORE_OFFSET, 512 KiB: 128 sectors of 4 KiB; the firmware's
              LiteSPI driver, docs/spi_flash.md; `litedav-soc --erase-store` empties it)

Loading (openFPGALoader, Debian package `openfpgaloader`)
- The extension board's USB port is a CMSIS-DAP (DAPLink) JTAG probe: openFPGALoader's board
  name `colorlight-i5`, cable `cmsisdap`.
"""

from migen import ClockDomain, ClockSignal, Signal

from litex.gen import LiteXModule
from litex.build.io import DDROutput
from litex.soc.cores.clock import ECP5PLL

from litex_boards.platforms import colorlight_i5 as board

from litedav.soc.main_ram import add_sdram_main_ram

from . import boot_flash, store_flash

NAME = "colorlight_i5"

# Clocks and CPU: VexRiscv linux+no-dsp at 75 MHz, Yosys flow3, nextpnr seed 3. linux+no-dsp
# (relaxed PC calculation, no branch prediction, iterative multiplier, plus an MMU) has a shorter
# pipeline stall chain than `standard`, whose own stall chain keeps it below 75 MHz; LiteX's ABC9
# flow3 script maps the SoC into fewer LUTs than the default flow, enough for 40% of them free;
# seed 3 is the placement `make bitstreams` measures, seeds 1 and 2 meet 75 MHz too (Yosys and nextpnr are deterministic for the
# same sources and tool versions, so it repeats). What limits each clock and the measurements
# behind these choices: docs/colorlight_i5.md; the current build: bench/results/fpga-colorlight_i5.md.
DEFAULT_SYS_CLK_FREQ = 75e6
L2_CACHE_SIZE        = 8192
CPU_VARIANT          = "linux+no-dsp"
YOSYS_FLOW           = "flow3"   # litedav-soc --yosys-flow: default or flow3.
NEXTPNR_SEED         = 3         # litedav-soc --seed.
ETH_CLK_FREQ         = 125e6   # RGMII at 1 Gbit/s.
# The offload NIC's DMA masters on SDRAM DMA ports (gateware/sdram_dma.py: 3 bytes per cycle per
# master in cocotb_tests/test_memory_path.py, where the register slices and the L2 give 0.17) is
# not the board's yet: with them the build misses 75 MHz (below 60) and leaves 31% of the LUTs
# free, short of 35% (docs/colorlight_i5.md). `litedav-soc --nic-sdram-ports` builds it.
NIC_SDRAM_PORTS      = False

# SPI flash layout.
FLASH_SIZE            = 2 * 1024 * 1024
FLASH_FIRMWARE_OFFSET = 0x100000
FLASH_FIRMWARE_MAX    = 0x080000
FLASH_STORE_OFFSET    = 0x180000
FLASH_STORE_SIZE      = 0x080000

# The store flash's Pmod header (litex-boards' connector name): P3.
STORE_FLASH_PMOD = "pmode"

# openFPGALoader.
LOADER_BOARD = "colorlight-i5"
LOADER_CABLE = "cmsisdap"
LOADER_NOTE = ("the extension board's USB port (a CMSIS-DAP / DAPLink probe, USB ID 0d28:0204) "
               "connected to this machine")

# Toolchain: the binaries LiteX calls (soc/toolchain.py puts wrappers for them on PATH).
TOOLS = ("yosys", "nextpnr-ecp5", "ecppack")
BITSTREAM_EXT = ".bit"


class Platform(board.Platform):
    name = NAME

    def __init__(self):
        board.Platform.__init__(self, board="i5", revision="7.0", toolchain="trellis")


class CRG(LiteXModule):
    """sys (and sys_ps for the SDRAM clock pin) from the 25 MHz oscillator through one PLL."""
    def __init__(self, platform, sys_clk_freq):
        self.rst       = Signal()
        self.cd_sys    = ClockDomain()
        self.cd_sys_ps = ClockDomain()

        # # #

        clk25   = platform.request("clk25")
        reset_n = platform.request("cpu_reset_n")
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(~reset_n | self.rst)
        pll.register_clkin(clk25, 25e6)
        pll.create_clkout(self.cd_sys,    sys_clk_freq)
        # SDRAM clock: sys_clk inverted, so that the chip samples in the middle of the data eye.
        pll.create_clkout(self.cd_sys_ps, sys_clk_freq, phase=180)
        self.specials += DDROutput(1, 0, platform.request("sdram_clock"), ClockSignal("sys_ps"))


soc_kwargs = boot_flash.soc_kwargs


def add_board(soc, sys_clk_freq):
    """CRG, SDRAM, SPI flash, store flash and the RGMII PHY; returns the Ethernet PHY."""
    from litedram.modules import M12L64322A
    from litedram.phy import GENSDRPHY
    from litespi.modules import GD25Q16
    from litespi.opcodes import SpiNorFlashOpCodes
    from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

    platform = soc.platform
    soc.crg = CRG(platform, sys_clk_freq)

    soc.sdrphy = GENSDRPHY(platform.request("sdram"))
    add_sdram_main_ram(soc, soc.sdrphy, M12L64322A(sys_clk_freq, "1:1"), L2_CACHE_SIZE)

    soc.add_spi_flash(mode="1x", module=GD25Q16(SpiNorFlashOpCodes.READ_1_1_1))
    boot_flash.add_flash_layout(soc, FLASH_FIRMWARE_OFFSET, FLASH_STORE_OFFSET, FLASH_STORE_SIZE)
    store_flash.add_store_flash(soc, STORE_FLASH_PMOD)

    ethphy = LiteEthPHYRGMII(
        clock_pads = platform.request("eth_clocks", 0),
        pads       = platform.request("eth", 0),
        tx_delay   = 0)
    # Clock constraints: litex-boards' platform constrains clk25 (25 MHz) and both PHYs' RX clock
    # pins (125 MHz) when they are requested; nextpnr derives the PLL outputs from clk25.
    return ethphy
