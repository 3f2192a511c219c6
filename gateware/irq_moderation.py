#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Interrupt moderation for the offload NIC: one interrupt for a batch of events (frames received,
descriptors completed) instead of one per event, with a timer bounding the added latency."""

from functools import reduce
from operator import add

from litex.gen import *

# IRQ Moderation -----------------------------------------------------------------------------------

class IRQModeration(LiteXModule):
    """`irq` is a level, set when `count_threshold` events have arrived since the last `ack`, or
    when `timeout_cycles` cycles have passed since the first of them; an `ack` pulse clears it.

    `events` takes one or more pulses per cycle (each bit set is one event). A threshold of 0 or 1
    interrupts on every event; a timeout of 0 disables the timer. Events arriving on the cycle of
    the `ack` are counted after it, so none is lost. The timeout is sampled at the first event.
    """
    def __init__(self, n_events=1, count_width=16, timeout_width=24):
        self.events          = Signal(n_events)
        self.count_threshold = Signal(count_width)
        self.timeout_cycles  = Signal(timeout_width)
        self.ack             = Signal()
        self.irq             = Signal()

        # # #

        arrived   = Signal(max=n_events + 1)
        count     = Signal(count_width)
        total     = Signal(count_width + 1)
        pending   = Signal() # An event arrived since the last ack.
        remaining = Signal(timeout_width) # Timer: cycles left before the interrupt, 0 = stopped.
        self.comb += [
            arrived.eq(reduce(add, [self.events[i] for i in range(n_events)])),
            total.eq(count + arrived),
        ]
        first = Signal() # The first event since the ack: start the timer.
        self.comb += first.eq((arrived != 0) & (~pending | self.ack))
        self.sync += [
            If(first,
                remaining.eq(self.timeout_cycles)
            ).Elif(remaining != 0,
                remaining.eq(remaining - 1)
            ),
            If(self.ack,
                count.eq(arrived),
                pending.eq(arrived != 0),
                self.irq.eq((arrived != 0) & (arrived >= self.count_threshold)),
            ).Else(
                count.eq(total), # May wrap only once irq is set, which only ack clears.
                pending.eq(pending | (arrived != 0)),
                If(((arrived != 0) & (total >= self.count_threshold)) | (pending & (remaining == 1)),
                    self.irq.eq(1)
                ),
            )
        ]
