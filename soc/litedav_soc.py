"""LiteDAV SoC: VexRiscv, main RAM holding firmware + heap, LiteEth MAC, timer with a
free-running 64-bit cycle counter, UART.

The CPU resets straight into main RAM, where the firmware image is preloaded:
there is no BIOS and no netboot in the boot path.
"""

from migen import ClockDomain, Signal

from litex.build.io import CRG
from litex.soc.integration.soc_core import SoCCore
from litex.soc.integration.soc import SoCRegion

from liteeth.phy.model import LiteEthPHYModel

MAIN_RAM_BASE = 0x40000000


class LiteDAVSoC(SoCCore):
    def __init__(self, platform, sys_clk_freq, main_ram_size, firmware_words=None,
                 eth_rx_slots=8, eth_tx_slots=4, cpu_variant="standard", bus_bursting=True):
        SoCCore.__init__(self, platform, clk_freq=int(sys_clk_freq),
            ident                    = "LiteDAV",
            cpu_type                 = "vexriscv",
            cpu_variant              = cpu_variant,
            cpu_reset_address        = MAIN_RAM_BASE,
            integrated_rom_size      = 0,
            integrated_sram_size     = 0,
            integrated_main_ram_size = main_ram_size,
            integrated_main_ram_init = firmware_words or [],
            uart_name                = "sim" if platform.name == "sim" else "serial",
            timer_uptime             = True,
            # Burst cycles let cache-line refills stream from RAM instead of
            # paying a full bus handshake per word.
            bus_bursting             = bus_bursting,
        )
        self.add_constant("LITEDAV_MAIN_RAM_SIZE", main_ram_size)

        if platform.name == "sim":
            self.crg = CRG(platform.request("sys_clk"))
            self.ethphy = LiteEthPHYModel(platform.request("eth", 0))
        else:
            raise ValueError(f"platform {platform.name!r} has no SoC recipe yet")

        self.add_ethernet(phy=self.ethphy, nrxslots=eth_rx_slots, ntxslots=eth_tx_slots)
