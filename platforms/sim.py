"""The `sim` platform: the SoC in Verilator.

Pins are not physical: each group is a set of Verilator top-level ports that a
LiteX sim module drives every clock edge.

- sys_clk / sys_rst: driven by LiteX's `clocker` module at the SoC's sys_clk.
- serial: 8-bit stream to `serial2console` (the firmware's UART console).
- eth: SimPHY's 8-bit frame stream (soc/sim_phy.py: no preamble or FCS, an
  explicit `last` each way, TX `ready` from the module), driven and paced at a
  wire rate by LiteDAV's `slirp_ethernet` module (sim/modules/).
- flash: SimFlash's request/response pair (soc/sim_flash.py), answered by
  LiteDAV's `flash_file` module from a host file (docs/sim_flash.md).
- spiflash: single-bit SPI (clk, cs_n, mosi, miso) from LiteSPI's 1x SDR PHY
  (litedav-soc --spi-flash, instead of `flash`), answered by LiteDAV's
  `spi_nor_flash` module, a SPI NOR chip kept in a host file (docs/sim_flash.md).
"""

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform

def _stream_pair(data_width):
    return [
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(data_width)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(data_width)),
    ]

# source_* leave the SoC, sink_* enter it; `last` ends a frame, so the module may leave
# idle cycles between the bytes of one frame.
_eth_stream = [
    *_stream_pair(8),
    Subsignal("source_last", Pins(1)),
    Subsignal("sink_last",   Pins(1)),
    Subsignal("sink_error",  Pins(1)),  # with sink_last: the frame's FCS was bad
]

_flash_bridge = [
    Subsignal("req_valid",  Pins(1)),
    Subsignal("req_we",     Pins(1)),
    Subsignal("req_addr",   Pins(25)),  # byte offset in the 32 MiB window
    Subsignal("req_data",   Pins(32)),
    Subsignal("req_sel",    Pins(4)),
    Subsignal("resp_valid", Pins(1)),
    Subsignal("resp_data",  Pins(32)),
    Subsignal("present",    Pins(1)),   # the host module is attached
]

_spiflash = [
    Subsignal("clk",  Pins(1)),
    Subsignal("cs_n", Pins(1)),
    Subsignal("mosi", Pins(1)),
    Subsignal("miso", Pins(1)),
]

_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0, *_stream_pair(8)),
    ("eth", 0, *_eth_stream),
    ("flash", 0, *_flash_bridge),
    ("spiflash", 0, *_spiflash),
]


class Platform(SimPlatform):
    name = "sim"

    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)
