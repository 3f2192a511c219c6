#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Coherence of litedav.gateware.sdram_dma.SDRAMDMAPort with the L2 (gateware/l2_cache.py), with
cocotb and Verilator: the Colorlight i5's memory system (sdram_system.py), a CPU master on the L2
and two DMA masters (rx writing, tx reading) on their SDRAM DMA ports, all on the same words.

A reference model holds every word of main RAM the test wrote; each master's reads are checked
against it. The masters hand memory over the way the firmware and the NIC do: a DMA master's
writes are done for the others when its last, classic (CTI 000) write is acknowledged, the CPU's
when each is acknowledged. Phases, over a region four times the L2 (so that lines are hit, missed,
evicted and written back):

- fill: rx writes the region and a second one (`stable`) in bursts;
- CPU dirties, tx reads: the CPU writes random words and bytes (dirty lines in the L2), then tx
  reads the whole region in bursts of random length: the L2's dirty lines must be written back
  before the reads;
- CPU caches, rx overwrites: the CPU reads and writes random words (clean and dirty lines), then rx
  writes random runs with random byte enables, then the CPU reads every word: no line the L2
  held may hide rx's bytes, and the CPU's dirty bytes beside them in the same word must survive;
- at once: words are the CPU's or rx's by a hash of their address, interleaved within lines. rx
  writes runs with its words enabled, the CPU reads and writes its own words at random, tx and the
  CPU read `stable` (checked as they go); then the CPU and tx read every word;
- contended: the same on 8 blocks that stay in the L2, rx in short runs with pauses, in rounds
  that end with the CPU reading every word. A CPU refill racing rx's queued writes to the same line (`protect`), a block rx keeps across a pause after
  the CPU refilled one of its lines (`refilled`), or a snoop racing a CPU write loses a word here.
- beyond main RAM: rx writes and tx reads a wishbone SRAM through the ports' `other` bus, between
  runs in main RAM.

    python3 -m pytest cocotb_tests/test_sdram_dma.py -q
"""

import random

import cocotb
from cocotb.triggers import RisingEdge

from harness import SEED, build_verilog, reset, run_cocotb
from sdram_system import L2_SIZE, add_sdram_system

MASTERS     = ("cpu", "rx", "tx")
REGION      = 0                       # word address
REGION_WORDS = 4 * L2_SIZE // 4
STABLE      = REGION + REGION_WORDS
STABLE_WORDS = L2_SIZE // 4
CONTENDED   = STABLE + STABLE_WORDS
CONTENDED_WORDS = 128                 # 8 snoop blocks: every line stays in the L2
OTHER       = 1 << 22                 # word address past main RAM (8 MiB): the ports' `other` bus
OTHER_WORDS = 256                     # a wishbone SRAM there, shared by both DMA masters
CTI_CLASSIC, CTI_INCREMENTING, CTI_END = 0b000, 0b010, 0b111
ADR_BITS    = 24
# Drive bits per master: cyc, we, cti, sel, adr, dat_w. Monitor: acked, dat_r.
DRIVE_BITS   = 1 + 1 + 3 + 4 + ADR_BITS + 32
MONITOR_BITS = 1 + 32
TIMEOUT_CYCLES = 2000     # a beat not acknowledged in this many cycles: the system is stuck


def owner(word):
    """Who writes `word` in the concurrent phase: rx or the CPU, interleaved within lines."""
    return "rx" if (word * 0x9E3779B1 >> 7) & 1 else "cpu"


class Master:
    """Runs transactions (lists of beats) on one packed wishbone master, one after the other with
    `gap` idle cycles (cyc low) between them. A beat: dict(adr, we, data, sel, cti, check) where
    `check(adr, value)` is called with what a read returned."""
    def __init__(self, name, index):
        self.name, self.index = name, index
        self.transactions = []
        self.beat = None
        self.beats = []
        self.gap = 0
        self.waited = 0
        self.on_write = None        # f(adr, data, sel) when a write is acknowledged

    def idle(self):
        return self.beat is None and not self.beats and not self.transactions and self.gap == 0

    def sample(self, acked, data):
        if self.beat is None:
            return
        if not acked:
            self.waited += 1
            assert self.waited < TIMEOUT_CYCLES, f"{self.name}: no ack for {self.beat} in {TIMEOUT_CYCLES} cycles"
            return
        beat, self.beat, self.waited = self.beat, None, 0
        if beat["we"]:
            self.on_write(beat["adr"], beat["data"], beat["sel"])
        elif beat.get("check"):
            beat["check"](beat["adr"], data)

    def drive(self):
        if self.beat is None:
            if not self.beats:
                if self.gap:
                    self.gap -= 1
                    return 0
                if not self.transactions:
                    return 0
                self.beats, self.gap = self.transactions.pop(0)
                self.beats = list(self.beats)
            self.beat = self.beats.pop(0)
        b = self.beat
        value = 1 | b["we"] << 1 | b["cti"] << 2 | b["sel"] << 5 | b["adr"] << 9 | b["data"] << (9 + ADR_BITS)
        return value << (DRIVE_BITS * self.index)


class System:
    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.model = {}
        self.masters = {name: Master(name, i) for i, name in enumerate(MASTERS)}
        for master in self.masters.values():
            master.on_write = self.write_model
        self.reads_checked = 0
        self.cycles = 0

    def write_model(self, adr, data, sel):
        old = self.model.get(adr, 0)
        mask = sum(0xff << (8 * i) for i in range(4) if sel >> i & 1)
        self.model[adr] = (old & ~mask | data & mask) & 0xffffffff

    def check(self, who):
        def check(adr, value):
            expected = self.model[adr]
            assert value == expected, (f"{who} read 0x{value:08x} at word 0x{adr:x}, "
                                       f"expected 0x{expected:08x} (cycle {self.cycles})")
            self.reads_checked += 1
        return check

    async def run(self):
        """Clock the masters until every one is idle."""
        written = None
        while True:
            await RisingEdge(self.dut.sys_clk)
            self.cycles += 1
            monitor = int(self.dut.monitor.value)
            for master in self.masters.values():
                word = monitor >> (MONITOR_BITS * master.index)
                master.sample(word & 1, word >> 1 & 0xffffffff)
            idle = all(m.idle() for m in self.masters.values())
            value = 0
            if not idle:
                for master in self.masters.values():
                    value |= master.drive()
            if value != written:
                self.dut.drive.setimmediatevalue(value)
                written = value
            if idle:
                return

    # Transactions.
    def burst(self, start, n, we, data=None, sel=None, check=None, last_classic=False):
        beats = []
        for i in range(n):
            cti = CTI_INCREMENTING if i < n - 1 else CTI_END
            if i == n - 1 and last_classic:
                cti = CTI_CLASSIC if n == 1 else CTI_END
            beats.append(dict(adr=start + i, we=int(we), cti=cti,
                              data=data[i] if data else 0, sel=sel[i] if sel else 0xf, check=check))
        return beats

    def single(self, adr, we, data=0, sel=0xf, check=None):
        return [dict(adr=adr, we=int(we), cti=CTI_CLASSIC, data=data, sel=sel, check=check)]

    def queue(self, name, beats, gap=0):
        self.masters[name].transactions.append((beats, gap))

    def random_words(self, n):
        return [self.rng.getrandbits(32) for _ in range(n)]

    def dma_write_runs(self, base, words, runs, max_len, sel_of=None):
        """rx writes `runs` random runs in [base, base + words), then a classic write that says
        it is done."""
        for _ in range(runs):
            n = self.rng.randint(1, max_len)
            start = base + self.rng.randrange(words - n)
            sel = [sel_of(start + i) for i in range(n)] if sel_of else None
            self.queue("rx", self.burst(start, n, True, self.random_words(n), sel),
                       gap=self.rng.choice((0, 0, 1, 5)))
        last = base + self.rng.randrange(words)
        self.queue("rx", self.single(last, True, self.rng.getrandbits(32),
                                     0xf if not sel_of else sel_of(last)))

    def dma_read_all(self, base, words, max_len):
        adr = base
        while adr < base + words:
            n = min(self.rng.randint(1, max_len), base + words - adr)
            self.queue("tx", self.burst(adr, n, False, check=self.check("tx")),
                       gap=self.rng.choice((0, 0, 2)))
            adr += n

    def cpu_own_access(self, base, words, write_gaps=None):
        """The CPU reads (checked) or writes (random bytes) one of its own words in
        [base, base + words); a write is followed by a gap drawn from `write_gaps`, if given."""
        adr = base + self.rng.randrange(words)
        while owner(adr) != "cpu":
            adr = base + self.rng.randrange(words)
        if self.rng.random() < 0.5:
            self.queue("cpu", self.single(adr, True, self.rng.getrandbits(32), random_sel(self.rng)),
                       gap=self.rng.choice(write_gaps) if write_gaps else 0)
        else:
            self.queue("cpu", self.single(adr, False, check=self.check("cpu")))

    def cpu_read_all(self, base, words):
        for adr in range(base, base + words):
            self.queue("cpu", self.single(adr, False, check=self.check("cpu")))


def random_sel(rng):
    return rng.choice((0xf, 0xf, 0xf, 0x1, 0x2, 0x4, 0x8, 0x3, 0xc, 0x6))


@cocotb.test()
async def coherence(dut):
    rng = random.Random(SEED)
    dut.drive.value = 0
    await reset(dut)
    system = System(dut, rng)

    # Fill.
    for base, words in ((REGION, REGION_WORDS), (STABLE, STABLE_WORDS), (CONTENDED, CONTENDED_WORDS)):
        for start in range(base, base + words, 16):
            system.queue("rx", system.burst(start, 16, True, system.random_words(16),
                                            last_classic=start + 16 == base + words))
    await system.run()

    # The CPU dirties lines, then tx reads them.
    for _ in range(1500):
        adr = REGION + rng.randrange(REGION_WORDS)
        system.queue("cpu", system.single(adr, True, rng.getrandbits(32), random_sel(rng)))
    await system.run()
    system.dma_read_all(REGION, REGION_WORDS, 24)
    await system.run()

    # The CPU caches lines (clean and dirty), then rx overwrites parts of them.
    for _ in range(2000):
        adr = REGION + rng.randrange(REGION_WORDS)
        if rng.random() < 0.3:
            system.queue("cpu", system.single(adr, True, rng.getrandbits(32), random_sel(rng)))
        else:
            system.queue("cpu", system.single(adr, False, check=system.check("cpu")))
    await system.run()
    system.dma_write_runs(REGION, REGION_WORDS, 60, 40, sel_of=lambda adr: random_sel(rng))
    await system.run()
    system.cpu_read_all(REGION, REGION_WORDS)
    await system.run()

    # At once: rx writes its words, the CPU reads and writes its own, tx and the CPU read `stable`.
    system.dma_write_runs(REGION, REGION_WORDS, 80, 40,
                          sel_of=lambda adr: 0xf if owner(adr) == "rx" else 0)
    for _ in range(4):
        system.dma_read_all(STABLE, STABLE_WORDS, 24)
    for _ in range(3000):
        if rng.random() < 0.2:
            adr = STABLE + rng.randrange(STABLE_WORDS)
            system.queue("cpu", system.single(adr, False, check=system.check("cpu")))
            continue
        system.cpu_own_access(REGION, REGION_WORDS)
    await system.run()
    system.cpu_read_all(REGION, REGION_WORDS)
    await system.run()
    system.dma_read_all(REGION, REGION_WORDS, 24)
    await system.run()

    # Contended: the same at once on a few blocks the L2 holds whole, rx in short runs with pauses
    # (it keeps its snooped blocks across them unless the CPU refills one of their lines), in
    # rounds that each end with the CPU reading every word.
    for _ in range(40):
        for _ in range(12):
            n = rng.randint(1, 8)
            start = CONTENDED + rng.randrange(CONTENDED_WORDS - n)
            system.queue("rx", system.burst(start, n, True, system.random_words(n),
                                            [0xf if owner(start + i) == "rx" else 0 for i in range(n)]),
                         gap=rng.choice((0, 1, 3, 10, 30)))
        system.queue("rx", system.single(CONTENDED, True, 0, 0))
        # tx's reads elsewhere in the same banks keep rx's writes queued longer.
        system.dma_read_all(STABLE + rng.randrange(STABLE_WORDS - 512), 512, 24)
        for _ in range(60):
            system.cpu_own_access(CONTENDED, CONTENDED_WORDS, write_gaps=(0, 0, 2))
        await system.run()
        system.cpu_read_all(CONTENDED, CONTENDED_WORDS)
        await system.run()
    system.dma_read_all(CONTENDED, CONTENDED_WORDS, 24)
    await system.run()
    # Beyond main RAM, through `other`, between main-RAM runs: rx writes, tx reads back.
    for start in range(OTHER, OTHER + OTHER_WORDS, 16):
        system.queue("rx", system.burst(start, 16, True, system.random_words(16)))
    for _ in range(20):
        n = rng.randint(1, 8)
        start = OTHER + rng.randrange(OTHER_WORDS - n)
        system.queue("rx", system.burst(start, n, True, system.random_words(n)))
        n = rng.randint(1, 8)
        start = REGION + rng.randrange(REGION_WORDS - n)
        system.queue("rx", system.burst(start, n, True, system.random_words(n), last_classic=True))
    await system.run()
    for _ in range(20):
        system.dma_read_all(OTHER + rng.randrange(OTHER_WORDS - 16), 16, 8)
        system.dma_read_all(REGION + rng.randrange(REGION_WORDS - 16), 16, 8)
    await system.run()
    dut._log.info(f"{system.reads_checked} reads checked in {system.cycles} cycles")
    assert system.reads_checked > 3 * REGION_WORDS


# Harness ------------------------------------------------------------------------------------------

def sdram_dma_verilog():
    from migen import Module, Signal, Cat
    from litex.soc.interconnect import wishbone

    class Harness(Module):
        def __init__(self):
            self.drive   = Signal(DRIVE_BITS * len(MASTERS), name="drive")
            self.monitor = Signal(MONITOR_BITS * len(MASTERS), name="monitor")
            buses = []
            for i, name in enumerate(MASTERS):
                bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
                d = self.drive[DRIVE_BITS * i:DRIVE_BITS * (i + 1)]
                self.comb += [
                    bus.cyc.eq(d[0]),
                    bus.stb.eq(d[0]),
                    bus.we.eq(d[1]),
                    bus.cti.eq(d[2:5]),
                    bus.sel.eq(d[5:9]),
                    bus.adr.eq(d[9:9 + ADR_BITS]),
                    bus.dat_w.eq(d[9 + ADR_BITS:]),
                ]
                self.sync += self.monitor[MONITOR_BITS * i:MONITOR_BITS * (i + 1)].eq(
                    Cat(bus.cyc & bus.stb & bus.ack, bus.dat_r))
                buses.append(bus)
            _, ports, ram_bytes = add_sdram_system(self, buses[0], buses[1:])
            assert OTHER >= ram_bytes // 4
            # Beyond main RAM: both ports' `other` masters on one SRAM.
            sram = wishbone.SRAM(OTHER_WORDS * 4, bus=wishbone.Interface(data_width=32,
                                 address_width=32, addressing="word"))
            self.submodules.other_sram = sram
            self.submodules.other_arbiter = wishbone.Arbiter([port.other for port in ports], sram.bus)

    harness = Harness()
    return build_verilog("sdram_dma", harness, [harness.drive], [harness.monitor])


def test_sdram_dma_coherence():
    run_cocotb("sdram_dma", "test_sdram_dma", sdram_dma_verilog(), "coherence")
