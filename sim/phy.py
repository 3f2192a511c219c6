"""The simulator's Ethernet PHY: an 8-bit frame stream (no preamble, no FCS) that the
`slirp_ethernet` sim module can pace at a wire rate.

LiteEth's own LiteEthPHYModel ties TX `ready` to 1 and derives RX `last` from `valid`
dropping, so neither direction can leave a gap inside a frame. Here the sim module drives
TX `ready` (pad `source_ready`) and both directions carry an explicit `last`
(`source_last` out of the SoC, `sink_last` into it, with `sink_error` flagging a frame whose
FCS was bad on the wire): a byte may wait any number of cycles,
as on a real MII PHY, without ending its frame. The MAC's RX path (padding checker, last_be,
stride converter, clock-domain FIFO, SRAM writer / RxDMA) only acts on beats with `valid`,
so gaps inside an RX frame are harmless.
"""

from migen import Record, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from liteeth.common import eth_phy_description
from liteeth.phy.model import LiteEthPHYModelCRG


class SimPHY(LiteXModule):
    dw                = 8
    with_preamble_crc = False  # Bare frames: the sim module adds no preamble or FCS.
    model             = True   # LiteX's add_ethernet: a model, no clock constraints.

    def __init__(self, pads):
        # eth_rx/eth_tx run on sys_clk: the sim module paces bytes with valid/ready instead.
        self.crg    = LiteEthPHYModelCRG()
        self.sink   = sink   = stream.Endpoint(eth_phy_description(8))
        self.source = source = stream.Endpoint(eth_phy_description(8))

        # # #

        # TX (MAC -> wire): the sim module accepts a byte only when the wire has room for it.
        # `ready` is registered: the module drives the pad during the cycle before the one it
        # applies to (it knows a cycle ahead when the wire has room), so no logic of the SoC
        # depends combinationally on an input pad. Verilator evaluates logic that follows an
        # input at every eval, both clock edges; through a combinational `ready` that was the
        # MAC's whole TX path, the DMA behind it and the bus.
        ready = Signal()
        self.sync += ready.eq(pads.source_ready)
        self.comb += [
            pads.source_valid.eq(sink.valid),
            pads.source_data.eq(sink.data),
            pads.source_last.eq(sink.last),
            sink.ready.eq(ready),
        ]

        # RX (wire -> MAC): a PHY cannot be stalled, so `source.ready` is not looked at
        # (as in LiteEth's PHYs); registered like LiteEthPHYModel.
        self.sync += [
            source.valid.eq(pads.sink_valid),
            source.data.eq(pads.sink_data),
            source.last.eq(pads.sink_valid & pads.sink_last),
            # The module's fault injector marks a frame whose FCS the receiver would find bad on
            # its last byte, as LiteEth's FCS checker does: the MAC's RX path drops the frame.
            source.error.eq(pads.sink_valid & pads.sink_last & pads.sink_error),
        ]


class SimSerialPads(LiteXModule):
    """The `serial` sim pads (the serial2console module) as LiteX's RS232PHYModel wants them,
    with the inputs registered, as SimPHY's `ready`: nothing in the SoC depends combinationally
    on an input pad (through the UART's FIFOs and events that was the interrupt logic of the
    CPU, evaluated at every eval). `pads` is what the UART is given.

    The console's TX `ready` is always 1 (serial2console drives it so from the first cycle on).
    An RX byte spends a cycle in the register: the module is offered `sink_ready` only while the
    register is empty and the UART's FIFO has room, so it sends at most one byte every other
    cycle and none is lost."""

    def __init__(self, serial):
        self.pads = pads = Record([(name, len(getattr(serial, name))) for name in
            ("source_valid", "source_ready", "source_data", "sink_valid", "sink_ready", "sink_data")])

        # # #

        rx_valid = Signal()
        self.sync += [
            pads.source_ready.eq(serial.source_ready),
            rx_valid.eq(serial.sink_valid),
            pads.sink_data.eq(serial.sink_data),
        ]
        self.comb += [
            serial.source_valid.eq(pads.source_valid),
            serial.source_data.eq(pads.source_data),
            pads.sink_valid.eq(rx_valid),
            serial.sink_ready.eq(pads.sink_ready & ~rx_valid),
        ]
