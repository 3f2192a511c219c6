#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A DMA master's own way to SDRAM: a LiteDRAM native port past the SoC bus and the L2 cache, kept
coherent with the cache through one of its snoop ports (gateware/l2_cache.py).

Why: on the Colorlight i5 every access of the NIC's DMA masters goes through a register slice
(single-word cycles), the bus arbiter and the L2 (3 cycles a hit, a refill on every write miss):
0.17 bytes per cycle per master beside the CPU, about the MII rate, where 1 GbE needs 1.7
(bench/README.md, memory_path). SoCs get it with `litedav-soc --nic-sdram-ports`
(soc/litedav_soc.py); the board's bitstream does not close timing with it yet
(docs/colorlight_i5.md). Here a master's main-RAM accesses become native port commands, up to
one a cycle:

- Writes are posted: a write in a burst (CTI 010 or 111) is acknowledged as soon as it is queued.
  A classic write (CTI 000: a descriptor's status word, say) is acknowledged only once every write
  queued before it and itself are accepted by LiteDRAM, after which a read by anyone is ordered
  behind them: when the master has seen that ack (and, say, moves a ring's head), the data is
  there for every other master. The CPU needs no such ack: it reaches the SDRAM through the L2,
  which refills no line of a block with writes in the queue (below).
- Reads stream: a read starts a run of commands at consecutive addresses, up to `read_ahead`
  words ahead of the master, which are handed back while the master's addresses follow them. Any
  other access (another address, a write, outside main RAM) drops the run and its words first,
  so no word read ahead outlives the master's sequence (a new buffer is reached through a
  descriptor read, which ends the run: no stale word of a buffer the CPU rewrote is handed out).
- Coherence, one snoop block (SNOOP_BLOCK_LINES lines) at a time, snooped one block ahead of the
  master so that the cache's walk overlaps the data: before the first write to a block, the L2
  writes back and invalidates the block's lines; before the first read of a block, it writes back
  its dirty lines. While the master writes, its blocks (the queued writes' and the next one) are
  `protect`ed: the CPU's misses on them wait. A block snooped for writing stays so while no CPU
  miss refills one of its lines (the L2 announces each), so a master that pauses between bursts
  needs no new snoop; a block snooped for reading is so for one run only. Reads need no
  protection: DMA reads a buffer the CPU has finished writing.
- Accesses outside main RAM (the SPI flash window, say) go through `other`, a wishbone master
  for the SoC bus, once every queued write is accepted and every read ahead dropped.
"""

from migen import C, Cat, FSM, If, Mux, NextState, NextValue, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream, wishbone

from .l2_cache import SNOOP_BLOCK_LINES, log2_exact


class SDRAMDMAPort(LiteXModule):
    def __init__(self, master, port, snoop, base, size, line_words=4, read_ahead=16, write_queue=8):
        """master: the DMA master's wishbone (32 bits, word addresses). port: a 32-bit LiteDRAM
        native port. snoop: the L2's SnoopPort for this master. base, size: main RAM's bus byte
        address and size (a power of 2, base aligned to it). line_words: the L2's line."""
        if len(port.wdata.data) != 32 or len(master.dat_w) != 32:
            raise ValueError("SDRAMDMAPort moves 32-bit words: ask the crossbar for a 32-bit port")
        size_words = size // 4
        ram_bits = log2_exact(size_words)
        if (base // 4) % size_words:
            raise ValueError(f"main RAM at 0x{base:08x} is not aligned to its size 0x{size:x}")
        self.other = other = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        block_shift = log2_exact(line_words) + log2_exact(SNOOP_BLOCK_LINES)
        ram_tag = (base // 4) >> ram_bits

        def in_ram(word_adr):
            return word_adr[ram_bits:] == ram_tag

        def block_of(word_adr):
            return word_adr[block_shift:]

        # The request, registered: every decision below, and so every ack, comes from registers,
        # not from the master's address through compares (its request takes one cycle more).
        # The beat after an acknowledged CTI 010 beat is at the next address (the master's
        # promise): it is taken in the next cycle, as a registered wishbone slave does.
        request  = Signal()
        fresh    = Signal()     # `adr`, `we`, `posted` describe the beat the master presents.
        adr      = Signal(len(master.adr))
        we       = Signal()
        posted   = Signal()
        ack      = Signal()     # The beat is acknowledged from main RAM's side.
        current_request = Signal()
        self.comb += [
            request.eq(master.cyc & master.stb),
            current_request.eq(request & fresh),
            port.cmd.last.eq(1),
            port.rdata.ready.eq(1),
        ]
        other_ack = Signal()    # `other` acknowledged the beat (OTHER state, below).
        self.sync += If(~request | other_ack,
            fresh.eq(0)
        ).Elif(~fresh,
            fresh.eq(1),
            adr.eq(master.adr),
            we.eq(master.we),
            posted.eq(master.cti != wishbone.CTI_BURST_NONE),
        ).Elif(ack,
            fresh.eq(master.cti == wishbone.CTI_BURST_INCREMENTING),
            adr.eq(adr + 1),
            posted.eq(1),
        )

        # Snooped blocks: `current` (if `have_current`) and the one after it (if `have_next`),
        # snooped for writing (`mode_write`: the L2 holds none of their lines) or for reading
        # (none of their lines is dirty in the L2). One snoop request at a time.
        block_bits   = len(snoop.block)
        current      = Signal(block_bits)
        following    = Signal(block_bits)
        have_current = Signal()
        have_next    = Signal()
        mode_write   = Signal()
        self.comb += following.eq(current + 1)

        def covered(block):
            """(block is `current` and snooped, block is `following` and snooped)"""
            return have_current & (block == current), have_next & (block == following)
        snoop_pending = Signal()
        snoop_block   = Signal(block_bits)
        snoop_write   = Signal()
        self.comb += [
            snoop.valid.eq(snoop_pending),
            snoop.block.eq(snoop_block),
            snoop.write.eq(snoop_write),
        ]
        # What the FSM asks of them this cycle.
        restart       = Signal()   # Forget both blocks; the mode becomes `restart_write`.
        restart_write = Signal()
        launch        = Signal()   # Ask the L2 for `launch_block` (only with no request pending).
        launch_block  = Signal(block_bits)
        jump          = Signal()   # ... which becomes `current` (else it is `following`).
        advance       = Signal()   # The master moved into `following`.
        done_ok = Signal()
        self.comb += done_ok.eq(snoop.done & (snoop_write == mode_write))
        self.sync += [
            If(snoop.done, snoop_pending.eq(0)),
            If(launch,
                snoop_pending.eq(1),
                snoop_block.eq(launch_block),
                snoop_write.eq(mode_write),
            ),
            If(restart,
                have_current.eq(0),
                have_next.eq(0),
                mode_write.eq(restart_write),
            ).Elif(launch & jump,
                current.eq(launch_block),
                have_current.eq(0),
                have_next.eq(0),
            ).Elif(advance,
                current.eq(following),
                have_current.eq(have_next & ~(snoop.refilled & (snoop.refilled_block == following))),
                have_next.eq(0),
            ).Else(
                If(done_ok & (snoop_block == current), have_current.eq(1)),
                If(done_ok & (snoop_block == following), have_next.eq(1)),
                If(snoop.refilled & (snoop.refilled_block == current), have_current.eq(0)),
                If(snoop.refilled & (snoop.refilled_block == following), have_next.eq(0)),
            )
        ]

        # Writes: a queue of commands, and the data of the accepted ones until LiteDRAM takes it.
        self.write_fifo = write_fifo = stream.SyncFIFO([("adr", ram_bits), ("data", 32), ("sel", 4)],
                                                       write_queue)
        self.wdata_fifo = wdata_fifo = stream.SyncFIFO([("data", 32), ("we", 4)], 16)
        if write_queue > SNOOP_BLOCK_LINES * line_words // 2:
            raise ValueError(f"a write queue of {write_queue} words: at most half a snoop block")
        holding = Signal()      # A classic write is queued; its ack waits for the queue to drain.
        owning  = Signal()      # Protecting: set the cycle before the first write is taken.
        queued_block = Signal(block_bits)
        self.comb += [
            write_fifo.sink.adr.eq(adr[:ram_bits]),
            write_fifo.sink.data.eq(master.dat_w),
            write_fifo.sink.sel.eq(master.sel),
            wdata_fifo.sink.data.eq(write_fifo.source.data),
            wdata_fifo.sink.we.eq(write_fifo.source.sel),
            port.wdata.valid.eq(wdata_fifo.source.valid),
            port.wdata.data.eq(wdata_fifo.source.data),
            port.wdata.we.eq(wdata_fifo.source.we),
            wdata_fifo.source.ready.eq(port.wdata.ready),
            queued_block.eq(block_of(Cat(write_fifo.source.adr, C(ram_tag, len(master.adr) - ram_bits)))),
            # The queue holds the latest writes, at most half a block: they are in `current` and
            # perhaps the block before it.
            snoop.protect.eq(owning),
            snoop.protect_first.eq(Mux(write_fifo.source.valid, queued_block, current)),
            snoop.protect_last.eq(following),
        ]
        # The block after `current` may be snooped ahead of the master.
        ahead_free = Signal()
        self.comb += ahead_free.eq(have_current & ~have_next & ~snoop_pending)
        writes_drained = Signal()
        self.comb += writes_drained.eq(~write_fifo.source.valid & ~holding)

        # Reads: commands issued up to `read_ahead` words ahead; their data in order.
        self.read_fifo = read_fifo = stream.SyncFIFO([("data", 32)], read_ahead)
        issue_adr   = Signal(len(master.adr))
        deliver_adr = Signal(len(master.adr))
        outstanding = Signal(max=read_ahead + 1)    # issued, not yet handed back or dropped
        issuing     = Signal()
        issued      = Signal()
        popped      = Signal()
        self.comb += [
            read_fifo.sink.valid.eq(port.rdata.valid),
            read_fifo.sink.data.eq(port.rdata.data),
        ]
        self.sync += If(issued & ~popped,
            outstanding.eq(outstanding + 1)
        ).Elif(popped & ~issued,
            outstanding.eq(outstanding - 1)
        )

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(current_request,
                If(~in_ram(adr),
                    NextState("OTHER")
                ).Elif(we,
                    # Blocks snooped for reading serve no write.
                    restart.eq(~mode_write),
                    restart_write.eq(1),
                    NextState("WRITE")
                ).Else(
                    # A read run starts from fresh snoops.
                    restart.eq(1),
                    restart_write.eq(0),
                    NextValue(issue_adr, adr),
                    NextValue(deliver_adr, adr),
                    NextValue(issuing, 1),
                    NextState("READ")
                )
            )
        )

        write_block = Signal(block_bits)
        write_request = Signal()
        in_current = Signal()
        in_next    = Signal()
        # No write for the block before `current` is queued, as of the last cycle (registered: off
        # the path from the queue's RAM to the ack). Writes leave the queue in order, so it stays
        # true until `current` moves, and it is false in the cycle after a move.
        queue_in_current = Signal()
        self.sync += queue_in_current.eq(~advance & ~(launch & jump) &
                                         (~write_fifo.source.valid | (queued_block == current)))
        take_write = Signal()
        write_in_current, write_in_following = covered(write_block)
        self.comb += [
            write_block.eq(block_of(adr)),
            write_request.eq(current_request & we & in_ram(adr)),
            in_current.eq(write_in_current),
            # Moving on leaves no write queued for the block before `current`.
            in_next.eq(write_in_following & queue_in_current),
        ]
        self.sync += owning.eq(fsm.ongoing("WRITE") & (write_request | write_fifo.source.valid))
        write_jump = Signal()
        self.comb += write_jump.eq(~holding & write_request & owning & ~in_current & ~in_next &
                                   ~snoop_pending & ~write_fifo.source.valid)
        fsm.act("WRITE",
            port.cmd.valid.eq(write_fifo.source.valid & wdata_fifo.sink.ready),
            port.cmd.we.eq(1),
            port.cmd.addr.eq(write_fifo.source.adr),
            write_fifo.source.ready.eq(port.cmd.ready & wdata_fifo.sink.ready),
            wdata_fifo.sink.valid.eq(write_fifo.source.valid & port.cmd.ready & wdata_fifo.sink.ready),
            If(holding,
                # The classic write is queued: acknowledged once all are accepted.
                If(~write_fifo.source.valid,
                    ack.eq(1),
                    NextValue(holding, 0)
                )
            ).Elif(write_request,
                If(owning & (in_current | in_next),
                    take_write.eq(write_fifo.sink.ready),
                    ack.eq(take_write & posted),
                    advance.eq(take_write & ~in_current),
                    If(take_write & ~posted, NextValue(holding, 1))
                ).Elif(write_jump,
                    # Elsewhere: snooped once the queue is empty (the protected blocks stay
                    # contiguous).
                    launch.eq(1),
                    jump.eq(1),
                    launch_block.eq(write_block),
                )
            ).Elif(writes_drained & (current_request | ~master.cyc),
                NextState("IDLE")       # Something else, or the master is done.
            ),
            # Ahead of the master: the block after `current`.
            If(owning & ahead_free & ~write_jump,
                launch.eq(1),
                launch_block.eq(following),
            )
        )
        self.comb += write_fifo.sink.valid.eq(take_write)

        issue_block = Signal(block_bits)
        issue_current = Signal()
        issue_next    = Signal()
        can_issue     = Signal()
        read_jump     = Signal()
        issue_in_current, issue_in_following = covered(issue_block)
        self.comb += [
            issue_block.eq(block_of(issue_adr)),
            issue_current.eq(issue_in_current),
            issue_next.eq(issue_in_following),
            can_issue.eq(issuing & in_ram(issue_adr) & (outstanding != read_ahead)),
            read_jump.eq(can_issue & ~issue_current & ~issue_next & ~snoop_pending),
        ]
        fsm.act("READ",
            # Issue.
            If(can_issue & (issue_current | issue_next),
                port.cmd.valid.eq(1),
                issued.eq(port.cmd.ready),
                advance.eq(port.cmd.ready & ~issue_current),
                If(port.cmd.ready, NextValue(issue_adr, issue_adr + 1))
            ).Elif(read_jump,
                launch.eq(1),
                jump.eq(1),
                launch_block.eq(issue_block),
            ),
            # Ahead of the run: the block after `current`.
            If(issuing & ahead_free & ~read_jump,
                launch.eq(1),
                launch_block.eq(following),
            ),
            port.cmd.we.eq(0),
            port.cmd.addr.eq(issue_adr[:ram_bits]),
            # Hand back, or drop the run.
            If(current_request,
                If(~we & (adr == deliver_adr),
                    ack.eq(read_fifo.source.valid),
                    master.dat_r.eq(read_fifo.source.data),
                    read_fifo.source.ready.eq(1),
                    popped.eq(read_fifo.source.valid),
                    If(read_fifo.source.valid, NextValue(deliver_adr, deliver_adr + 1))
                ).Else(
                    NextValue(issuing, 0),
                    NextState("DROP")
                )
            )
        )
        # Every word issued comes back: they are dropped as they do.
        fsm.act("DROP",
            read_fifo.source.ready.eq(1),
            popped.eq(read_fifo.source.valid),
            If(outstanding == 0, NextState("IDLE"))
        )

        fsm.act("OTHER",
            If(request & ~in_ram(master.adr),
                other.cyc.eq(1),
                other.stb.eq(1),
            ).Elif(current_request | ~master.cyc,
                NextState("IDLE")
            ),
            *master.connect(other, omit={"cyc", "stb", "ack"}),
        )
        self.comb += [
            other_ack.eq(fsm.ongoing("OTHER") & other.ack),
            # One statement of its own: Verilog evaluates a block in order, so `ack` must not be
            # read in the block that assigns it.
            master.ack.eq(Mux(fsm.ongoing("OTHER"), other.ack, ack)),
        ]
