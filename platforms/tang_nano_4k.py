#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The `tang_nano_4k` platform: Sipeed Tang Nano 4K, the Gowin GW1NSR-4C's hard Cortex-M3 (EMCU)
with a 100 Mbit/s RMII PHY module on the header pins.

Board
- FPGA: Gowin GW1NSR-LV4CQN48PC6/I5 (GW1NS-4 fabric: 4,608 LUT4, 3,456 FF, 10 BSRAM of 18 Kbit,
  no distributed RAM, 2 PLLs) with the EMCU hard macro: an Arm Cortex-M3, 32 KiB of on-chip
  user flash (its code, at 0x00000000) and the SRAM LiteX builds for it from 4 BSRAMs (8 KiB at
  0x20000000). The EMCU reaches the fabric through its AHB expansion port (TARGEXP0), which LiteX
  bridges to the SoC's wishbone bus: CSRs at 0xa0000000, the Ethernet MAC's buffers at 0xa0100000.
- Pins and IO standards come from litex-boards' platform module (pinned in requirements.txt),
  imported, not copied: `litex_boards.platforms.sipeed_tang_nano_4k`; the RMII pins below are
  added to it.
- Clock: 27 MHz oscillator on pin 45 (`clk27`). One GW1N PLL makes sys_clk (DEFAULT_SYS_CLK_FREQ),
  which clocks the EMCU (FCLK), its SRAM, the bus and the MAC's system side.
- Reset: user button 0 (pin 14, active low) resets the PLL.
- UART: LiteX's UART on pins 44 (rx) / 46 (tx), the board's camera I2C pins (litex-boards'
  `serial`), 115200 baud, 3.3 V: a USB-serial adapter there is the console (the EMCU's own UARTs
  are not wired out by LiteX's `gowin_emcu`).
- Ethernet: the board has none. A common LAN8720A RMII module ("LAN8720 ETH board": LAN8720A PHY,
  RJ45 with magnetics, its own 50 MHz oscillator driving the PHY's REF_CLK and the module's
  nINT/REFCLK pin) wired to header P7 (pin numbers are the FPGA's QN48 pins):

      module pin     FPGA pin  header      direction
      nINT/REFCLK    40        P7          50 MHz in (eth_rx / eth_tx clock)
      CRS_DV         39        P7          in
      RX0 / RX1      41 / 42   P7          in
      TX_EN          43        P7          out
      TX0 / TX1      3 / 4     P7          out
      MDC / MDIO     6 / 7     P7          out / inout
      VCC / GND      3V3 / GND P7

  LiteEth's LiteEthPHYRMII (liteeth.phy.rmii) with `refclk_cd=None`: the module's 50 MHz clock
  is the PHY clock (eth_rx and eth_tx domains), constrained to 50 MHz; 100 Mbit/s (10 Mbit/s by
  its speed register). The module's nRST is tied to its own power-on reset (no FPGA pin).

What fits (measured, bench/results/fpga-tang_nano_4k.md): the EMCU SoC with LiteEth's MAC (1 RX
and 1 TX buffer slot of 2 KiB in BSRAM, the CPU copies frames; `--nic liteeth`) and no LiteX timer. The offload NIC
(descriptor-ring DMA, checksum offload, TSO) does not: it alone synthesizes to about as many LUT4
as the whole device has (docs/tang_nano_4k.md has the figures per core).

Loading (openFPGALoader, Debian package `openfpgaloader`)
- The board's USB-C port is a BL702 that presents itself as an FTDI FT2232 USB-JTAG probe
  (USB ID 0403:6010): openFPGALoader's board `tangnano4k`, cable `ft2232`. The bitstream (.fs)
  goes to SRAM (--load) or to the GW1NSR's configuration flash (--flash); the EMCU firmware is a
  separate image for the EMCU's user flash, which openFPGALoader writes with `--mcufw FW.bin`
  (`--flash --firmware FW.bin`; it erases the whole user flash first).
"""

from migen import ClockDomain, Signal

from litex.build.generic_platform import Pins, Subsignal, IOStandard
from litex.gen import LiteXModule
from litex.soc.cores.clock.gowin_gw1n import GW1NPLL
from litex.soc.integration.soc import SoCRegion

from litex_boards.platforms import sipeed_tang_nano_4k as board

NAME = "tang_nano_4k"

CPU_TYPE             = "gowin_emcu"
CPU_VARIANT          = "standard"
DEFAULT_NIC          = "liteeth"
DEFAULT_SYS_CLK_FREQ = 54e6    # 2 x 27 MHz; the EMCU's FCLK may go up to 80 MHz.
ETH_CLK_FREQ         = 50e6    # RMII reference clock.

# The EMCU's memories (hard macro side, not on the wishbone bus).
EMCU_FLASH_SIZE = 32 * 1024   # FLASH256K: the firmware, written by openFPGALoader --mcufw.
EMCU_SRAM_SIZE  = 8 * 1024    # 4 x SDPB (2048 x 8 bits each) as LiteX's gowin_emcu builds it.

# LiteEth MAC buffers: one BSRAM (2 KiB) per slot, at ETHMAC_BASE: the EMCU's own peripherals
# (timers, UARTs, GPIO) sit at 0x40000000, so the buffers go 1 MiB above the CSRs (0xa0000000,
# LiteX's window for the EMCU's AHB expansion port TARGEXP0), in the same 256 MiB. The MAC's datapath (preamble, CRC at 8 bits) runs
# in the RMII clock; its clock-domain FIFOs to sys_clk carry 32-bit words, ETH_CDC_DEPTH entries
# each, small enough for flip-flops (LiteEth's default, 32 entries, takes 2 BSRAMs each; LiteEth's
# sys-clock datapath computes the CRC 32 bits at a time and doubles the SoC's logic).
ETHMAC_BASE   = 0xa0100000
ETH_CDC_DEPTH = 4
ETH_RX_SLOTS = 1
ETH_TX_SLOTS = 1

# openFPGALoader.
LOADER_BOARD = "tangnano4k"
LOADER_CABLE = "ft2232"
LOADER_NOTE = ("the Tang Nano 4K's USB-C port (its BL702 USB-JTAG probe, seen as an FT2232, USB ID "
               "0403:6010) connected to this machine")
# The bitstream and the EMCU firmware go to the GW1NSR's internal flash (no offset, no boot image).
FLASH_ARGS = ("-f",)
FIRMWARE_LOADER_ARG = "--mcufw"
EMCU_FIRMWARE_MAX = EMCU_FLASH_SIZE

# bench/fpga_report.py: nextpnr-himbaechel's cell names, the RMII clock, and the board's own figures
# (what of the offload NIC fits, the EMCU firmware's size) from bench/gowin_fit.py.
REPORT_RESOURCES = {"LUT4": "LUT4", "ALU": "ALU (carry, in LUT4 slots)", "DFF": "FF", "BSRAM": "BSRAM",
                    "MULT18X18": "DSP (MULT18X18)"}
REPORT_ETH_ROLE = "RMII reference (eth_rx, eth_tx)"
REPORT_ETH_NETS = ("eth", "sdrio_clk")   # Yosys names the buffered RMII clock after LiteX's SDR IO alias.
REPORT_EXTRAS = "litedav.bench.gowin_fit"

# Toolchain: the binaries LiteX calls (soc/toolchain.py puts wrappers for them on PATH).
TOOLS = ("yosys", "nextpnr-himbaechel", "gowin_pack")
BITSTREAM_EXT = ".fs"

_rmii_io = [
    ("eth_clocks", 0, Subsignal("ref_clk", Pins("40")), IOStandard("LVCMOS33")),
    ("eth", 0,
        Subsignal("crs_dv",  Pins("39")),
        Subsignal("rx_data", Pins("41 42")),
        Subsignal("tx_en",   Pins("43")),
        Subsignal("tx_data", Pins("3 4")),
        Subsignal("mdc",     Pins("6")),
        Subsignal("mdio",    Pins("7")),
        IOStandard("LVCMOS33"),
    ),
]


class Platform(board.Platform):
    """litex-boards' Tang Nano 4K with the RMII module's pins, built by the open Apicula flow
    (Yosys synth_gowin, nextpnr-himbaechel, gowin_pack). LiteX writes no clock constraints for
    that flow; here every add_period_constraint() becomes an SDC `create_clock` that nextpnr
    reads (--sdc), so every clock is checked against its real frequency."""
    name = NAME

    def __init__(self):
        board.Platform.__init__(self, toolchain="apicula")
        self.add_extension(_rmii_io)
        toolchain = self.toolchain
        toolchain._pnr_opts += f" --sdc {NAME}.sdc"
        # Placement is the limit on this device: nextpnr's placers do not place the SoC with
        # LiteX's timer, at 74-77% of the LUT4 slots (docs/tang_nano_4k.md, What fits); hence the
        # smaller SoC below.
        toolchain.build_timing_constraints = lambda vns: write_sdc(toolchain, vns)
        # nextpnr-himbaechel does not carry the RMII pad's constraint through its input buffer:
        # the buffered net (Yosys names it after one of its aliases, `sdrio_clk`) gets nextpnr's
        # 12 MHz default. --freq makes the default the RMII clock's 50 MHz, the only clock here
        # without a constraint of its own.
        toolchain._pnr_opts += f" --freq {ETH_CLK_FREQ / 1e6:g}"


def sdc_lines(clocks, name_of):
    """`create_clock` lines for {signal: [period_ns, name]} (LiteX's toolchain.clocks)."""
    lines = []
    for clk, (period, _) in sorted(clocks.items(), key=lambda item: name_of(item[0])):
        lines.append(f"create_clock -period {period:.3f} -name {name_of(clk)} [get_nets {{{name_of(clk)}}}]")
    return lines


def write_sdc(toolchain, vns):
    if not toolchain.clocks:
        raise ValueError(f"{NAME}: no clock constraint: timing would go unchecked")
    path = f"{toolchain._build_name}.sdc"
    with open(path, "w") as f:
        f.write("\n".join(sdc_lines(toolchain.clocks, vns.get_name)) + "\n")
    return (path, "SDC")


class CRG(LiteXModule):
    """sys from the 27 MHz oscillator through one GW1N PLL."""
    def __init__(self, platform, sys_clk_freq):
        self.rst    = Signal()
        self.cd_sys = ClockDomain()

        # # #

        clk27 = platform.request("clk27")
        rst_n = platform.request("user_btn", 0)
        self.pll = pll = GW1NPLL(devicename=platform.devicename, device=platform.device)
        self.comb += pll.reset.eq(~rst_n | self.rst)
        pll.register_clkin(clk27, 27e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        platform.add_period_constraint(self.cd_sys.clk, 1e9 / sys_clk_freq)


def soc_kwargs():
    """SoCCore arguments: the EMCU brings its own flash and SRAM, so no LiteX ROM/SRAM; UART FIFOs
    of one entry (the GW1NS-4 has no distributed RAM: a deeper FIFO would take a BSRAM each)."""
    return dict(
        integrated_rom_size      = 0,
        integrated_sram_size     = 0,
        integrated_main_ram_size = 0,
        uart_name                = "serial",
        uart_baudrate            = 115200,
        uart_fifo_depth          = 1,
        # The firmware keeps time with the Cortex-M3's SysTick: LiteX's timer (32-bit timer, 64-bit
        # uptime counter, their CSRs) is logic the placer could not fit.
        with_timer               = False,
    )


def add_board(soc, sys_clk_freq):
    """CRG, the EMCU's memory regions (for the firmware's linker script) and the RMII PHY;
    returns the Ethernet PHY."""
    from liteeth.phy.rmii import LiteEthPHYRMII

    platform = soc.platform
    soc.crg = CRG(platform, sys_clk_freq)
    soc.bus.add_region("rom",  SoCRegion(origin=soc.cpu.mem_map["rom"],  size=EMCU_FLASH_SIZE, linker=True))
    soc.bus.add_region("sram", SoCRegion(origin=soc.cpu.mem_map["sram"], size=EMCU_SRAM_SIZE,  linker=True))

    clock_pads = platform.request("eth_clocks", 0)
    ethphy = LiteEthPHYRMII(clock_pads=clock_pads, pads=platform.request("eth", 0), refclk_cd=None)
    platform.add_period_constraint(clock_pads.ref_clk, 1e9 / ETH_CLK_FREQ)
    return ethphy


def add_ethernet(soc, phy, nrxslots, ntxslots):
    """LiteEth's MAC with wishbone SRAM slots, as SoC.add_ethernet() adds it but with shallow
    clock-domain FIFOs (flip-flops): the BSRAMs go to the EMCU and the slots."""
    from liteeth.mac import LiteEthMAC

    soc.ethmac = ethmac = LiteEthMAC(phy, dw=32, interface="wishbone", endianness=soc.cpu.endianness,
        nrxslots=nrxslots, ntxslots=ntxslots, with_sys_datapath=False,
        tx_cdc_depth=ETH_CDC_DEPTH, rx_cdc_depth=ETH_CDC_DEPTH)
    slot = ethmac.slot_size.constant
    rx_size, tx_size = nrxslots * slot, ntxslots * slot
    soc.bus.add_region("ethmac", SoCRegion(origin=ETHMAC_BASE, size=rx_size + tx_size, linker=True,
                                           cached=False))
    soc.bus.add_slave("ethmac_rx", ethmac.bus_rx,
                      SoCRegion(origin=ETHMAC_BASE, size=rx_size, linker=True, cached=False))
    soc.bus.add_slave("ethmac_tx", ethmac.bus_tx,
                      SoCRegion(origin=ETHMAC_BASE + rx_size, size=tx_size, linker=True, cached=False))
