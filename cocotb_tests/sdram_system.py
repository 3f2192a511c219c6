#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The Colorlight i5's main RAM for cocotb harnesses, as soc/main_ram.py and soc/litedav_soc.py
build it with SDRAM DMA ports (`litedav-soc --nic-sdram-ports`): LiteDRAM's SDRAM model with the board chip's timings (M12L64322A, 32-bit SDR, 1:1 at
75 MHz) and controller; the CPU's bus on LiteDAV's L2 (gateware/l2_cache.py, 128-bit lines) in
front of LiteDRAM's wishbone bridge; each DMA master on its own SDRAMDMAPort (gateware/sdram_dma.py),
a 32-bit native port of the crossbar kept coherent with the L2 through a snoop port. Main RAM is
at bus address 0 here."""

SYS_CLK_HZ = 75e6       # the Colorlight i5's sys_clk
L2_SIZE    = 8192       # its L2 (platforms/colorlight_i5.py L2_CACHE_SIZE)


def add_sdram_system(module, cpu_bus, dma_buses, l2_size=L2_SIZE):
    """Add the memory system to the Migen `module`: `cpu_bus` (a 32-bit word-addressed wishbone
    master) on the L2, each of `dma_buses` on an SDRAMDMAPort. Returns (l2, ports, ram_bytes)."""
    from litedram.core import LiteDRAMCore
    from litedram.modules import M12L64322A
    from litedram.phy.model import SDRAMPHYModel, get_sdram_phy_settings
    from litedram.frontend.wishbone import LiteDRAMWishbone2Native
    from litedav.gateware.l2_cache import L2Cache
    from litedav.gateware.sdram_dma import SDRAMDMAPort
    from litedav.soc.main_ram import L2_LINE_BITS

    chip     = M12L64322A(SYS_CLK_HZ, "1:1")
    settings = get_sdram_phy_settings(memtype=chip.memtype, data_width=32, clk_freq=SYS_CLK_HZ)
    module.submodules.sdrphy = phy = SDRAMPHYModel(chip, settings, clk_freq=SYS_CLK_HZ)
    module.submodules.sdram  = sdram = LiteDRAMCore(phy=phy, geom_settings=chip.geom_settings,
        timing_settings=chip.timing_settings, clk_freq=SYS_CLK_HZ)
    port = sdram.crossbar.get_port()
    line_bits = max(port.data_width, L2_LINE_BITS)
    module.submodules.l2 = l2 = L2Cache(l2_size, cpu_bus, line_words=line_bits // 32)
    module.submodules.bridge = LiteDRAMWishbone2Native(wishbone=l2.slave, port=port)
    geom = chip.geom_settings
    ram_bytes = 2**(geom.bankbits + geom.rowbits + geom.colbits) * 4
    ports = []
    for i, bus in enumerate(dma_buses):
        dma_port = SDRAMDMAPort(bus, sdram.crossbar.get_port(data_width=32), l2.add_snoop_port(),
                                base=0, size=ram_bytes, line_words=line_bits // 32)
        setattr(module.submodules, f"dma_port{i}", dma_port)
        ports.append(dma_port)
    return l2, ports, ram_bytes
