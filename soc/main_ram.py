#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Main RAM in SDRAM behind LiteDAV's own L2 cache (gateware/l2_cache.py).

LiteX's SoC.add_sdram() can only put its own `wishbone.Cache` in front of LiteDRAM; here LiteX
builds the LiteDRAM core (add_sdram(with_soc_interconnect=False)) and this module makes the same
connection LiteX would, with L2Cache in the cache's place: the `main_ram` region and bus slave,
the cache, LiteDRAM's wishbone bridge on one crossbar port (it converts the cache's lines to the
port's width). CONFIG_L2_SIZE tells LiteX's software (flush_l2_cache(): reads twice the cache's
size of main RAM, which evicts every line of a direct-mapped cache).
"""

from litex.soc.integration.soc import SoCRegion
from litex.soc.interconnect import wishbone

from litedav.gateware.l2_cache import L2Cache

L2_LINE_BITS = 128   # One line per LiteDRAM burst of 4 words on a 32-bit SDR port, as LiteX's L2.


def add_sdram_main_ram(soc, phy, module, l2_size, name="sdram"):
    from litedram.frontend.wishbone import LiteDRAMWishbone2Native

    soc.add_sdram(name, phy=phy, module=module, with_soc_interconnect=False)
    sdram = getattr(soc, name)
    geom = module.geom_settings
    size = (2**(geom.bankbits + geom.rowbits + geom.colbits) *
            phy.settings.nranks * phy.settings.databits // 8)
    soc.bus.add_region("main_ram", SoCRegion(origin=soc.mem_map["main_ram"], size=size, mode="rwx"))

    port = sdram.crossbar.get_port()
    bus = wishbone.Interface(data_width=soc.bus.data_width, address_width=32, addressing="word")
    soc.bus.add_slave(name="main_ram", slave=bus)
    line_bits = max(port.data_width, L2_LINE_BITS)
    soc.l2_cache = L2Cache(l2_size, bus, line_words=line_bits // soc.bus.data_width)
    soc.sdram_bridge = LiteDRAMWishbone2Native(wishbone=soc.l2_cache.slave, port=port,
                                               base_address=soc.bus.regions["main_ram"].origin)
    soc.add_config("L2_SIZE", l2_size)
