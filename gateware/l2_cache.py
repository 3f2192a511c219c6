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

Snoop ports (`add_snoop_port()`, gateware/sdram_dma.py) keep DMA masters that reach the SDRAM past
the cache coherent with it, a block of `SNOOP_BLOCK_LINES` lines at a time: before such a master
touches a block, the cache writes back the block's dirty lines and, for a master that will write,
invalidates them (a master that only reads leaves them valid and clean). While a writing master
`protect`s its blocks (its writes to them are not all accepted by LiteDRAM yet), a CPU miss on a
line of them waits instead of refilling the line: a refill read that LiteDRAM took before the
master's write would put the old data back in the cache. Every refill is announced to the ports
(`refilled`), so that a master knows when a block it invalidated holds cached lines again. Snoops
take the cache between CPU accesses, taking turns with a waiting CPU access.
"""

from functools import reduce
from operator import or_

from migen import Array, Case, Cat, FSM, If, Memory, Mux, NextState, NextValue, Record, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone


def log2_exact(n):
    bits = n.bit_length() - 1
    if n <= 0 or (1 << bits) != n:
        raise ValueError(f"{n} is not a power of 2")
    return bits


SNOOP_BLOCK_LINES = 4   # 64 bytes with 128-bit lines: what one snoop request covers


class SnoopPort:
    """One DMA master's link with the cache.

    Requests: `valid` (held until `done`) asks for `block` (line address // SNOOP_BLOCK_LINES) to
    be written back, and invalidated too when `write` is 1; `done` pulses when it is.

    Protection: while `protect` is 1, a CPU miss on a line of the blocks `protect_first` to
    `protect_last` (counting up, wrapping) waits instead of refilling it: the master has writes to
    them that the SDRAM controller has not accepted yet, or is about to.

    Refills: `refilled` pulses when the cache commits to bringing a line of `refilled_block` in
    (a CPU miss), so that a master forgets a block it had snooped for writing."""
    def __init__(self, block_bits):
        self.valid   = Signal()
        self.block   = Signal(block_bits)
        self.write   = Signal()
        self.done    = Signal()
        self.protect       = Signal()
        self.protect_first = Signal(block_bits)
        self.protect_last  = Signal(block_bits)
        self.refilled       = Signal()
        self.refilled_block = Signal(block_bits)


class L2Cache(LiteXModule):
    def __init__(self, size, master, line_words=4):
        """size: data capacity in bytes (a power of 2)."""
        word_bits = len(master.dat_w)
        self.master = master
        self.slave  = slave = wishbone.Interface(data_width=word_bits * line_words, address_width=32,
                                                 addressing="word")
        self.lines  = lines = size // (word_bits // 8 * line_words)
        self.line_words = line_words
        self.snoop_ports = []
        if lines % SNOOP_BLOCK_LINES:
            raise ValueError(f"{lines} lines: not a whole number of {SNOOP_BLOCK_LINES}-line snoop blocks")

    @property
    def snoop_block_bits(self):
        """Width of a snoop block's address (a word address without its line and block offsets)."""
        return len(self.master.adr) - log2_exact(self.line_words) - log2_exact(SNOOP_BLOCK_LINES)

    def add_snoop_port(self):
        """A SnoopPort for one DMA master (before the SoC is finalized)."""
        port = SnoopPort(self.snoop_block_bits)
        self.snoop_ports.append(port)
        return port

    def do_finalize(self):
        master, slave, lines, line_words = self.master, self.slave, self.lines, self.line_words
        word_bits = len(master.dat_w)

        # Address split (word address): tag | line | offset in line.
        offset_bits = log2_exact(line_words)
        line_bits   = log2_exact(lines)
        tag_bits    = len(master.adr) - offset_bits - line_bits
        adr_offset  = master.adr[:offset_bits]
        adr_line    = master.adr[offset_bits:offset_bits + line_bits]
        adr_tag     = master.adr[offset_bits + line_bits:]

        # # #

        # The line being evicted or refilled, held: a master that gives up (drops cyc) must not
        # move the memories' address under a line transfer.
        line = Signal(line_bits)
        tag  = Signal(tag_bits)
        transfer = Signal()     # The memories follow `line` (a line transfer, a snoop).
        invalidate = Signal()   # A tag write clears `valid` (a snoop's, for a writing master).

        # Memories: read continuously at the master's line; they answer one cycle later.
        data_mem  = Memory(len(slave.dat_r), lines)
        data_port = data_mem.get_port(write_capable=True, we_granularity=8)
        tag_layout = [("tag", tag_bits), ("dirty", 1), ("valid", 1)]
        tag_mem   = Memory(sum(width for _, width in tag_layout), lines)
        tag_port  = tag_mem.get_port(write_capable=True)
        self.specials += data_mem, data_port, tag_mem, tag_port
        tag_read  = Record(tag_layout)
        tag_write = Record(tag_layout)
        walk_on    = Signal()   # A snoop's walk reads the next line now (no tag write this cycle).
        line_after = Signal(line_bits)
        memory_line = Signal(line_bits)
        self.comb += [
            line_after.eq(line + 1),
            memory_line.eq(Mux(transfer, Mux(walk_on, line_after, line), adr_line)),
            data_port.adr.eq(memory_line),
            tag_port.adr.eq(memory_line),
            tag_read.raw_bits().eq(tag_port.dat_r),
            tag_port.dat_w.eq(tag_write.raw_bits()),
            # Every tag write (a write hit, a refill) is for the line the lookup registered: the
            # tag RAM's write data leaves flip-flops, not the bus arbiter's address mux.
            tag_write.tag.eq(tag),
            tag_write.valid.eq(~invalidate),
        ]
        # The rest of both RAMs' write data follows the FSM's state and registers alone (below),
        # never the bus requests or acks that decide whether a write happens: those reach only the
        # write enables. From the bus arbiter's grant through the address decode into the data
        # RAM's write data select was the Colorlight i5's worst path at 75 MHz (13.7 ns, seed 2).

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

        # Snoops: the waiting ports are served in turn; the block is held in `line`/`tag` (the
        # block's first line) while its lines are walked one by one.
        ports = self.snoop_ports
        snoop_wanted = Signal()
        snoop_index  = Signal(max=max(len(ports), 2))
        snoop_write  = Signal()
        snoop_last   = Signal()          # The walk is at the block's last line.
        block_bits   = log2_exact(SNOOP_BLOCK_LINES)
        self.comb += snoop_last.eq(line[:block_bits] == SNOOP_BLOCK_LINES - 1)
        def start(i):
            first_line = Cat(Signal(block_bits), ports[i].block)
            return [
                NextValue(snoop_index, i),
                NextValue(snoop_write, ports[i].write),
                NextValue(line, first_line[:line_bits]),
                NextValue(tag, first_line[line_bits:]),
                NextState("SNOOP_READ"),
            ]

        def priority(order):
            """The first waiting port in `order` starts its snoop."""
            chain = None
            for i in reversed(order):
                step = If(ports[i].valid, *start(i))
                chain = step if chain is None else step.Else(chain)
            return chain

        # Round robin: the port after the one served last goes first.
        n = len(ports)
        start_snoop = [Case(snoop_index, {last: priority([(last + 1 + k) % n for k in range(n)])
                                          for last in range(n)})] if ports else []
        self.comb += snoop_wanted.eq(reduce(or_, [port.valid for port in ports], 0))
        snoop_done = Signal()
        self.comb += [port.done.eq(snoop_done & (snoop_index == i)) for i, port in enumerate(ports)]
        # A CPU miss on a line of a block a writing master protects: the lookup registered it.
        # Its distance from the first protected block, modulo the block count, against the span.
        lookup_block = Signal(self.snoop_block_bits)
        self.comb += lookup_block.eq(Cat(line, tag)[block_bits:])
        protected = Signal()
        port_protects = []
        for port in ports:
            distance = Signal(len(port.block))
            span     = Signal(len(port.block))
            self.comb += [
                distance.eq(lookup_block - port.protect_first),
                span.eq(port.protect_last - port.protect_first),
            ]
            port_protects.append(port.protect & (distance <= span))
        self.comb += protected.eq(reduce(or_, port_protects, 0))
        # The refill a miss commits to, told to every port.
        refilling = Signal()
        for port in ports:
            self.comb += [
                port.refilled.eq(refilling),
                port.refilled_block.eq(lookup_block),
            ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        # Turns: after a snoop, a waiting CPU access goes first (the DMA masters snoop ahead of
        # their data, so a snoop can wait one CPU access; the CPU cannot wait out a stream of them).
        cpu_turn = Signal()
        self.sync += If(snoop_done, cpu_turn.eq(1)).Elif(fsm.ongoing("LOOKUP"), cpu_turn.eq(0))
        fsm.act("IDLE",
            If(snoop_wanted & ~(cpu_turn & master.cyc & master.stb),
                *start_snoop
            ).Elif(master.cyc & master.stb,
                NextState("LOOKUP")
            )
        )
        # The walk: the memories read `line` (SNOOP_READ), the result is registered (SNOOP_LOOKUP),
        # then the line is written back if dirty and its tag rewritten (SNOOP_DECIDE). A line that
        # needs neither (not cached, or clean under a read snoop) takes 2 cycles, not 3: DECIDE
        # reads the next one.
        fsm.act("SNOOP_READ",
            transfer.eq(1),
            NextState("SNOOP_LOOKUP")
        )
        fsm.act("SNOOP_LOOKUP",
            transfer.eq(1),
            NextValue(hit, tag_read.valid & (tag_read.tag == tag)),
            NextValue(dirty, tag_read.valid & tag_read.dirty),
            NextValue(victim_tag, tag_read.tag),
            NextValue(victim_data, data_port.dat_r),
            NextState("SNOOP_DECIDE")
        )
        next_line = If(snoop_last,
                snoop_done.eq(1),
                NextState("IDLE")
            ).Else(
                NextValue(line, line_after),
                NextState("SNOOP_READ")
            )
        fsm.act("SNOOP_DECIDE",
            transfer.eq(1),
            If(hit & dirty,
                NextState("SNOOP_WRITE_BACK")
            ).Elif(hit & snoop_write,
                tag_port.we.eq(1),
                next_line
            ).Elif(snoop_last,
                snoop_done.eq(1),
                NextState("IDLE")
            ).Else(
                # Nothing to do here: the memories read the next line in this cycle.
                walk_on.eq(1),
                NextValue(line, line_after),
                NextState("SNOOP_LOOKUP")
            )
        )
        def write_line(line_tag):
            """Write the registered victim line to main RAM at `line` with tag `line_tag`."""
            return [
                transfer.eq(1),
                slave.cyc.eq(1),
                slave.stb.eq(1),
                slave.we.eq(1),
                slave.sel.eq(2**len(slave.sel) - 1),
                slave.adr.eq(Cat(line, line_tag)),
                slave.dat_w.eq(victim_data),
            ]

        fsm.act("SNOOP_WRITE_BACK",
            *write_line(tag),
            If(slave.ack,
                tag_port.we.eq(1),              # invalid for a writing master, else valid and clean
                next_line
            )
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
            ).Elif(~hit & protected,
                NextState("IDLE")           # A DMA write to this block is under way: ask again.
            ).Elif(hit,
                master.ack.eq(1),
                If(master.we,
                    *write_word,
                    tag_port.we.eq(1),
                ),
                NextState("IDLE")
            ).Else(
                refilling.eq(1),
                If(dirty, NextState("EVICT")).Else(NextState("REFILL"))
            )
        )
        fsm.act("EVICT",
            *write_line(victim_tag),
            If(slave.ack, NextState("REFILL"))
        )
        fsm.act("REFILL",
            transfer.eq(1),
            slave.cyc.eq(1),
            slave.stb.eq(1),
            slave.sel.eq(2**len(slave.sel) - 1),
            slave.adr.eq(Cat(line, tag)),
            If(slave.ack,
                data_port.we.eq(2**len(data_port.we) - 1),
                tag_port.we.eq(1),
                # Back through IDLE: the memories then read the new line before the lookup.
                NextState("IDLE")
            )
        )
        # The RAMs' write data by state: a refill writes the line from main RAM (clean); DECIDE's
        # only writes are a write hit's (the word the lookup registered, in every word of the
        # line: the byte enables pick it; the line dirty); a snoop's tag writes clear `valid` for
        # a writing master (SNOOP_DECIDE: a clean hit; SNOOP_WRITE_BACK: after the write back).
        self.comb += [
            data_port.dat_w.eq(Mux(fsm.ongoing("REFILL"), slave.dat_r, Cat(*([write_data] * line_words)))),
            tag_write.dirty.eq(fsm.ongoing("DECIDE")),
            invalidate.eq(snoop_write & (fsm.ongoing("SNOOP_DECIDE") | fsm.ongoing("SNOOP_WRITE_BACK"))),
        ]
