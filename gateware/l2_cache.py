#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A write-back, direct-mapped cache between the SoC bus and a wider memory port (main RAM in
SDRAM), with its tag compare registered.

Why not LiteX's `wishbone.Cache`: it compares the tag in the cycle its tag block RAM answers and
acks from that compare. On ECP5 a DP16KD without output register takes 5.6 ns clock-to-out; the
compare, the ack, the bus arbiter and the next request's address into the data RAM made a 16 ns
path, 62 MHz on the Colorlight i5 (platforms/colorlight_i5.py). Here the compare ends in a
flip-flop and the ack leaves one: a hit takes one cycle more (3 cycles: request seen, tags read
and compared, ack), and no path runs from a block RAM's output through the ack.

`master`: the 32-bit (word-addressed) wishbone interface the SoC bus drives. `slave`: a
word-addressed wishbone interface `line_words` times as wide (one cache line per access), e.g.
to LiteDRAM's LiteDRAMWishbone2Native. Word i of a line is bits [32 i, 32 i + 32) of the slave's
data. A tag entry holds a valid bit, so the cache needs no flush after reset.
"""

from migen import Array, Cat, FSM, If, Memory, Mux, NextState, NextValue, Record, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone


def _log2(n):
    bits = n.bit_length() - 1
    if n <= 0 or (1 << bits) != n:
        raise ValueError(f"{n} is not a power of 2")
    return bits


class L2Cache(LiteXModule):
    def __init__(self, size, master, line_words=4):
        """size: data capacity in bytes (a power of 2)."""
        word_bits = len(master.dat_w)
        self.master = master
        self.slave  = slave = wishbone.Interface(data_width=word_bits * line_words, address_width=32,
                                                 addressing="word")
        self.lines  = lines = size // (word_bits // 8 * line_words)

        # Address split (word address): tag | line | offset in line.
        offset_bits = _log2(line_words)
        line_bits   = _log2(lines)
        tag_bits    = len(master.adr) - offset_bits - line_bits
        adr_offset  = master.adr[:offset_bits]
        adr_line    = master.adr[offset_bits:offset_bits + line_bits]
        adr_tag     = master.adr[offset_bits + line_bits:]

        # # #

        # The line being evicted or refilled, held: a master that gives up (drops cyc) must not
        # move the memories' address under a line transfer.
        line = Signal(line_bits)
        tag  = Signal(tag_bits)
        transfer = Signal()

        # Memories: read continuously at the master's line; they answer one cycle later.
        data_mem  = Memory(len(slave.dat_r), lines)
        data_port = data_mem.get_port(write_capable=True, we_granularity=8)
        tag_layout = [("tag", tag_bits), ("dirty", 1), ("valid", 1)]
        tag_mem   = Memory(sum(width for _, width in tag_layout), lines)
        tag_port  = tag_mem.get_port(write_capable=True)
        self.specials += data_mem, data_port, tag_mem, tag_port
        tag_read  = Record(tag_layout)
        tag_write = Record(tag_layout)
        self.comb += [
            data_port.adr.eq(Mux(transfer, line, adr_line)),
            tag_port.adr.eq(Mux(transfer, line, adr_line)),
            tag_read.raw_bits().eq(tag_port.dat_r),
            tag_port.dat_w.eq(tag_write.raw_bits()),
            # Every tag write (a write hit, a refill) is for the line the lookup registered: the
            # tag RAM's write data leaves flip-flops, not the bus arbiter's address mux.
            tag_write.tag.eq(tag),
            tag_write.valid.eq(1),
        ]

        # The lookup's result, registered: no block RAM output reaches the ack.
        hit   = Signal()
        dirty = Signal()
        victim_tag = Signal(tag_bits)
        # The victim line, registered: a line-wide memory behind a narrower port (LiteDRAM's
        # 128->32-bit converter) reads it word by word through a mux, and from the block RAM's
        # output that path into the SDRAM's DQ output register took 13.5 ns on the Colorlight i5.
        # The data RAM answers the lookup's address in DECIDE: the line is taken there, in no
        # extra cycle.
        victim_data = Signal(len(slave.dat_w))

        # The master's word of the line (reads) and its byte enables within the line (writes).
        # A write hit writes in DECIDE what the lookup registered (the master holds its request
        # until the ack): the data RAM's write port is not fed from the bus arbiter's muxes.
        words_r = [data_port.dat_r[word_bits * i:word_bits * (i + 1)] for i in range(line_words)]
        self.comb += master.dat_r.eq(Array(words_r)[adr_offset])
        write_data   = Signal(word_bits)
        write_sel    = Signal(len(master.sel))
        write_offset = Signal(offset_bits)
        bytes_per_word = word_bits // 8
        write_word = [data_port.we[bytes_per_word * i:bytes_per_word * (i + 1)].eq(
                          Mux(write_offset == i, write_sel, 0)) for i in range(line_words)]

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(master.cyc & master.stb, NextState("LOOKUP"))
        )
        fsm.act("LOOKUP",
            NextValue(hit, tag_read.valid & (tag_read.tag == adr_tag)),
            NextValue(dirty, tag_read.valid & tag_read.dirty),
            NextValue(victim_tag, tag_read.tag),
            NextValue(line, adr_line),
            NextValue(tag, adr_tag),
            NextValue(write_data, master.dat_w),
            NextValue(write_sel, master.sel),
            NextValue(write_offset, adr_offset),
            NextState("DECIDE")
        )
        fsm.act("DECIDE",
            NextValue(victim_data, data_port.dat_r),
            If(~(master.cyc & master.stb),
                NextState("IDLE")           # The master gave up: nothing to answer.
            ).Elif(hit,
                master.ack.eq(1),
                If(master.we,
                    data_port.dat_w.eq(Cat(*([write_data] * line_words))),
                    *write_word,
                    tag_write.dirty.eq(1),
                    tag_port.we.eq(1),
                ),
                NextState("IDLE")
            ).Elif(dirty,
                NextState("EVICT")
            ).Else(
                NextState("REFILL")
            )
        )
        fsm.act("EVICT",
            transfer.eq(1),
            slave.cyc.eq(1),
            slave.stb.eq(1),
            slave.we.eq(1),
            slave.sel.eq(2**len(slave.sel) - 1),
            slave.adr.eq(Cat(line, victim_tag)),
            slave.dat_w.eq(victim_data),
            If(slave.ack, NextState("REFILL"))
        )
        fsm.act("REFILL",
            transfer.eq(1),
            slave.cyc.eq(1),
            slave.stb.eq(1),
            slave.sel.eq(2**len(slave.sel) - 1),
            slave.adr.eq(Cat(line, tag)),
            If(slave.ack,
                data_port.dat_w.eq(slave.dat_r),
                data_port.we.eq(2**len(data_port.we) - 1),
                tag_port.we.eq(1),
                # Back through IDLE: the memories then read the new line before the lookup.
                NextState("IDLE")
            )
        )
