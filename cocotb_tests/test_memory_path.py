#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The Colorlight i5's memory path, measured: sustained bytes per cycle per DMA master, with cocotb
and Verilator (issue 27's memory-path test).

The harness is the path soc/litedav_soc.py builds for the Colorlight i5 with SDRAM DMA ports
(`litedav-soc --nic-sdram-ports`; not yet the bitstream's default: platforms/colorlight_i5.py
NIC_SDRAM_PORTS): a CPU-like master on the real L2
(gateware/l2_cache.py, 8 KiB, 128-bit lines) in front of LiteDRAM's wishbone bridge, two DMA-like
masters each on its own SDRAMDMAPort (gateware/sdram_dma.py: a 32-bit native port of LiteDRAM's
crossbar, coherent with the L2 through a snoop port), LiteDRAM's controller, and LiteDRAM's SDRAM
model with the board chip's timings (M12L64322A, 32-bit SDR, 1:1 at 75 MHz).

The masters are traffic generators in gateware (no Python per cycle):
  rx   writes a 512 KiB ring (the RX buffers) in incrementing bursts of 8 words, like RxDMA;
  tx   reads that ring back in the same bursts, like TxDMA, and checks every word;
  cpu  the CPU's data cache beside them: a line write-back (8-word write burst) and a refill
       (8-word read burst) in a 64 KiB working set, with 16 idle cycles after each burst.
Every word written anywhere is a function of its address, so every read is checked.

Each phase runs a window of cycles and reports bytes per cycle per master; the test asserts that
no read returned a wrong word, that each master moved data, and that each DMA master moves at least
GOAL_BYTES_PER_CYCLE with the CPU running beside it (150 MB/s at 75 MHz: 1 GbE needs 125), and
writes the figures to sim_build/memory_path/figures.json (bench/README.md). With both DMA masters
and the CPU at once the SDRAM's peak (4 bytes per cycle) is shared three ways: that row is reported.

    python3 -m pytest cocotb_tests/test_memory_path.py -q -s
"""

import json
import os

import cocotb
from cocotb.triggers import RisingEdge, Timer

from harness import build_verilog, reset, run_cocotb, sim_build
from sdram_system import L2_SIZE, SYS_CLK_HZ, add_sdram_system

PERIOD_NS    = 8              # the harness clock: only cycles are measured
RING_WORDS   = 512 * 1024 // 4
CPU_BASE     = 4 * 1024 * 1024 // 4   # the CPU's working set: away from the ring
CPU_WORDS    = 64 * 1024 // 4
BURST        = 8
CPU_GAP      = 16
WINDOW       = 40000          # cycles per measured phase
GOAL_BYTES_PER_CYCLE = 2.0    # issue 27's bar, per DMA master with the CPU running
COUNTERS     = ("cycles", "rx_words", "tx_words", "cpu_words", "errors")

# Each phase: which generators run (rx, tx, cpu). The first writes the whole ring before the
# reader checks it.
PHASES = [
    ("rx writes alone",            (1, 0, 0)),
    ("tx reads alone",             (0, 1, 0)),
    ("rx writes, CPU beside",      (1, 0, 1)),
    ("tx reads, CPU beside",       (0, 1, 1)),
    ("rx and tx, CPU beside",      (1, 1, 1)),
]


def read_counters(dut):
    value = int(dut.status.value)
    return {name: (value >> (32 * i)) & 0xffffffff for i, name in enumerate(COUNTERS)}


@cocotb.test()
async def bandwidth(dut):
    dut.control.value = 0
    await reset(dut)
    results = []
    # The ring written once whole before anything reads it.
    dut.control.value = 0b001
    written = 0
    while written < RING_WORDS:
        await Timer(20000 * PERIOD_NS, "ns")
        before, written = written, read_counters(dut)["rx_words"]
        assert written > before, f"the rx master is stuck after {written} words"
    for name, (rx, tx, cpu) in PHASES:
        dut.control.value = rx | tx << 1 | cpu << 2
        await Timer(2000 * PERIOD_NS, "ns")               # settle: caches, arbiter, refreshes
        before = read_counters(dut)
        await Timer(WINDOW * PERIOD_NS, "ns")
        after = read_counters(dut)
        cycles = after["cycles"] - before["cycles"]
        row = {"phase": name, "cycles": cycles}
        for master in ("rx", "tx", "cpu"):
            words = (after[f"{master}_words"] - before[f"{master}_words"]) & 0xffffffff
            row[f"{master}_bytes_per_cycle"] = round(4 * words / cycles, 3)
        results.append(row)
    dut.control.value = 0
    await Timer(200 * PERIOD_NS, "ns")
    errors = read_counters(dut)["errors"]
    assert errors == 0, f"{errors} words read back differ from what was written"
    for row, (_, enables) in zip(results, PHASES):
        for master, on in zip(("rx", "tx", "cpu"), enables):
            assert (row[f"{master}_bytes_per_cycle"] > 0) == bool(on), f"{row['phase']}: {row}"
    with open(os.path.join(sim_build("memory_path"), "figures.json"), "w") as f:
        json.dump({"sys_clk_hz": SYS_CLK_HZ, "l2_size": L2_SIZE, "burst_words": BURST,
                   "cpu_gap_cycles": CPU_GAP, "window_cycles": WINDOW,
                   "goal_bytes_per_cycle": GOAL_BYTES_PER_CYCLE, "phases": results}, f, indent=1)
    for row in results[:4]:
        for master in ("rx", "tx"):
            got = row[f"{master}_bytes_per_cycle"]
            assert got == 0 or got >= GOAL_BYTES_PER_CYCLE, \
                f"{row['phase']}: {master} moves {got} B/cycle, below {GOAL_BYTES_PER_CYCLE}"


# Harness ------------------------------------------------------------------------------------------

def generator(base, words, write, burst, gap=0, alternate=False):
    """A wishbone master (32-bit, word addresses) that moves `words` words from `base` round and
    round in incrementing bursts of `burst` (CTI 010, the last 111) while `enable`; `alternate`:
    each line twice, first as `write` says then the other way (a write-back and a refill); `gap` idle
    cycles after each burst. Reads are checked against pattern()."""
    from migen import Module, Signal, If, Mux
    from litex.soc.interconnect import wishbone

    def pattern(word_address):
        """The word every master writes at `word_address` (not 0 for most addresses, so that
        memory nobody wrote reads wrong)."""
        return (word_address * 0x9E3779B1 + 0x5A5A5A5A)[:32]

    class Generator(Module):
        def __init__(self):
            self.bus     = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
            self.enable  = Signal()
            self.count   = Signal(32)
            self.errors  = Signal(32)
            offset = Signal(max=words)
            beat   = Signal(max=burst)
            we     = Signal(reset=int(write))
            wait   = Signal(max=gap + 2)
            second = Signal()
            address = Signal(32)
            self.comb += [
                address.eq(base + offset),
                bus.cyc.eq(self.enable & (wait == 0)),
                bus.stb.eq(self.enable & (wait == 0)),
                bus.we.eq(we),
                bus.sel.eq(0xf),
                bus.adr.eq(address),
                bus.dat_w.eq(pattern(address)),
                bus.cti.eq(Mux(beat == burst - 1, 0b111, 0b010)),
                bus.bte.eq(0),
            ]
            last_of_line = Signal()
            self.comb += last_of_line.eq(beat == burst - 1)
            self.sync += [
                If(wait != 0, wait.eq(wait - 1)),
                If(bus.ack,
                    self.count.eq(self.count + 1),
                    If(~bus.we & (bus.dat_r != pattern(address)),
                        self.errors.eq(self.errors + 1)),
                    beat.eq(Mux(last_of_line, 0, beat + 1)),
                    If(last_of_line,
                        wait.eq(gap),
                        If(alternate & ~second,
                            second.eq(1),                     # the same line, the other way
                            we.eq(~we),
                            offset.eq(offset - (burst - 1))
                        ).Else(
                            second.eq(0),
                            we.eq(int(write)),
                            offset.eq(Mux(offset == words - 1, 0, offset + 1))
                        )
                    ).Else(
                        offset.eq(Mux(offset == words - 1, 0, offset + 1))
                    )
                )
            ]
    return Generator()


def memory_path_harness():
    """The harness as a Migen module (memory_path_verilog() converts it)."""
    from migen import Module, Signal, Cat

    class Harness(Module):
        def __init__(self):
            self.control = Signal(3, name="control")
            self.status  = Signal(32 * len(COUNTERS), name="status")

            self.submodules.rx  = rx  = generator(0, RING_WORDS, True, BURST)
            self.submodules.tx  = tx  = generator(0, RING_WORDS, False, BURST)
            self.submodules.cpu = cpu = generator(CPU_BASE, CPU_WORDS, True, BURST, gap=CPU_GAP,
                                                  alternate=True)
            add_sdram_system(self, cpu.bus, [rx.bus, tx.bus])

            cycles = Signal(32)
            self.sync += cycles.eq(cycles + 1)
            self.comb += [
                Cat(rx.enable, tx.enable, cpu.enable).eq(self.control),
                self.status.eq(Cat(cycles, rx.count, tx.count, cpu.count,
                                   rx.errors + tx.errors + cpu.errors)),
            ]

    return Harness()


def memory_path_verilog():
    harness = memory_path_harness()
    return build_verilog("memory_path", harness, [harness.control], [harness.status],
                         clock_period_ns=PERIOD_NS)


def test_memory_path_bandwidth(capsys):
    run_cocotb("memory_path", "test_memory_path", memory_path_verilog(), "bandwidth")
    with open(os.path.join(sim_build("memory_path"), "figures.json")) as f:
        figures = json.load(f)
    with capsys.disabled():
        print(f"\nmemory path (Colorlight i5: SDRAM DMA ports + {L2_SIZE // 1024} KiB L2 + M12L64322A SDR), "
              f"bytes per cycle (goal {GOAL_BYTES_PER_CYCLE} per DMA master with the CPU running):")
        for row in figures["phases"]:
            print(f"  {row['phase']:24s} rx {row['rx_bytes_per_cycle']:.3f}  tx {row['tx_bytes_per_cycle']:.3f}"
                  f"  cpu {row['cpu_bytes_per_cycle']:.3f}")
