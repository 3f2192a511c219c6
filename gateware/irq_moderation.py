#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Interrupt moderation for the offload NIC: one interrupt for a batch of events (frames received,
descriptors completed) instead of one per event, with a timer bounding the added latency."""

from litex.gen import *

# IRQ Moderation -----------------------------------------------------------------------------------

class IRQModeration(LiteXModule):
    """`irq` is a level, set when `count_threshold` events have arrived since the last `ack`, or
    `timeout` ticks of `tick_cycles` cycles (`timeout*tick_cycles` cycles) after the first of them;
    an `ack` pulse clears it.

    `event` is a pulse, one event per cycle at most. A threshold of 0 or 1 interrupts on every
    event; a timeout of 0 disables the timer. An event arriving on the cycle of the `ack` is counted
    after it, so none is lost. The timer starts at the first event and compares its cycle count
    with `timeout` as it goes: change the threshold and timeout with an `ack` (a timeout lowered
    below the time already elapsed fires only when the count wraps, after 2**(timeout_width +
    log2(tick_cycles)) cycles).

    Both counters count up from a cleared state and are compared with the registers: no per-bit
    load multiplexers, and the event counter may wrap only once `irq` is set (threshold < 2**width).
    """
    def __init__(self, count_width=8, timeout_width=16, tick_cycles=16):
        assert tick_cycles & (tick_cycles - 1) == 0 and tick_cycles >= 2
        self.event           = Signal()
        self.count_threshold = Signal(count_width)
        self.timeout         = Signal(timeout_width) # In ticks of `tick_cycles` cycles.
        self.ack             = Signal()
        self.irq             = Signal()

        # # #

        tick_bits = log2_int(tick_cycles)
        count   = Signal(count_width) # Events since the ack, but this cycle's.
        pending = Signal()            # An event arrived since the ack: the timer runs.
        # Cycles since the first event, plus one: its tick count and cycle-in-tick.
        elapsed = Signal(timeout_width + tick_bits)
        counted = Signal(count_width + 1)
        first   = Signal()
        self.comb += [
            counted.eq(Mux(self.ack, 0, count) + 1),
            first.eq(self.event & (~pending | self.ack)),
        ]
        self.sync += [
            If(first,
                elapsed.eq(1)
            ).Else(
                elapsed.eq(elapsed + 1)
            ),
            If(self.event,
                count.eq(counted)
            ).Elif(self.ack,
                count.eq(0)
            ),
            If(self.ack,
                pending.eq(self.event),
                self.irq.eq(self.event & (counted >= self.count_threshold)),
            ).Else(
                pending.eq(pending | self.event),
                If((self.event & (counted >= self.count_threshold)) |
                   (pending & (elapsed == Cat(C(0, tick_bits), self.timeout)) & (self.timeout != 0)),
                    self.irq.eq(1)
                ),
            )
        ]
