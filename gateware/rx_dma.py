#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""RX DMA of the offload NIC: frames from RxChecksum into the buffers of the RX descriptor ring.

The ring, its registers and the descriptor words are specified in docs/nic.md. The MAC cannot be
stalled, so `sink.ready` is always 1: frames go into a FIFO (one block RAM by default) and the bus
side drains it. A frame that finds the FIFO full is dropped whole and counted (`dropped_overrun`),
it never stalls the MAC nor merges with the next frame. At 1 Gbit/s the MAC delivers at most one
byte per sys_clk cycle at 125 MHz (two at 62.5 MHz) and the bus side writes up to four per cycle,
so the FIFO only absorbs bus latency.
"""

from litex.gen import *

from migen.genlib.fifo import SyncFIFO, SyncFIFOBuffered

from litex.soc.interconnect import stream, wishbone

from .checksum import rx_checksum_description, rx_checksum_status_layout

# Constants ----------------------------------------------------------------------------------------

rx_descriptor_bytes = 16

# Bits of RX descriptor word 2 (docs/nic.md), written by the NIC.
RX_DONE, RX_FRAME_ERROR, RX_RUNT, RX_TRUNCATED, RX_LENGTH_ERROR, RX_OVERFLOW, RX_VLAN = range(16, 23)
RX_L3_STATUS, RX_L4_STATUS = 24, 26

# Ring indices: rings of 2..4096 descriptors (docs/nic.md).
ring_index_bits = 12
ring_size_bits  = ring_index_bits + 1

# The counters of the frames the CPU never sees, in the order the harnesses read them (the driver
# counts the frames it receives, cut or short, from their descriptors).
rx_dma_counters = [
    "dropped_empty",   # Frames dropped because no descriptor was available (or enable was 0).
    "dropped_error",   # Frames with an error bit dropped because drop_errors was 1.
    "dropped_overrun", # Frames dropped because the FIFO was full (bus too slow for the MAC).
]

def ring_error(size, tail):
    """A ring the engines do not use: `tail` not below `size`, or `size` above the 4096 that the
    indices can count (then 4096 + n, n > 0)."""
    return (tail >= size) | (size[ring_index_bits] & (size[:ring_index_bits] != 0))

# RX DMA -------------------------------------------------------------------------------------------

class RxDMA(LiteXModule):
    """Writes each frame of `sink` into the buffer of the next RX descriptor with a wishbone master,
    then the descriptor's word 3 and word 2 (`done` last) and advances `head`.

    The next descriptor's words 0 and 1 are fetched as soon as the ring holds one, before its frame
    arrives. Data goes out in incrementing bursts (CTI 010, ending with 111) for as long as the FIFO
    has the next word, with `sel` masking the bytes past the frame or the buffer; buffers are
    4-byte aligned (the low address bits are ignored). Bytes past the buffer's size are not written
    and the descriptor gets `overflow`; its length is the number of bytes written.

    A frame is dropped whole, its descriptor not handed back and fetched again for the next frame
    (part of the frame may have been written into the buffer), when it has an error bit and
    `drop_errors` is 1, or when it overran the FIFO. A frame that arrives while the ring is empty (or
    the engine disabled) is dropped without touching memory. `enable` = 0 stops at the next frame
    boundary and resets `head` to 0. A tail not below `size`, or a size above 4096 (driver bugs),
    reads as an empty ring and sets `ring_error`.

    `done` pulses once per frame handed back, for interrupt moderation. Counters wrap around.
    """
    def __init__(self, fifo_depth=512, status_depth=16, counter_width=16):
        self.sink = sink = stream.Endpoint(rx_checksum_description(32))
        self.bus  = bus  = wishbone.Interface(data_width=32, adr_width=30, bursting=True)

        self.base        = Signal(32)        # Byte address of descriptor 0, 16-byte aligned.
        self.size        = Signal(ring_size_bits) # Number of descriptors, 2..4096.
        self.tail        = Signal(ring_index_bits)
        self.enable      = Signal()
        self.drop_errors = Signal(reset=1)
        self.head        = Signal(ring_index_bits)
        self.done        = Signal()
        self.ring_error  = Signal()
        for name in rx_dma_counters:
            setattr(self, name, Signal(counter_width, name=f"rx_{name}"))

        # # #

        # FIFOs: frame data (a word per beat, with its byte count and `last`) in block RAM, and one
        # status entry per frame, pushed with the frame's last word. ----------------------------
        status_width = sum(width for _, width in rx_checksum_status_layout)
        self.data_fifo   = data_fifo   = SyncFIFOBuffered(32 + 2 + 1, fifo_depth)
        self.status_fifo = status_fifo = SyncFIFO(status_width + 1, status_depth, fwft=True)

        status_params = Cat(*[getattr(sink, name) for name, _ in rx_checksum_status_layout])
        status_out    = Record(rx_checksum_status_layout)
        aborted       = Signal()
        self.comb += Cat(status_out.raw_bits(), aborted).eq(status_fifo.dout)

        # Ingress: never stalls. A beat is stored only while the FIFO keeps room for one more entry,
        # so that a frame that cannot continue is always ended by a marker (its status `aborted`). -
        count_m1  = Signal(2) # Bytes in the beat, minus one.
        fits      = Signal()
        can_start = Signal()
        abort     = Signal()
        overrun   = Signal()
        self.comb += [
            sink.ready.eq(1),
            If(sink.last & (sink.last_be != 0),
                count_m1.eq(Cat(sink.last_be[3] | (~sink.last_be[2] & sink.last_be[1]),
                    sink.last_be[3] | sink.last_be[2]))
            ).Else(
                count_m1.eq(3)
            ),
            fits.eq((data_fifo.fifo.level != fifo_depth - 1) & (data_fifo.fifo.level != fifo_depth)),
            can_start.eq(fits & status_fifo.writable),
            data_fifo.din.eq(Cat(sink.data, count_m1, sink.last | abort)),
            status_fifo.din.eq(Cat(status_params, abort)),
        ]
        self.ingress = ingress = FSM(reset_state="IDLE")
        ingress.act("IDLE",
            If(sink.valid,
                If(can_start,
                    data_fifo.we.eq(1),
                    status_fifo.we.eq(sink.last),
                    If(~sink.last, NextState("PASS"))
                ).Else(
                    overrun.eq(1),
                    If(~sink.last, NextState("DISCARD"))
                )
            )
        )
        ingress.act("PASS",
            If(sink.valid,
                data_fifo.we.eq(1),
                abort.eq(~fits),
                status_fifo.we.eq(sink.last | abort),
                overrun.eq(abort),
                If(abort & ~sink.last,
                    NextState("DISCARD")
                ).Elif(sink.last,
                    NextState("IDLE")
                )
            )
        )
        ingress.act("DISCARD",
            If(sink.valid & sink.last, NextState("IDLE"))
        )

        # Descriptor state. ------------------------------------------------------------------------
        desc_valid = Signal()   # Words 0 and 1 of descriptor `head` are in buf_adr/room.
        buf_adr    = Signal(30) # Word address of the next word to write.
        room       = Signal(16) # Bytes left in the buffer.
        length     = Signal(16) # Bytes written.
        overflow   = Signal()
        fetch_word = Signal()
        desc_adr   = Signal(30) # Word address of descriptor `head`.
        ring_empty = Signal()
        head_next  = Signal(ring_size_bits)
        self.comb += [
            desc_adr.eq(Cat(C(0, 2), self.base[4:] + self.head)),
            self.ring_error.eq(ring_error(self.size, self.tail)),
            ring_empty.eq(~self.enable | (self.head == self.tail) | self.ring_error),
            head_next.eq(self.head + 1),
        ]

        # The word at the FIFO's output. -----------------------------------------------------------
        word_data  = data_fifo.dout[:32]
        word_count = Signal(3)
        word_last  = data_fifo.dout[34]
        stored     = Signal(3) # Bytes of the word that fit in the buffer.
        short      = Signal()  # The word does not fit whole: the buffer overflows.
        room_after = Signal(16) # `room` once the word is written.
        next_ready = Signal()  # The FIFO will present another word on the cycle after a pop.
        more       = Signal()  # The word is not the last of the burst.
        more_now   = Signal()  # ... as it would be decided this cycle.
        waiting    = Signal()  # The beat on the bus was not acknowledged last cycle.
        more_held  = Signal()  # `more` as presented when that beat started.
        gap        = Signal()  # A burst just ended: give the bus away for a cycle.
        # Comparisons of `room` with small constants, written so that they stay in LUTs.
        room_below_4 = Signal()
        room_above_4 = Signal()
        self.comb += [
            room_below_4.eq(room[2:] == 0),
            room_above_4.eq((room[3:] != 0) | (room[2] & (room[:2] != 0))),
            word_count.eq(data_fifo.dout[32:34] + 1),
            short.eq(room_below_4 & (room[:2] <= data_fifo.dout[32:34])),
            stored.eq(Mux(short, room[:2], word_count)),
            # room - word_count as room + ~(word_count - 1): one adder straight from the FIFO's
            # block RAM output, whose clock-to-output delay starts sys_clk's longest paths.
            room_after.eq(Mux(short, 0, room + Cat(~data_fifo.dout[32:34], Replicate(1, 14)))),
            next_ready.eq(data_fifo.fifo.readable),
            more_now.eq(~word_last & room_above_4 & next_ready),
            # Wishbone holds a request, cti included, until its ack: a word that reaches the FIFO
            # while a burst's last beat waits must not turn that beat into a burst continuation.
            more.eq(Mux(waiting, more_held, more_now)),
        ]
        # `length` adds each word's bytes a cycle after its pop (off the FIFO's output path): the
        # descriptor's word 2 is written at least two cycles after the frame's last pop.
        start_frame = Signal()
        added       = Signal()
        added_bytes = Signal(3)
        self.sync += [
            added.eq(data_fifo.re),
            added_bytes.eq(stored),
            If(start_frame,
                length.eq(0)
            ).Elif(added,
                length.eq(length + added_bytes)
            ),
        ]
        self.sync += [
            gap.eq(bus.stb & bus.ack & (bus.cti == wishbone.CTI_BURST_END)),
            waiting.eq(bus.stb & ~bus.ack & ~bus.err),
            more_held.eq(more),
        ]

        # Per-frame outcome, for the counters and `done`. -------------------------------------------
        increment = {name: Signal(name=f"increment_{name}") for name in rx_dma_counters}
        handed_back = Signal()
        self.comb += increment["dropped_overrun"].eq(overrun & sink.valid)
        self.sync += [
            self.done.eq(handed_back),
            *[If(increment[name], getattr(self, name).eq(getattr(self, name) + 1))
                for name in rx_dma_counters],
        ]

        word3 = Cat(status_out.protocol, status_out.l3_offset, C(0, 3), status_out.l4_offset, C(0, 1))
        word2 = Signal(32)
        self.comb += [
            word2[:16].eq(length),
            word2[RX_DONE].eq(1),
            word2[RX_FRAME_ERROR].eq(status_out.frame_error),
            word2[RX_RUNT].eq(status_out.runt),
            word2[RX_TRUNCATED].eq(status_out.truncated),
            word2[RX_LENGTH_ERROR].eq(status_out.length_error),
            word2[RX_OVERFLOW].eq(overflow),
            word2[RX_VLAN].eq(status_out.vlan),
            word2[RX_L3_STATUS:RX_L3_STATUS + 2].eq(status_out.l3_status),
            word2[RX_L4_STATUS:RX_L4_STATUS + 2].eq(status_out.l4_status),
            bus.bte.eq(0),
        ]

        # Bus side. --------------------------------------------------------------------------------
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(~self.enable,
                NextValue(self.head, 0),
                NextValue(desc_valid, 0),
            ),
            If(self.enable & ~desc_valid & ~ring_empty,
                NextState("FETCH")
            ).Elif(data_fifo.readable,
                start_frame.eq(1),
                NextValue(overflow, 0),
                # No buffer: the frame goes nowhere (and FINISH drops it, desc_valid being 0).
                If(~desc_valid | ~self.enable, NextValue(room, 0)),
                NextState("DATA")
            )
        )
        fsm.act("FETCH",
            bus.cyc.eq(1),
            bus.stb.eq(1),
            bus.adr.eq(desc_adr | fetch_word),
            bus.cti.eq(Mux(fetch_word, wishbone.CTI_BURST_END, wishbone.CTI_BURST_INCREMENTING)),
            If(bus.ack | bus.err,
                NextValue(fetch_word, ~fetch_word),
                If(~fetch_word,
                    NextValue(buf_adr, bus.dat_r[2:])
                ).Else(
                    NextValue(room, bus.dat_r[:16]),
                    NextValue(desc_valid, 1),
                    NextState("IDLE")
                )
            )
        )
        pop = Signal()
        fsm.act("DATA",
            bus.cyc.eq(data_fifo.readable & (room != 0) & ~gap),
            bus.stb.eq(bus.cyc),
            bus.we.eq(1),
            bus.adr.eq(buf_adr),
            bus.dat_w.eq(word_data),
            bus.sel.eq(Cat(*[(word_count > i) & (~room_below_4 | (room[:2] > i)) for i in range(4)])),
            bus.cti.eq(Mux(more, wishbone.CTI_BURST_INCREMENTING, wishbone.CTI_BURST_END)),
            pop.eq(data_fifo.readable & ((room == 0) | (bus.stb & (bus.ack | bus.err)))),
            data_fifo.re.eq(pop),
            If(pop,
                NextValue(buf_adr, buf_adr + 1),
                NextValue(room, room_after),
                If(short, NextValue(overflow, 1)),
                If(word_last, NextState("FINISH"))
            )
        )
        keep = Signal()
        fsm.act("FINISH",
            keep.eq(desc_valid & ~aborted & ~(status_out.frame_error & self.drop_errors)),
            If(status_fifo.readable,
                If(keep,
                    NextState("WRITE_WORD3")
                ).Else(
                    status_fifo.re.eq(1),
                    # A descriptor whose buffer received a dropped frame is fetched again.
                    NextValue(desc_valid, 0),
                    increment["dropped_error"].eq(~aborted & status_out.frame_error & self.drop_errors),
                    increment["dropped_empty"].eq(~aborted & ~(status_out.frame_error & self.drop_errors)),
                    NextState("IDLE")
                )
            )
        )
        fsm.act("WRITE_WORD3",
            bus.cyc.eq(1),
            bus.stb.eq(1),
            bus.we.eq(1),
            bus.adr.eq(desc_adr | 3),
            bus.dat_w.eq(word3),
            bus.sel.eq(0b1111),
            bus.cti.eq(wishbone.CTI_BURST_NONE),
            If(bus.ack | bus.err, NextState("WRITE_WORD2"))
        )
        fsm.act("WRITE_WORD2",
            bus.cyc.eq(1),
            bus.stb.eq(1),
            bus.we.eq(1),
            bus.adr.eq(desc_adr | 2),
            bus.dat_w.eq(word2),
            bus.sel.eq(0b1111),
            bus.cti.eq(wishbone.CTI_BURST_NONE),
            If(bus.ack | bus.err,
                status_fifo.re.eq(1),
                NextValue(desc_valid, 0),
                NextValue(self.head, Mux(head_next == self.size, 0, head_next)),
                handed_back.eq(1),
                NextState("IDLE")
            )
        )
