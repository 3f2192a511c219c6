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
        self.comb += [
            pads.source_valid.eq(sink.valid),
            pads.source_data.eq(sink.data),
            pads.source_last.eq(sink.last),
            sink.ready.eq(pads.source_ready),
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
