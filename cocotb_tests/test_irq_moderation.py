#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate tests of litedav.gateware.irq_moderation.IRQModeration, with cocotb 1.9 and Verilator.

The reference below states the rule as the driver sees it, from the events since the last ack:
`irq` rises on the cycle the `count_threshold`-th event is counted, or 16 x `timeout` cycles after
the first one (0: never), and stays up until `ack`. A driver model acks at random latencies after
the interrupt (and sometimes without one), and changes the threshold and timeout on its acks.

    python3 -m pytest cocotb_tests/test_irq_moderation.py -q    # fast: 150,000 cycles
    LITEDAV_FUZZ=1 ...                                           # 3,000,000 (LITEDAV_FUZZ_CYCLES)
"""

import os
import random

import cocotb
from cocotb.triggers import RisingEdge

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build

FUZZ_CYCLES = int(os.environ.get("LITEDAV_FUZZ_CYCLES", "3000000"))
TICK = 16                  # Cycles per timeout unit.
COUNT_WIDTH, TIMEOUT_WIDTH = 8, 16


class Reference:
    def __init__(self):
        self.count = 0           # Events since the last ack.
        self.first = None        # Cycle of the first of them.
        self.timeout_at_first = 0
        self.irq = False

    def edge(self, cycle, event, ack, threshold, timeout):
        if ack:
            self.count, self.first, self.irq = 0, None, False
        if event:
            self.count += 1
            if self.first is None:
                self.first, self.timeout_at_first = cycle, timeout
            if self.count >= max(threshold, 1):
                self.irq = True
        if (self.first is not None and self.timeout_at_first and
                cycle - self.first >= TICK*self.timeout_at_first):
            self.irq = True
        return self.irq


@cocotb.test()
async def random_events(dut):
    dut.drive.value = 0
    await reset(dut)
    rng   = random.Random(SEED)
    total = FUZZ_CYCLES if FUZZ else 150000
    ref   = Reference()
    threshold, timeout = 4, 7
    event_rate, ack_at, written = 0.1, None, None
    raised = by_count = by_time = 0
    irq_before = False
    saturation_test = True # Once, after cycle 1000.
    for cycle in range(total):
        ack = ack_at is not None and cycle >= ack_at
        if ack:
            ack_at = None
            if rng.random() < 0.1:
                threshold = rng.choice([0, 1, 2, 3, 8, 32, 200, rng.randrange(1 << COUNT_WIDTH)])
                timeout   = rng.choice([0, 0, 1, 2, 7, 100, 1000, rng.randrange(1 << TIMEOUT_WIDTH)])
                event_rate = rng.choice([0.001, 0.01, 0.1, 0.5, 1.0])
            if saturation_test and cycle > 1000:
                # The largest threshold: 255 events in a row.
                threshold, timeout, event_rate, saturation_test = (1 << COUNT_WIDTH) - 1, 0, 1.0, False
        event = rng.random() < event_rate
        value = event | ack << 1 | threshold << 2 | timeout << (2 + COUNT_WIDTH)
        if value != written:
            dut.drive.setimmediatevalue(value)
            written = value
        await RisingEdge(dut.sys_clk)
        expected = ref.edge(cycle, event, ack, threshold, timeout)
        got = bool(dut.irq.value)
        assert got == expected, (f"cycle {cycle}: irq {got}, expected {expected} (threshold "
            f"{threshold}, timeout {timeout}, {ref.count} events since the ack, first at {ref.first})")
        if got and (not irq_before or ack):
            raised += 1
            if ref.count >= max(threshold, 1):
                by_count += 1
            else:
                by_time += 1
        if got and ack_at is None:
            ack_at = cycle + 1 + rng.choice([0, 0, 1, 3, 20, 500])
        elif ack_at is None and rng.random() < 0.0005:
            ack_at = cycle + 1 # Spurious ack: the driver polled the ring first.
        irq_before = got
    assert by_count > 10 and by_time > 10, f"weak test: {by_count} by count, {by_time} by timeout"
    with open(os.path.join(sim_build("irq_moderation"), "random_events.count"), "w") as f:
        f.write(f"{total} {raised} {by_count} {by_time}")

# Pytest entry -------------------------------------------------------------------------------------

def irq_moderation_verilog():
    from migen import Module, Signal, Cat
    from litedav.gateware.irq_moderation import IRQModeration

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = IRQModeration(COUNT_WIDTH, TIMEOUT_WIDTH, TICK)
            self.drive = Signal(2 + COUNT_WIDTH + TIMEOUT_WIDTH, name="drive")
            self.irq   = Signal(name="irq")
            self.comb += [
                Cat(dut.event, dut.ack, dut.count_threshold, dut.timeout).eq(self.drive),
                self.irq.eq(dut.irq),
            ]

    harness = Harness()
    return build_verilog("irq_moderation", harness, [harness.drive], [harness.irq])

def test_irq_moderation_random_events(capsys):
    run_cocotb("irq_moderation", "test_irq_moderation", irq_moderation_verilog(), "random_events")
    with open(os.path.join(sim_build("irq_moderation"), "random_events.count")) as f:
        total, raised, by_count, by_time = map(int, f.read().split())
    with capsys.disabled():
        print(f"\nirq_moderation: {total} cycles checked, {raised} interrupts ({by_count} by count, "
            f"{by_time} by timeout; seed {SEED}{', fuzz' if FUZZ else ''})")
