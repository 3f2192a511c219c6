#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The `arty_a7` platform: Digilent Arty A7-35T, 100 Mbit/s MII, the link of the LM3S9B95.

Only the Vivado project can be produced here: Xilinx 7-series bitstreams need AMD's Vivado, which
is not a registry package. `litedav-soc --platform arty_a7` writes the project (Verilog, XDC
constraints and the Tcl script `arty_a7.tcl` in build/arty_a7/gateware/); on a machine with
Vivado on PATH, `--build` runs it and `--load`/`--flash` use openFPGALoader.

Board
- FPGA: Xilinx Artix-7 XC7A35TICSG324-1L.
- Pins and IO standards: litex-boards' platform module (pinned in requirements.txt), imported,
  not copied: `litex_boards.platforms.digilent_arty`, variant "a7-35".
- Clock: 100 MHz oscillator on E3 (`clk100`, constrained by the platform module). One 7-series
  PLL makes sys_clk (100 MHz), 4x sys_clk and its 90-degree copy for the DDR3 PHY, 200 MHz for
  the IDELAY reference, and the PHY's 25 MHz reference clock (output on G18, `eth_ref_clk`).
- Reset: `cpu_reset` (C2, active low) resets the PLL.
- UART: D10 (tx) / A9 (rx) through the FT2232's second channel, 115200 baud.
- DDR3: 256 MiB MT41K128M16 (16 bits), LiteDRAM A7DDRPHY at 1:4: main RAM at 0x40000000.
- SPI flash: 16 MiB S25FL128L (L13 cs_n, L16 clk, K17 mosi, K18 miso), read at 1x; layout below.
- Ethernet: TI DP83848J PHY with MII (25 MHz RX/TX clocks from the PHY on F15/H16, RXD D18 E17
  E18 G17, RX_DV G16, RX_ER C17, TXD H14 J14 J13 H17, TX_EN H15, MDC F16, MDIO K13, reset_n C16):
  100 Mbit/s, the same wire rate as the LM3S9B95's MAC. LiteEth LiteEthPHYMII; the offload NIC's
  MAC datapath runs in sys_clk.

Boot: the LiteX BIOS in ROM copies the firmware boot image from flash offset
FLASH_FIRMWARE_OFFSET into DDR3 and jumps to it.

Flash layout (16 MiB)
    0x000000  bitstream
    0x400000  firmware boot image (FLASH_FIRMWARE_OFFSET, up to 1 MiB)
    0x800000  calendar store (FLASH_STORE_OFFSET, 1 MiB: 256 sectors of 4 KiB; the firmware's
              LiteSPI driver, docs/spi_flash.md; `litedav-soc --erase-store` empties it)

Loading: the FT2232 on the board's USB port, openFPGALoader cable `digilent`.
"""

from migen import ClockDomain, Signal

from litex.gen import LiteXModule
from litex.soc.cores.clock import S7PLL, S7IDELAYCTRL

from litex_boards.platforms import digilent_arty as board

from . import boot_flash

NAME = "arty_a7"

DEFAULT_SYS_CLK_FREQ = 100e6
CPU_VARIANT          = "standard"

FLASH_SIZE            = 16 * 1024 * 1024
FLASH_FIRMWARE_OFFSET = 0x400000
FLASH_FIRMWARE_MAX    = 0x100000
FLASH_STORE_OFFSET    = 0x800000
FLASH_STORE_SIZE      = 0x100000

LOADER_BOARD = "arty"
LOADER_CABLE = "digilent"
LOADER_NOTE = "the Arty's USB port (FT2232, USB ID 0403:6010) connected to this machine"

# Vivado is not on PyPI: --build needs it on PATH (VENDOR_TOOL); nothing to wrap.
TOOLS = ()
VENDOR_TOOL = "vivado"
BITSTREAM_EXT = ".bit"


class Platform(board.Platform):
    name = NAME

    def __init__(self):
        board.Platform.__init__(self, variant="a7-35", toolchain="vivado")


class CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq):
        self.rst          = Signal()
        self.cd_sys       = ClockDomain()
        self.cd_sys4x     = ClockDomain()
        self.cd_sys4x_dqs = ClockDomain()
        self.cd_idelay    = ClockDomain()
        self.cd_eth       = ClockDomain()

        # # #

        self.pll = pll = S7PLL(speedgrade=-1)
        self.comb += pll.reset.eq(~platform.request("cpu_reset") | self.rst)
        pll.register_clkin(platform.request("clk100"), 100e6)
        pll.create_clkout(self.cd_sys,       sys_clk_freq)
        pll.create_clkout(self.cd_sys4x,     4*sys_clk_freq)
        pll.create_clkout(self.cd_sys4x_dqs, 4*sys_clk_freq, phase=90)
        pll.create_clkout(self.cd_idelay,    200e6)
        pll.create_clkout(self.cd_eth,       25e6)
        self.comb += platform.request("eth_ref_clk").eq(self.cd_eth.clk)
        self.idelayctrl = S7IDELAYCTRL(self.cd_idelay)


def soc_kwargs():
    # The DDR3 BIOS (read/write leveling) overflows 32 KiB by a few bytes; the A7-35T has
    # 225 KiB of block RAM, so 64 KiB costs nothing that matters.
    return boot_flash.soc_kwargs(rom_size=0x10000)


def add_board(soc, sys_clk_freq):
    """CRG, DDR3, SPI flash and the MII PHY; returns the Ethernet PHY."""
    from litedram.modules import MT41K128M16
    from litedram.phy import s7ddrphy
    from litespi.modules import S25FL128L
    from litespi.opcodes import SpiNorFlashOpCodes
    from liteeth.phy.mii import LiteEthPHYMII

    platform = soc.platform
    soc.crg = CRG(platform, sys_clk_freq)

    soc.ddrphy = s7ddrphy.A7DDRPHY(platform.request("ddram"), memtype="DDR3", nphases=4,
                                   sys_clk_freq=sys_clk_freq)
    soc.add_sdram("sdram", phy=soc.ddrphy, module=MT41K128M16(sys_clk_freq, "1:4"),
                  l2_cache_size=8192)

    soc.add_spi_flash(mode="1x", module=S25FL128L(SpiNorFlashOpCodes.READ_1_1_1))
    boot_flash.add_flash_layout(soc, FLASH_FIRMWARE_OFFSET, FLASH_STORE_OFFSET, FLASH_STORE_SIZE)

    ethphy = LiteEthPHYMII(clock_pads=platform.request("eth_clocks"), pads=platform.request("eth"))
    # The PHY's 25 MHz MII clocks.
    platform.add_period_constraint(ethphy.crg.cd_eth_rx.clk, 1e9/25e6)
    platform.add_period_constraint(ethphy.crg.cd_eth_tx.clk, 1e9/25e6)
    platform.add_false_path_constraints(soc.crg.cd_sys.clk, ethphy.crg.cd_eth_rx.clk,
                                        ethphy.crg.cd_eth_tx.clk)
    return ethphy
