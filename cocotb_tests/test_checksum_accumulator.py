#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate test of litedav.gateware.checksum.ChecksumAccumulator, with cocotb 1.9 and Verilator.

Random frames and random [start, end) byte ranges, odd offsets and ranges past the end of the frame
included; each sum is compared with scapy's RFC 1071 checksum of the same bytes.

    python3 -m pytest cocotb_tests/test_checksum_accumulator.py -q
"""

import random

import cocotb

from scapy.utils import checksum

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb
from streams import ETH_PHY_32, Ports, Stream, StreamBus, StreamFrame, StreamSink, StreamSource, random_pauses

NO_END = 2**17 - 1 # The `end` reset value: sum to the end of the frame.

# The harness gives the core's sink `start` and `end` as params: the core samples them on every beat.
RANGE = [("start", 17), ("end", 17)]
PORTS = Ports(inputs={"sink": Stream(ETH_PHY_32, RANGE)}, outputs={"source": Stream([("sum", 16)], last=False)})

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
    await reset(dut)
    rng    = random.Random(SEED)
    bus    = StreamBus(dut, PORTS)
    source = StreamSource(bus, "sink", rng)
    sink   = StreamSink(bus, "source")
    cases  = [random_case(rng) for _ in range(20000 if FUZZ else 1500)]
    for frame, start, end in cases:
        source.send_nowait(StreamFrame(frame, {"start": start, "end": end}))
    expected = [reference_sum(frame[start:end]) for frame, start, end in cases]

    received = stall = 0
    while received < len(expected):
        await bus.sample()
        stall += 1
        if not sink.empty():
            got = sink.recv_nowait().beats[0]["sum"]
            assert got == expected[received], \
                f"case {received} {cases[received]}: got {got:#06x}, expected {expected[received]:#06x}"
            received += 1
            stall = 0
            if received % 100 == 0:
                source.set_pause_generator(random_pauses(rng, rng.choice([0.0, 0.3])))
                sink.set_pause_generator(random_pauses(rng, rng.choice([0.0, 0.5, 0.9])))
        assert stall < 2000, f"no sum for 2000 cycles after {received} sums"
        bus.drive()
    dut._log.info(f"{received} sums checked")

def test_checksum_accumulator():
    from migen import Module
    from litex.soc.interconnect import stream
    from liteeth.common import eth_phy_description
    from litedav.gateware.checksum import ChecksumAccumulator

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = ChecksumAccumulator(32)
            sink = stream.Endpoint(stream.EndpointDescription(eth_phy_description(32).payload_layout, RANGE))
            self.comb += [
                sink.connect(dut.sink, omit={"start", "end"}),
                dut.start.eq(sink.start),
                dut.end.eq(sink.end),
            ]
            self.drive, self.monitor = PORTS.harness(self, {"sink": sink, "source": dut.source})

    harness = Harness()
    verilog = build_verilog("checksum_accumulator", harness, [harness.drive], [harness.monitor])
    run_cocotb("checksum_accumulator", "test_checksum_accumulator", verilog, "random_ranges")
