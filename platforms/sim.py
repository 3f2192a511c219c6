"""The `sim` platform: the SoC in Verilator.

Pins are not physical: each group is a set of Verilator top-level ports that a
LiteX sim module drives every clock edge.

- sys_clk / sys_rst: driven by LiteX's `clocker` module at the SoC's sys_clk.
- serial: 8-bit stream to `serial2console` (the firmware's UART console).
- eth: LiteEthPHYModel's 8-bit stream (one byte per sys_clk, no preamble or
  FCS), driven by LiteDAV's `slirp_ethernet` module (sim/modules/).
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

_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0, *_stream_pair(8)),
    ("eth", 0, *_stream_pair(8)),
]


class Platform(SimPlatform):
    name = "sim"

    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)
