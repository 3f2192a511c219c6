#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A register slice for a wishbone master: every signal between the master and the bus leaves a
flip-flop, so no combinational path runs from the master's logic into the shared interconnect.

Why: on the Colorlight i5 (ECP5 -6) the offload NIC's RX DMA decides its bus request from a block
RAM read (5.8 ns clock-to-out), and that request went through the shared bus' arbiter and address
decoder into the ROM's address pins: one 16 ns path, sys_clk 62 MHz. Behind this slice the
master's request reaches the bus one cycle later and the answer comes back one cycle later.

Every access becomes a classic cycle (cti 0): two cycles more than a direct connection per
access, bursts are not forwarded.
"""

from migen import If, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone


class WishboneRegisterSlice(LiteXModule):
    """`master`: the interface a bus master drives. `bus`: the interface to add to the SoC's bus
    as a master in its place."""
    def __init__(self, master):
        self.bus = bus = wishbone.Interface(data_width=master.data_width, address_width=32,
                                            addressing="word")

        # # #

        busy = Signal()
        self.sync += [
            master.ack.eq(0),
            master.err.eq(0),
            If(~busy,
                # The cycle after an ack the master still shows the finished request: skip it.
                If(master.cyc & master.stb & ~master.ack & ~master.err,
                    bus.adr.eq(master.adr),
                    bus.dat_w.eq(master.dat_w),
                    bus.sel.eq(master.sel),
                    bus.we.eq(master.we),
                    bus.cyc.eq(1),
                    bus.stb.eq(1),
                    busy.eq(1),
                )
            ).Elif(bus.ack | bus.err,
                bus.cyc.eq(0),
                bus.stb.eq(0),
                master.dat_r.eq(bus.dat_r),
                master.ack.eq(bus.ack),
                master.err.eq(bus.err),
                busy.eq(0),
            )
        ]
