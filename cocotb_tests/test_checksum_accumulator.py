#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate test of gateware.checksum.ChecksumAccumulator, with cocotb 1.9 and Verilator.

Random frames and random [start, end) byte ranges, odd offsets and ranges past the end of the frame
included; each sum is compared with scapy's RFC 1071 checksum of the same bytes.

    python3 -m pytest cocotb_tests/test_checksum_accumulator.py -q
"""

import os
import random

import cocotb
from cocotb.triggers import RisingEdge

from scapy.utils import checksum

from harness import FUZZ, SEED, build_verilog, frame_beats, reset, run_cocotb

NO_END = 2**17 - 1 # The `end` reset value: sum to the end of the frame.

def reference_sum(data):
    """Ones'-complement sum of `data` (0 for no bytes), from scapy's Internet checksum."""
    return ~checksum(data) & 0xffff

def random_case(rng):
    length = rng.randrange(1, 2000) if rng.random() < 0.05 else rng.randrange(1, 120)
    frame  = rng.randbytes(length)
    start  = rng.randrange(0, length + 8)
    end    = NO_END if rng.random() < 0.2 else rng.randrange(max(0, start - 4), length + 8)
    return frame, start, end

@cocotb.test()
async def random_ranges(dut):
    """Sums of random ranges of random frames, with idle cycles and backpressure on the result."""
    dut.drive.value = 0
    dut.range.value = 0
    await reset(dut)
    rng   = random.Random(SEED)
    cases = [random_case(rng) for _ in range(20000 if FUZZ else 1500)]
    beats = [] # (drive word, range word on the first beat of a frame, else None)
    for frame, start, end in cases:
        frame_in = frame_beats(rng, frame)
        for index, (data, last_be, _) in enumerate(frame_in):
            last = int(index == len(frame_in) - 1)
            ranges = end << 17 | start if index == 0 else None
            beats.append((data << 6 | last_be << 2 | last << 1 | 1, ranges))
    expected = [reference_sum(frame[start:end]) for frame, start, end in cases]

    drive, range_, monitor = dut.drive, dut.range, dut.monitor
    sent = received = stall = 0
    pending = False
    written = None
    idle, backpressure = 0.0, 0.0
    while received < len(expected):
        await RisingEdge(dut.sys_clk)
        m = int(monitor.value)
        stall += 1
        if m & 1:
            sent   += 1
            pending = False
        if m & 2:
            got = m >> 2
            assert got == expected[received], \
                f"case {received} {cases[received]}: got {got:#06x}, expected {expected[received]:#06x}"
            received += 1
            stall = 0
            if received % 100 == 0:
                idle, backpressure = rng.choice([0.0, 0.3]), rng.choice([0.0, 0.5, 0.9])
        assert stall < 2000, f"no sum for 2000 cycles after {received} sums"
        if not pending and sent < len(beats) and rng.random() >= idle:
            pending = True
            if beats[sent][1] is not None:
                range_.setimmediatevalue(beats[sent][1])
        value = (beats[sent][0] if pending else 0) | (rng.random() >= backpressure) << 38
        if value != written:
            drive.setimmediatevalue(value)
            written = value
    dut._log.info(f"{received} sums checked")

def test_checksum_accumulator():
    from migen import Module, Signal, Cat
    from gateware.checksum import ChecksumAccumulator

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = ChecksumAccumulator(32)
            sink, source = dut.sink, dut.source
            self.drive   = Signal(39, name="drive")
            self.range   = Signal(34, name="range")
            self.monitor = Signal(18, name="monitor")
            self.comb += [
                Cat(sink.valid, sink.last, sink.last_be, sink.data, source.ready).eq(self.drive),
                Cat(dut.start, dut.end).eq(self.range),
            ]
            self.sync += self.monitor.eq(Cat(sink.valid & sink.ready, source.valid & source.ready,
                source.sum))

    harness = Harness()
    verilog = build_verilog("checksum_accumulator", harness, [harness.drive, harness.range],
        [harness.monitor])
    run_cocotb("checksum_accumulator", "test_checksum_accumulator", verilog, "random_ranges")
