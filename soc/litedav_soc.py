"""LiteDAV SoC: VexRiscv, main RAM holding firmware + heap, LiteEth MAC (or the offload NIC),
timer with a free-running 64-bit cycle counter, UART.

What the SoC is made of beyond that (clocks, PHY, memories, flash, how it boots) is its board's:
a platforms/<board>.py module, or the simulator's SimBoard (platforms/sim.py).
"""

from litex.soc.integration.soc_core import SoCCore

from litedav.soc import vexriscv_netlist

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
# 0xF0000000 already): LiteEth's packet SRAM (the MAC writes it) and the SPI flash (the firmware
# programs and erases it). A board's own device windows go in the same range (the simulator's
# flash: platforms/sim.py SIM_FLASH_BASE).
ETHMAC_BASE    = 0xB0000000
SPIFLASH_BASE  = 0xB4000000 # Up to 64 MiB.


class LiteDAVSoC(SoCCore):
    def __init__(self, platform, board, sys_clk_freq, eth_rx_slots=8, eth_tx_slots=4,
                 cpu_variant="standard", bus_bursting=True, nic="liteeth", cpu_type=None,
                 nic_sdram_ports=None, cpu_icache=None, cpu_dcache=None):
        """board: the board's recipe, a platforms/<board>.py module or an object with the same
        attributes (platforms/sim.py SimBoard): soc_kwargs() (SoCCore's memories, UART, boot),
        add_board(soc, sys_clk_freq) (clocks, PHY, memories, flash; returns the PHY), optionally
        uart_pads(soc, uart_name) (the UART's pads, None for the platform's),
        CPU_TYPE, add_ethernet() (its own MAC set-up), NIC_SYS_DATAPATH and NIC_BUS_SLICES
        (add_offload_nic, default True), NIC_SDRAM_PORTS (default False). cpu_type: None for the
        board's CPU (board.CPU_TYPE, else VexRiscv). nic_sdram_ports: None for the board's
        NIC_SDRAM_PORTS. cpu_icache, cpu_dcache: VexRiscv's cache sizes in bytes (None: the
        variant's prebuilt 4 KiB; other sizes are generated, soc/vexriscv_netlist.py)."""
        self.board_recipe = board
        SoCCore.__init__(self, platform, clk_freq=int(sys_clk_freq),
            ident                    = "LiteDAV",
            cpu_type                 = cpu_type or getattr(board, "CPU_TYPE", "vexriscv"),
            cpu_variant              = vexriscv_netlist.litex_variant(cpu_variant),
            timer_uptime             = True,
            # Burst cycles let cache-line refills stream from RAM instead of
            # paying a full bus handshake per word.
            bus_bursting             = bus_bursting,
            **board.soc_kwargs(),
        )

        self.mem_map.update(ethmac=ETHMAC_BASE, spiflash=SPIFLASH_BASE)
        self.use_cpu_caches(cpu_variant, cpu_icache, cpu_dcache)

        self.ethphy = board.add_board(self, sys_clk_freq)
        if "main_ram" in self.bus.regions:   # The Tang Nano 4K's EMCU has its own SRAM only.
            self.add_constant("LITEDAV_MAIN_RAM_SIZE", self.bus.regions["main_ram"].size)

        if nic == "liteeth" and hasattr(board, "add_ethernet"):   # The board's own MAC set-up.
            board.add_ethernet(self, self.ethphy, nrxslots=eth_rx_slots, ntxslots=eth_tx_slots)
        elif nic == "liteeth":
            self.add_ethernet(phy=self.ethphy, nrxslots=eth_rx_slots, ntxslots=eth_tx_slots)
        elif nic == "offload":
            if nic_sdram_ports is None:
                nic_sdram_ports = getattr(board, "NIC_SDRAM_PORTS", False)
            self.add_offload_nic(with_sys_datapath=getattr(board, "NIC_SYS_DATAPATH", True),
                                 bus_slices=getattr(board, "NIC_BUS_SLICES", True),
                                 sdram_ports=nic_sdram_ports)
        else:
            raise ValueError(f"unknown NIC {nic!r}: liteeth or offload")
        self.check_uncached_regions()

    def use_cpu_caches(self, variant, icache, dcache):
        """VexRiscv `variant` (LiteX's or vexriscv_netlist.OWN_VARIANTS') with caches of these
        sizes, generated, in place of the prebuilt netlist LiteX would take."""
        if vexriscv_netlist.is_prebuilt(variant, icache, dcache):
            return
        if self.cpu.name != "vexriscv":
            raise ValueError(f"cache sizes are VexRiscv's; this SoC's CPU is {self.cpu.name}")
        self.cpu.use_external_variant(vexriscv_netlist.netlist(variant, icache, dcache))
        # the generated netlists' data cache invalidates single lines (soc/vexriscv-patches)
        self.add_constant("LITEDAV_DCACHE_LINE_INVALIDATE")

    def add_uart(self, name="uart", uart_name="serial", uart_pads=None, **kwargs):
        """LiteX's UART, on the pads the board's uart_pads(soc, uart_name) gives when it has one
        (the simulator's: platforms/sim.py), else on the platform's."""
        if uart_pads is None and hasattr(self.board_recipe, "uart_pads"):
            uart_pads = self.board_recipe.uart_pads(self, uart_name)
        SoCCore.add_uart(self, name=name, uart_name=uart_name, uart_pads=uart_pads, **kwargs)

    def add_spi_flash(self, name="spiflash", **kwargs):
        """LiteX's SPI flash, its window uncached (LiteX adds it as a cached region wherever it
        is; at SPIFLASH_BASE the CPU does not cache it, so the region says so)."""
        check, self.bus.io_regions_check = self.bus.io_regions_check, False
        try:
            SoCCore.add_spi_flash(self, name=name, **kwargs)
        finally:
            self.bus.io_regions_check = check
        self.bus.regions[name].cached = False

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

    def add_offload_nic(self, with_sys_datapath=False, bus_slices=False, sdram_ports=False):
        """The offload NIC (gateware/nic.py, docs/nic.md): DMA masters on the main bus, CSRs as
        `nic_*`, one interrupt `nic`. A PHY may carry bare frames (the simulator's: no preamble, no
        FCS), as its `with_preamble_crc` says.
        with_sys_datapath: the MAC's preamble/FCS/padding at 32 bits in sys_clk (boards: only the
        PHY and the clock-domain crossing stay in the PHY's 125 MHz clocks). bus_slices: the DMA
        masters reach the bus through register slices (soc/bus_slice.py; boards, for timing).
        sdram_ports: with main RAM in SDRAM behind LiteDAV's L2 (soc/main_ram.py), the masters reach
        it through SDRAM DMA ports (gateware/sdram_dma.py) and only the rest of the bus through the
        slices."""
        from litedav.gateware.nic import OffloadNIC
        self.nic = OffloadNIC(self.ethphy, with_preamble_crc=getattr(self.ethphy, "with_preamble_crc", True),
                              with_sys_datapath=with_sys_datapath)
        rx_bus, tx_bus = self.nic.rx_bus, self.nic.tx_bus
        if sdram_ports:
            if not hasattr(self, "l2_cache"):
                raise ValueError("SDRAM DMA ports need main RAM in SDRAM behind LiteDAV's L2 "
                                 "(soc/main_ram.py add_sdram_main_ram)")
            # Main RAM in SDRAM behind LiteDAV's L2 (soc/main_ram.py): each master reaches it on
            # its own LiteDRAM port, coherent with the L2, and the rest of the bus through `other`.
            from litedav.gateware.sdram_dma import SDRAMDMAPort
            main_ram = self.bus.regions["main_ram"]

            def sdram_port(bus):
                return SDRAMDMAPort(bus, self.sdram.crossbar.get_port(data_width=32),
                    self.l2_cache.add_snoop_port(), base=main_ram.origin, size=main_ram.size,
                    line_words=self.l2_cache.line_words)
            self.nic_rx_sdram = sdram_port(rx_bus)
            self.nic_tx_sdram = sdram_port(tx_bus)
            rx_bus, tx_bus = self.nic_rx_sdram.other, self.nic_tx_sdram.other
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
