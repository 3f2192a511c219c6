"""The boards' store flash: a SPI NOR chip on a Pmod header that holds the whole calendar store.

The chips soldered on the boards keep the bitstream and the firmware and leave the store 512 KiB
(Colorlight i5) or 1 MiB (Arty A7): a few hundred calendar objects. An office (100 users x 200
items, 14.8 MB of iCalendar: bench/office_data.py) needs tens of MiB. The store flash is a
Digilent Pmod SF3 (Micron MT25QL256, 32 MiB, JEDEC ID 20 BA 19) on one of the board's Pmod
headers, through a core `storeflash` with the CSRs of LiteSPI's master only (gateware/spi_master.py):
the firmware's LiteSPI driver (firmware/ports/litex/flash_litespi.c) reads (0x13), programs (0x12)
and erases 4 KiB (0x21) with 4-byte addresses through them. It keeps the store's power-cut
guarantees unchanged: they rest on NOR's rules (flash.h), which this chip keeps as the boot chip
does. Without the Pmod the firmware finds no chip (its MISO is pulled up: JEDEC ID ffffff) and
keeps the store on the boot chip as before. docs/spi_flash.md has the wiring.
"""

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal

# The SPI clock: sys_clk / 4 (gateware/spi_master.py), as the boot chip's on the Colorlight i5
# (18.75 MHz at 75 MHz).
SPI_CLOCK_DIVIDER = 4
STORE_FLASH_SIZE = 32 * 1024 * 1024
STORE_FLASH_JEDEC_ID = 0x20BA19   # Micron MT25QL256 (the sim model answers the same)


def pmod_io(pmod):
    """The Pmod SF3's 1x SPI pins on connector `pmod` (litex-boards' names: pin 0 is the Pmod's
    pin 1): CS# 1, DQ0/MOSI 2, DQ1/MISO 3, SCK 4, and DQ2/W# 7, DQ3/HOLD# 8, held high (single-bit
    SPI, no write protection, never on hold)."""
    return [
        ("storeflash", 0,
            Subsignal("cs_n", Pins(f"{pmod}:0"), Misc("PULLMODE=UP")),
            Subsignal("mosi", Pins(f"{pmod}:1")),
            Subsignal("miso", Pins(f"{pmod}:2"), Misc("PULLMODE=UP")),
            Subsignal("clk",  Pins(f"{pmod}:3")),
            IOStandard("LVCMOS33"),
        ),
        ("storeflash_wp_hold", 0,
            Subsignal("wp_n",   Pins(f"{pmod}:4")),
            Subsignal("hold_n", Pins(f"{pmod}:5")),
            IOStandard("LVCMOS33"),
        ),
    ]


def add_store_flash(soc, pmod=None):
    """The store flash's core `storeflash` (1x, SPI clock sys_clk/4 as the boot chip's) for the
    MT25QL256 and the constant LITEDAV_STOREFLASH that tells the firmware the whole chip is the
    store. No memory-mapped window: the firmware reads through the master's CSRs (a READ 0x13
    and its words streamed). The core is gateware/spi_master.py's, not LiteSPI's: the driver
    uses only its master's CSRs, and LiteSPI's master, crossbar and 1x PHY took about 700 LUT4
    of the Colorlight i5, where they crowded the routing of its critical paths
    (docs/colorlight_i5.md). pmod: the board's connector for the Pmod's pins (a board), or None
    where the platform has `storeflash` pads already (the simulator)."""
    from litespi.modules import MT25QL256
    from litespi.opcodes import SpiNorFlashOpCodes
    from litedav.gateware.spi_master import SPIMasterCore
    platform = soc.platform
    if pmod is not None:
        platform.add_extension(pmod_io(pmod))
        wp_hold = platform.request("storeflash_wp_hold")
        soc.comb += [wp_hold.wp_n.eq(1), wp_hold.hold_n.eq(1)]
    module = MT25QL256(SpiNorFlashOpCodes.READ_1_1_1_4B)
    assert module.total_size == STORE_FLASH_SIZE
    # The constants LiteX's add_spi_flash gives a LiteSPI core, under the core's name.
    soc.add_module(name="storeflash_core", module=SPIMasterCore(platform.request("storeflash")))
    soc.add_constant("STOREFLASH_PHY_FREQUENCY", int(soc.sys_clk_freq / SPI_CLOCK_DIVIDER))
    soc.add_constant("STOREFLASH_MODULE_NAME", module.name)
    soc.add_constant("STOREFLASH_MODULE_TOTAL_SIZE", module.total_size)
    soc.add_constant("STOREFLASH_MODULE_PAGE_SIZE", module.page_size)
    soc.add_constant("LITEDAV_STOREFLASH", 1)
