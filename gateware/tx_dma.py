#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""TX DMA engine of the offload NIC: walks the TX descriptor ring in main RAM (docs/nic.md) and
streams each chain of descriptors out as one frame, with the chain's offload parameters.

Two halves, decoupled by a small word FIFO:

- Fetch (wishbone master): reads each descriptor (words 0..2, one 3-beat incrementing burst), then
  its buffer as whole 32-bit words in bursts of up to `burst_length` words, started only when the
  FIFO has room for a whole burst (a registered slave acknowledges the beat after a cti=0b010 beat
  whatever the master does, so a burst cannot be stopped short). Each word enters the FIFO with the
  byte lanes [lo, hi] it contributes; `head` advances once a descriptor's buffer has been read.
- Pack: concatenates the lanes of successive words into full 4-byte beats on `source`. Up to four
  bytes are held back until the next byte or the end of the chain is known, so that the last beat
  of a frame is always marked, even when a chain ends with a bad, empty descriptor.

Per-frame parameters (`tx_offload_layout`) come from the chain's first descriptor: `hdr_len` is its
length, saturated at 255 (TSO drops templates longer than 128 bytes); `mss` is its word 2.

Bad descriptors never stop the engine; each is counted (`errors`, and a pulse on `error` and on
the pulse of its kind):

- `zero_length_error`: a descriptor of length 0 is skipped. If it has `eop`, it still ends the
  chain; a chain of nothing but empty descriptors sends nothing.
- `oversize_error`: a chain without `tso` that is longer than `max_frame_length` (1522: Ethernet
  header, 802.1Q tag, 1500 bytes of payload, no FCS) is cut there. The frame so far is ended, with
  `error` set on its last byte so that the MAC side can abort it, and the rest of the chain is
  skipped without reading its buffers (its descriptors are still read, to find `eop`).
- `abort_error`: `enable` was cleared in the middle of a chain whose next descriptor is not there
  (head == tail): the frame is ended as for `oversize_error`. With descriptors available, the chain
  is finished first: `enable` = 0 stops the engine at the next chain boundary, then head goes to 0.
- `ring_error` (level, not counted): tail >= size, or size > 4096; the engine does not start
  chains then.

`done` pulses once per chain, when head moves past its `eop` descriptor (for interrupt moderation
in nic.py). `base` and `size` may change only while `enable` is 0.

Throughput, measured by cocotb_tests/test_tx_dma.py against a RAM that answers like LiteX's SRAM
with bursting (an ack one cycle after the request, then one per cycle): 2.2 bytes/cycle for 60-byte
frames in one descriptor, 3.1 for 1514-byte frames; 1.6 and 3.0 in 2 and 3 descriptors. A
descriptor costs about 7 cycles, a burst of 8 words 10.
"""

from litex.gen import *

from litex.soc.interconnect import stream, wishbone
from litex.soc.interconnect.stream import EndpointDescription

from .tso import tx_offload_layout, tx_offload_description
from .rx_dma import ring_index_bits, ring_size_bits, ring_error

# Layouts ------------------------------------------------------------------------------------------

descriptor_length_bits = 16
max_ethernet_frame     = 1522 # No FCS: 14 + 4 (802.1Q) + 1500.

# A buffer word between fetch and pack: its bytes in lanes lo..hi, or none (`empty`: the end of a
# chain whose bytes were all sent already); stream `last` ends the chain's frame.
tx_dma_word_description = EndpointDescription([
    ("data",  32),
    ("lo",     2),
    ("hi",     2),
    ("empty",  1),
    ("error",  1), # The frame was cut: flag its last byte.
])

# TX DMA -------------------------------------------------------------------------------------------

class TxDMA(LiteXModule):
    def __init__(self, fifo_depth=16, burst_length=8, max_frame_length=max_ethernet_frame):
        assert burst_length <= fifo_depth and burst_length <= 16 and burst_length & (burst_length - 1) == 0
        self.bus    = bus    = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.source = source = stream.Endpoint(tx_offload_description(32))

        # Ring registers (CSRs in nic.py).
        self.base   = Signal(32)
        self.size   = Signal(ring_size_bits)
        self.tail   = Signal(ring_index_bits)
        self.enable = Signal()
        self.head   = Signal(ring_index_bits)

        # Events.
        self.done              = Signal()
        self.error             = Signal()
        self.errors            = Signal(16)
        self.zero_length_error = Signal()
        self.oversize_error    = Signal()
        self.abort_error       = Signal()
        self.ring_error        = Signal()

        # # #

        self.fifo = fifo = stream.SyncFIFO(tx_dma_word_description, fifo_depth)

        # Parameters of the next chain, from fetch to pack (`params_full` until pack takes them).
        next_params = Record(tx_offload_layout)
        params_full = Signal()
        params_take = Signal()

        self.fetch_path(fifo.sink, next_params, params_full, params_take, burst_length,
            max_frame_length)
        self.pack_path(fifo.source, next_params, params_take)

        self.sync += [
            If(params_take, params_full.eq(0)),
            If(self.fetch_params, params_full.eq(1)),
            If(self.error, self.errors.eq(self.errors + 1)),
        ]
        self.comb += self.error.eq(self.zero_length_error | self.oversize_error | self.abort_error)

    def fetch_path(self, sink, next_params, params_full, params_take, burst_length,
            max_frame_length):
        bus = self.bus
        self.fetch_params = Signal() # This cycle's descriptor beat starts a chain's parameters.

        # Descriptor fields.
        beat        = Signal(2)      # Descriptor word being read.
        data_adr    = Signal(30)     # Word address of the next buffer word.
        lo          = Signal(2)      # Lane of the buffer's first byte.
        length      = Signal(descriptor_length_bits)
        eop         = Signal()
        # Chain state.
        in_chain    = Signal()       # A chain's first descriptor was read, its `eop` not yet.
        skipping    = Signal()       # The chain's frame was cut: read descriptors only.
        budget      = Signal(max(max_frame_length, 1).bit_length()) # Bytes left before the cut.
        # Buffer read state.
        words_left  = Signal(descriptor_length_bits)
        end_lane    = Signal(2)
        first_word  = Signal()
        cut         = Signal()       # This descriptor's buffer is cut short: it ends the frame.
        burst_left  = Signal(max=burst_length + 1)
        bursting    = Signal()
        term_error  = Signal()
        aborting    = Signal()

        ring_ready = Signal()
        self.comb += [
            self.ring_error.eq(self.enable & ring_error(self.size, self.tail)),
            ring_ready.eq((self.head != self.tail) & ~ring_error(self.size, self.tail)),
        ]

        # Descriptor decode (SETUP): the bytes to read, cut at the frame budget.
        budget_now = Signal(len(budget))
        cut_now    = Signal()
        take_bytes = Signal(descriptor_length_bits)
        self.comb += [
            budget_now.eq(Mux(in_chain, budget, max_frame_length)),
            cut_now.eq(~skipping & ~next_params.tso & (length > budget_now)),
            take_bytes.eq(Mux(cut_now, budget_now, length)),
        ]

        # Bus: reads only, whole words.
        desc_adr = Signal(30)
        fsm_descriptor = Signal()
        self.comb += [
            desc_adr.eq(Cat(beat, self.base[4:] + self.head)), # Descriptors are 16-byte aligned.
            bus.adr.eq(Mux(fsm_descriptor, desc_adr, data_adr)),
            bus.sel.eq(0b1111),
            bus.we.eq(0),
            bus.bte.eq(0),
        ]

        head_next = Signal(ring_index_bits)
        self.comb += head_next.eq(Mux(self.head + 1 == self.size, 0, self.head + 1))

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(~self.enable & ~in_chain,
                NextValue(self.head, 0)
            ).Elif(~self.enable & (self.head == self.tail),
                # Disabled in mid-chain and the chain's next descriptor is not there: end it.
                self.abort_error.eq(1),
                NextValue(term_error, 1),
                NextValue(aborting, 1),
                If(skipping,
                    NextState("END_CHAIN")
                ).Else(
                    NextState("TERMINATE")
                )
            ).Elif(ring_ready & (in_chain | ~params_full),
                NextState("DESCRIPTOR")
            )
        )
        fsm.act("DESCRIPTOR",
            fsm_descriptor.eq(1),
            bus.cyc.eq(1),
            bus.stb.eq(1),
            bus.cti.eq(Mux(beat == 2, wishbone.CTI_BURST_END, wishbone.CTI_BURST_INCREMENTING)),
            If(bus.ack,
                NextValue(beat, beat + 1),
                Case(beat, {
                    0: [
                        NextValue(data_adr, bus.dat_r[2:]),
                        NextValue(lo, bus.dat_r[:2]),
                    ],
                    1: [
                        NextValue(length, bus.dat_r[:16]),
                        NextValue(eop, bus.dat_r[16]),
                        If(~in_chain,
                            self.fetch_params.eq(1),
                            NextValue(next_params.ip_csum, bus.dat_r[17]),
                            NextValue(next_params.l4_csum, bus.dat_r[18]),
                            NextValue(next_params.tso, bus.dat_r[19]),
                            NextValue(next_params.hdr_len,
                                Mux(bus.dat_r[8:16] != 0, 255, bus.dat_r[:8])),
                        )
                    ],
                    "default": [
                        If(~in_chain, NextValue(next_params.mss, bus.dat_r[:16])),
                        NextValue(beat, 0),
                        NextState("SETUP"),
                    ],
                })
            )
        )
        fsm.act("SETUP",
            self.zero_length_error.eq(length == 0),
            self.oversize_error.eq(cut_now),
            NextValue(in_chain, 1),
            NextValue(budget, budget_now - take_bytes),
            NextValue(cut, cut_now),
            NextValue(words_left, (take_bytes + (lo + 3))[2:]),
            NextValue(end_lane, lo + take_bytes[:2] - 1),
            NextValue(first_word, 1),
            NextValue(term_error, cut_now),
            If(skipping,
                NextState("NEXT")
            ).Elif(take_bytes != 0,
                NextState("DATA")
            ).Elif(eop | cut_now,
                NextState("TERMINATE")
            ).Else(
                NextState("NEXT")
            )
        )
        last_word = Signal()
        self.comb += last_word.eq(words_left == 1)
        fsm.act("DATA",
            bus.cyc.eq(bursting),
            bus.stb.eq(bursting),
            bus.cti.eq(Mux(burst_left == 1, wishbone.CTI_BURST_END, wishbone.CTI_BURST_INCREMENTING)),
            If(~bursting,
                # Room in the FIFO for a whole burst: acks cannot be refused once promised.
                If(self.fifo.level <= self.fifo.depth - burst_length,
                    NextValue(bursting, 1),
                    NextValue(burst_left, Mux(words_left[log2_int(burst_length):] != 0, burst_length, words_left)),
                )
            ).Elif(bus.ack,
                sink.valid.eq(1),
                sink.data.eq(bus.dat_r),
                sink.lo.eq(Mux(first_word, lo, 0)),
                sink.hi.eq(Mux(last_word, end_lane, 3)),
                sink.last.eq(last_word & (eop | cut)),
                sink.error.eq(cut),
                NextValue(first_word, 0),
                NextValue(data_adr, data_adr + 1),
                NextValue(words_left, words_left - 1),
                NextValue(burst_left, burst_left - 1),
                If(burst_left == 1, NextValue(bursting, 0)),
                If(last_word, NextState("NEXT"))
            )
        )
        fsm.act("TERMINATE",
            # End the frame with no more bytes: pack marks the bytes it holds back as the last.
            sink.valid.eq(1),
            sink.empty.eq(1),
            sink.last.eq(1),
            sink.error.eq(term_error),
            If(sink.ready,
                If(aborting,
                    NextState("END_CHAIN")
                ).Else(
                    NextState("NEXT")
                )
            )
        )
        fsm.act("NEXT",
            # The descriptor's buffer is read: hand it back.
            NextValue(self.head, head_next),
            If(eop,
                self.done.eq(1),
                NextState("END_CHAIN")
            ).Else(
                If(cut, NextValue(skipping, 1)),
                NextState("IDLE")
            )
        )
        fsm.act("END_CHAIN",
            NextValue(in_chain, 0),
            NextValue(skipping, 0),
            NextValue(term_error, 0),
            NextValue(aborting, 0),
            NextState("IDLE")
        )

    def pack_path(self, sink, next_params, params_take):
        source = self.source
        for name in ["data", "last_be", "error"] + [name for name, _ in tx_offload_layout]:
            getattr(source, name).reset_less = True

        held     = Signal(32, reset_less=True) # Bytes held back, in lanes 0..level-1.
        level    = Signal(3)    # 0..4.
        in_frame = Signal()     # The current frame has started on source (parameters taken).
        flush    = Signal()     # Send the held bytes as the frame's last beat.
        flush_error = Signal()

        count    = Signal(3)    # Bytes of the word on sink, 0..4.
        total    = Signal(4)    # Held + new bytes, 0..8.
        shift    = Signal(2)
        rotated  = Signal(32)   # The word rotated so that its byte `lo` is in lane `level`.
        merged   = Signal(32)   # Held bytes, then the word's.
        self.comb += [
            count.eq(Mux(sink.empty, 0, sink.hi - sink.lo + 1)),
            total.eq(level + count),
            shift.eq(sink.lo - level),
            rotated.eq(Array([sink.data] + [Cat(sink.data[8*k:], sink.data[:8*k]) for k in range(1, 4)])[shift]),
        ]
        emit_full = Signal()    # A full beat, with bytes left over.
        take      = Signal()
        for i in range(4):
            lane = slice(8*i, 8*(i + 1))
            self.comb += merged[lane].eq(Mux(level > i, held[lane], rotated[lane]))
            # What to hold back after taking a word: the word's bytes in the free lanes (all of
            # them after a full beat), loaded lane by lane (flip-flop enables, no multiplexer).
            self.sync += If(take & (emit_full | (~sink.last & (level <= i))),
                held[lane].eq(rotated[lane])
            )

        out_free  = Signal()
        emit_last = Signal()
        self.comb += [
            out_free.eq(~source.valid | source.ready),
            emit_full.eq(total > 4),
            emit_last.eq(sink.last & (total != 0)),
            take.eq(sink.valid & ~flush & (out_free | ~(emit_full | emit_last | ~in_frame))),
            sink.ready.eq(take),
            params_take.eq(take & ~in_frame),
        ]

        def one_hot(n):
            return Array(C(1 << k, 4) for k in range(4))[n[:2]]

        last_be = Signal(4)
        self.comb += last_be.eq(Mux(flush, one_hot(level - 1), one_hot(total - 1)))
        self.sync += [
            If(source.valid & source.ready, source.valid.eq(0)),
            If(flush & out_free,
                source.valid.eq(1),
                source.data.eq(merged),
                source.last.eq(1),
                source.last_be.eq(last_be),
                source.error.eq(Mux(flush_error, last_be, 0)),
                level.eq(0),
                flush.eq(0),
            ),
            If(take,
                in_frame.eq(~sink.last),
                If(~in_frame,
                    *[getattr(source, name).eq(getattr(next_params, name))
                        for name, _ in tx_offload_layout]
                ),
                If(emit_full,
                    source.valid.eq(1),
                    source.data.eq(merged),
                    source.last.eq(0),
                    source.last_be.eq(0),
                    source.error.eq(0),
                    level.eq(total - 4),
                    flush.eq(sink.last),
                    flush_error.eq(sink.error),
                ).Elif(sink.last,
                    If(total != 0,
                        source.valid.eq(1),
                        source.data.eq(merged),
                        source.last.eq(1),
                        source.last_be.eq(last_be),
                        source.error.eq(Mux(sink.error, last_be, 0)),
                    ),
                    level.eq(0),
                ).Else(
                    level.eq(total),
                )
            ),
        ]
