"""LiteDAV SoC: VexRiscv, main RAM holding firmware + heap, LiteEth MAC, timer with a
free-running 64-bit cycle counter, UART.

The CPU resets straight into main RAM, where the firmware image is preloaded:
there is no BIOS and no netboot in the boot path.
"""

from migen import ClockDomain, Signal

from litex.build.io import CRG
from litex.soc.integration.soc_core import SoCCore
from litex.soc.integration.soc import SoCRegion

from litedav.soc.sim_phy import SimPHY

MAIN_RAM_BASE = 0x40000000

# What each VexRiscv netlist does not cache: the prebuilt netlists (pythondata-cpu-vexriscv) decide
# it from the address alone, and LiteX's `io_regions` (0x80000000 up for every variant) only
# describes it. The MMU variants (`linux*`) bypass their caches for 0xB, 0xE and 0xF in the top
# nibble only, the others (those with a data cache) for the upper half. (origin, size) pairs.
VEXRISCV_UNCACHED = {
    "linux":   [(0xB0000000, 0x10000000), (0xE0000000, 0x20000000)],
    "default": [(0x80000000, 0x80000000)],
}
# Regions the CPU must read uncached, placed where every variant bypasses its caches (CSRs are at
# 0xF0000000 already): LiteEth's packet SRAM (the MAC writes it), the simulator's flash window
# (device registers; the firmware programs and erases through it) and the boards' SPI flash.
ETHMAC_BASE    = 0xB0000000
SPIFLASH_BASE  = 0xB4000000 # Up to 64 MiB.
SIM_FLASH_BASE = 0xB8000000


class LiteDAVSoC(SoCCore):
    def __init__(self, platform, sys_clk_freq, main_ram_size, firmware_words=None,
                 eth_rx_slots=8, eth_tx_slots=4, cpu_variant="standard", bus_bursting=True,
                 nic="liteeth", sim_flash=True, spi_flash=False, board=None, cpu_type=None):
        """board: a board module (platforms/<board>.py) with soc_kwargs() and add_board(soc, f);
        None for the simulator. On a board the BIOS in ROM boots the firmware from SPI flash
        (firmware_words and main_ram_size are then unused: main RAM is the board's SDRAM).
        cpu_type: None for the board's CPU (board.CPU_TYPE, else VexRiscv).
        spi_flash (simulator): LiteSPI and a SPI NOR chip model in place of the sim flash
        (add_sim_spi_flash), so the firmware keeps its store as on a board."""
        kwargs = dict(
            cpu_reset_address        = MAIN_RAM_BASE,
            integrated_rom_size      = 0,
            integrated_sram_size     = 0,
            integrated_main_ram_size = main_ram_size,
            integrated_main_ram_init = firmware_words or [],
            uart_name                = "sim" if platform.name == "sim" else "serial",
        )
        if board is not None:
            kwargs = board.soc_kwargs()
        SoCCore.__init__(self, platform, clk_freq=int(sys_clk_freq),
            ident                    = "LiteDAV",
            cpu_type                 = cpu_type or getattr(board, "CPU_TYPE", "vexriscv"),
            cpu_variant              = cpu_variant,
            timer_uptime             = True,
            # Burst cycles let cache-line refills stream from RAM instead of
            # paying a full bus handshake per word.
            bus_bursting             = bus_bursting,
            **kwargs,
        )

        self.mem_map.update(ethmac=ETHMAC_BASE, spiflash=SPIFLASH_BASE)

        if platform.name == "sim":
            self.add_constant("LITEDAV_MAIN_RAM_SIZE", main_ram_size)
            self.crg = CRG(platform.request("sys_clk"))
            self.ethphy = SimPHY(platform.request("eth", 0))
            if spi_flash:
                self.add_sim_spi_flash()
            elif sim_flash:
                self.add_sim_flash()
        elif board is not None:
            self.ethphy = board.add_board(self, sys_clk_freq)
            if "main_ram" in self.bus.regions:   # The Tang Nano 4K's EMCU has its own SRAM only.
                self.add_constant("LITEDAV_MAIN_RAM_SIZE", self.bus.regions["main_ram"].size)
        else:
            raise ValueError(f"platform {platform.name!r} has no SoC recipe (pass its board module)")

        if nic == "liteeth" and hasattr(board, "add_ethernet"):   # The board's own MAC set-up.
            board.add_ethernet(self, self.ethphy, nrxslots=eth_rx_slots, ntxslots=eth_tx_slots)
        elif nic == "liteeth":
            self.add_ethernet(phy=self.ethphy, nrxslots=eth_rx_slots, ntxslots=eth_tx_slots)
        elif nic == "offload":
            self.add_offload_nic(with_sys_datapath=board is not None, bus_slices=board is not None)
        else:
            raise ValueError(f"unknown NIC {nic!r}: liteeth or offload")
        self.check_uncached_regions()

    def add_spi_flash(self, *args, **kwargs):
        """LiteX's SPI flash, its window uncached (LiteX adds it as a cached region wherever it
        is; at SPIFLASH_BASE the CPU does not cache it, so the region says so)."""
        check, self.bus.io_regions_check = self.bus.io_regions_check, False
        try:
            SoCCore.add_spi_flash(self, *args, **kwargs)
        finally:
            self.bus.io_regions_check = check
        self.bus.regions["spiflash"].cached = False

    def add_sim_spi_flash(self):
        """The boards' flash path in the simulator: LiteSPI (memory-mapped reads, master CSRs
        `spiflash_core_master_*`) with its 1x SDR PHY on the `spiflash` pads, where the
        `spi_nor_flash` sim module plays a GD25Q16 (the Colorlight i5's chip, 2 MiB) from a host
        file. Same flash layout constants as the Colorlight i5 (the store in its last 512 KiB).
        SPI clock sys_clk/4 (PHY divisor 1, as on the Colorlight i5 at 75 MHz)."""
        from litespi.modules import GD25Q16
        from litespi.opcodes import SpiNorFlashOpCodes
        from litedav.platforms import colorlight_i5 as layout
        self.add_spi_flash(mode="1x", module=GD25Q16(SpiNorFlashOpCodes.READ_1_1_1),
                           clk_freq=self.sys_clk_freq / 4)
        origin = self.bus.regions["spiflash"].origin
        self.add_constant("LITEDAV_FLASH_STORE_BASE", origin + layout.FLASH_STORE_OFFSET)
        self.add_constant("LITEDAV_FLASH_STORE_SIZE", layout.FLASH_STORE_SIZE)

    def check_uncached_regions(self):
        """Every region LiteX maps uncached must be one the CPU's netlist does not cache: a flash
        window or packet buffer read through the data cache returns stale or whole-line reads."""
        if self.cpu.name != "vexriscv":
            return
        ranges = VEXRISCV_UNCACHED["linux" if self.cpu.variant.startswith("linux") else "default"]
        for name, region in self.bus.regions.items():
            if region.cached:
                continue
            if not any(o <= region.origin and region.origin + region.size <= o + n for o, n in ranges):
                raise ValueError(f"region {name} at 0x{region.origin:08x} (+0x{region.size:x}) is "
                    f"meant to be uncached, but VexRiscv {self.cpu.variant} caches it: uncached "
                    "ranges " + ", ".join(f"0x{o:08x}-0x{o + n - 1:08x}" for o, n in ranges))

    def add_offload_nic(self, with_sys_datapath=False, bus_slices=False):
        """The offload NIC (gateware/nic.py, docs/nic.md): DMA masters on the main bus, CSRs as
        `nic_*`, one interrupt `nic`. The sim PHY carries bare frames (no preamble, no FCS).
        with_sys_datapath: the MAC's preamble/FCS/padding at 32 bits in sys_clk (boards: only the
        PHY and the clock-domain crossing stay in the PHY's 125 MHz clocks). bus_slices: the DMA
        masters reach the bus through register slices (soc/bus_slice.py; boards, for timing)."""
        from litedav.gateware.nic import OffloadNIC
        self.nic = OffloadNIC(self.ethphy, with_preamble_crc=self.platform.name != "sim",
                              with_sys_datapath=with_sys_datapath)
        rx_bus, tx_bus = self.nic.rx_bus, self.nic.tx_bus
        if bus_slices:
            from litedav.soc.bus_slice import WishboneRegisterSlice
            self.nic_rx_slice = WishboneRegisterSlice(rx_bus)
            self.nic_tx_slice = WishboneRegisterSlice(tx_bus)
            rx_bus, tx_bus = self.nic_rx_slice.bus, self.nic_tx_slice.bus
        self.bus.add_master(name="nic_rx", master=rx_bus)
        self.bus.add_master(name="nic_tx", master=tx_bus)
        # The firmware polls the NIC; its interrupt line is wired when the CPU has one to spare (Arm's
        # DesignStart Cortex-M3 wrapper brings two, taken by the timer and the UART).
        if len(self.irq.locs) < len(self.cpu.interrupt):
            self.irq.add("nic", use_loc_if_exists=True)
        self.add_constant("LITEDAV_NIC_OFFLOAD")

    def add_sim_flash(self):
        """The host-backed NOR flash (soc/sim_flash.py, docs/sim_flash.md) as region `sim_flash`:
        firmware sees SIM_FLASH_BASE/SIM_FLASH_SIZE in generated/mem.h."""
        from litedav.soc.sim_flash import SimFlash, WINDOW_SIZE
        self.sim_flash = SimFlash(self.platform.request("flash", 0))
        self.bus.add_slave("sim_flash", self.sim_flash.bus,
            SoCRegion(origin=SIM_FLASH_BASE, size=WINDOW_SIZE, cached=False))
