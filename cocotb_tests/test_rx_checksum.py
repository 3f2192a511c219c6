#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate tests of litedav.gateware.checksum.RxChecksum, with cocotb 1.9 and Verilator.

pytest converts the Migen core (inside a small harness) to Verilog under cocotb_tests/sim_build/
and runs the cocotb tests below through cocotb-test. Every frame is built with scapy; the expected
status comes from the reference model below, which checks checksums with scapy's RFC 1071 code.

    python3 -m pytest cocotb_tests -q                  # fast: 600 random frames
    LITEDAV_FUZZ=1 python3 -m pytest cocotb_tests -q   # long: 100,000 (LITEDAV_FUZZ_FRAMES)
    LITEDAV_SEED=n ...                                 # another random sequence (default 12345)
"""

import os
import random

import cocotb

from scapy.layers.inet import IP, TCP, UDP
from scapy.utils import checksum

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build
from frames import be16, random_frame, random_packet
from streams import ETH_PHY_32, Ports, Stream, StreamBus, StreamFrame, StreamSink, StreamSource, random_pauses

from litedav.gateware.checksum import (L3_NOT_IPV4, L3_OK, L3_BAD, L4_NOT_CHECKED, L4_OK, L4_BAD,
    rx_checksum_status_layout)

FUZZ_FRAMES = int(os.environ.get("LITEDAV_FUZZ_FRAMES", "100000"))

PORTS = Ports(inputs={"sink": Stream(ETH_PHY_32)},
              outputs={"source": Stream(ETH_PHY_32, rx_checksum_status_layout)})

# Reference model ----------------------------------------------------------------------------------

def reference_status(frame, frame_error=0):
    """Status RxChecksum must report for `frame` (bytes, without FCS); see rx_checksum_status_layout."""
    n  = len(frame)
    st = dict(l3_status=L3_NOT_IPV4, l4_status=L4_NOT_CHECKED, protocol=0, vlan=0, l3_offset=14,
        l4_offset=0, runt=int(n < 60), truncated=0, length_error=0, frame_error=frame_error)
    if n >= 14 and be16(frame, 12) == 0x8100:
        st.update(vlan=1, l3_offset=18)
    l3 = st["l3_offset"]
    if n < l3:
        st["truncated"] = 1
        return st
    if be16(frame, l3 - 2) != 0x0800:
        return st
    st["l3_status"] = L3_BAD
    if n < l3 + 20:
        st["truncated"] = 1
        return st
    version, ihl = frame[l3] >> 4, frame[l3] & 0xf
    hlen, total_length, fragment, proto = 4*ihl, be16(frame, l3 + 2), be16(frame, l3 + 6), frame[l3 + 9]
    st.update(protocol=proto, l4_offset=l3 + hlen)
    st["truncated"]    = int(n < l3 + hlen or n < l3 + total_length)
    st["length_error"] = int(ihl < 5 or total_length < hlen)
    if version != 4 or st["truncated"] or st["length_error"] or checksum(frame[l3:l3 + hlen]) != 0:
        return st
    st["l3_status"] = L3_OK
    if fragment & 0x3fff or proto not in (6, 17):
        return st
    l4_length = total_length - hlen
    segment   = frame[l3 + hlen:l3 + total_length]
    if proto == 6:
        if l4_length < 20 or 4*(segment[12] >> 4) > l4_length:
            st["truncated"] = 1
        elif segment[12] >> 4 < 5:
            st["length_error"] = 1
    else:
        if l4_length < 8:
            st["truncated"] = 1
        elif be16(segment, 4) != l4_length:
            st["length_error"] = 1
        elif be16(segment, 6) == 0: # RFC 768: no checksum.
            return st
    if st["truncated"] or st["length_error"]:
        st["l4_status"] = L4_BAD
        return st
    pseudo_header = frame[l3 + 12:l3 + 20] + bytes([0, proto]) + l4_length.to_bytes(2, "big")
    st["l4_status"] = L4_OK if checksum(pseudo_header + segment) == 0 else L4_BAD
    return st

def test_reference_model_agrees_with_scapy():
    """Intact scapy-built IPv4 TCP/UDP frames are OK, flipped checksum fields are BAD."""
    rng = random.Random(1)
    for _ in range(300):
        packet = random_packet(rng)
        if IP not in packet or (TCP not in packet and UDP not in packet):
            continue
        if packet[IP].frag or packet[IP].flags.MF:
            continue
        frame = bytearray(bytes(packet))
        status = reference_status(bytes(frame))
        assert (status["l3_status"], status["l4_status"]) == (L3_OK, L4_OK), packet.summary()
        assert status["l4_offset"] == len(frame) - len(packet[IP].payload), packet.summary()
        l3 = status["l3_offset"]
        frame[l3 + 10] ^= 0x40
        assert reference_status(bytes(frame))["l3_status"] == L3_BAD
        frame[l3 + 10] ^= 0x40
        l4_checksum = status["l4_offset"] + (16 if TCP in packet else 6)
        frame[l4_checksum] ^= 0x01
        assert reference_status(bytes(frame))["l4_status"] == L4_BAD

# Testbench ----------------------------------------------------------------------------------------

class Bench:
    """RxChecksum's sink driven by a StreamSource, its source taken by a StreamSink."""
    def __init__(self, dut, rng):
        self.rng    = rng
        self.bus    = StreamBus(dut, PORTS)
        self.source = StreamSource(self.bus, "sink", rng)
        self.sink   = StreamSink(self.bus, "source")

    async def run_frames(self, frames, idle, backpressure, check_no_bubbles=False):
        """Sends frames [(bytes, frame_error)] with random idle cycles on sink and random
        backpressure on source; checks every beat out against the beat in (garbage lanes and error
        bits included) and every status against the model. Returns the cycles it took."""
        source, sink = self.source, self.sink
        sent = [StreamFrame(frame, error=frame_error) for frame, frame_error in frames]
        for frame in sent:
            source.send_nowait(frame)
        statuses = [reference_status(frame, int(frame_error)) for frame, frame_error in frames]
        source.set_pause_generator(random_pauses(self.rng, idle))
        sink.set_pause_generator(random_pauses(self.rng, backpressure))
        beats_in    = sum(len(frame.beats) for frame in sent)
        beats_start = source.beats_sent
        cycles = stall = done = 0
        while done < len(sent):
            await self.bus.step()
            cycles += 1
            if check_no_bubbles and not source.transferred:
                beats = source.beats_sent - beats_start
                assert not 0 < beats < beats_in, f"sink not ready at beat {beats} in back-to-back traffic"
            if sink.transferred:
                stall = 0
            elif sink.ready:
                stall += 1 # Cycles in which source could have given a beat: backpressure is not a stall.
            if not sink.empty():
                frame = sink.recv_nowait()
                got  = [(b["data"], b["last_be"], b["error"], b["last"]) for b in frame.beats]
                want = [(b["data"], b["last_be"], b["error"], b["last"]) for b in sent[done].beats]
                if got != want:
                    index = next(i for i, (a, b) in enumerate(zip(got + [None], want + [None])) if a != b)
                    assert False, f"frame {done} beat {index}: got {got[index:index + 1]}, " \
                        f"expected {want[index:index + 1]}"
                assert frame.params == statuses[done], f"frame {done} {frames[done][0].hex()}: " \
                    f"got {frame.params}, expected {statuses[done]}"
                done += 1
            assert stall < 100, f"no output in 100 cycles with source ready after {sink.beats_received} " \
                "beats: the core is wedged"
        return cycles

async def start(dut, rng):
    dut.drive.value = 0
    await reset(dut)
    return Bench(dut, rng)


@cocotb.test()
async def random_frames(dut):
    """Random frames under every mix of idle cycles and backpressure."""
    rng   = random.Random(SEED)
    bench = await start(dut, rng)
    total = FUZZ_FRAMES if FUZZ else 600
    done  = 0
    while done < total:
        count = min(100, total - done)
        frames = [(random_frame(rng), rng.random() < 0.03) for _ in range(count)]
        idle, backpressure = rng.choice([0.0, 0.2, 0.6]), rng.choice([0.0, 0.3, 0.7])
        await bench.run_frames(frames, idle, backpressure)
        done += count
        if done % 10000 == 0:
            dut._log.info(f"{done} frames checked")
    with open(os.path.join(sim_build("rx_checksum"), "random_frames.count"), "w") as f:
        f.write(str(done))

@cocotb.test()
async def back_to_back_throughput(dut):
    """With source always ready, sink takes one beat per cycle across frame boundaries."""
    rng   = random.Random(SEED + 1)
    bench = await start(dut, rng)
    sizes  = [1, 2, 3, 4, 5, 13, 17, 42, 60, 61, 62, 63, 64, 1514]
    sizes += [rng.randrange(1, 300) for _ in range(40)]
    frames = []
    for size in sizes:
        frame = random_frame(rng, damage=0.0, runts=0.0)
        frame = (frame + bytes(max(0, size - len(frame))))[:size] if rng.random() < 0.5 else frame
        frames.append((frame, False))
    beats  = sum((len(f) + 3)//4 for f, _ in frames)
    cycles = await bench.run_frames(frames, idle=0.0, backpressure=0.0, check_no_bubbles=True)
    latency = cycles - beats
    dut._log.info(f"{len(frames)} frames, {beats} beats in {cycles} cycles (pipeline latency {latency})")
    assert latency <= 4

def short_frame(rng):
    """A frame of at most 72 bytes of random_frame's kinds (TCP, UDP, other IPv4, ARP, non-IP,
    VLAN, runts, damaged checksums and lengths), or now and then a 1..12-byte scrap (ends before the
    beat that clears the sums)."""
    if rng.random() < 0.05:
        return rng.randbytes(rng.randrange(1, 13))
    while True:
        frame = random_frame(rng, damage=0.4)
        if len(frame) <= 72:
            return frame

@cocotb.test()
async def short_frames_back_to_back(dut):
    """Back-to-back short frames of mixed kinds, good and bad checksums, never an idle cycle on
    sink, under backpressure from none to heavy: each status must stay with its frame while the
    next frames' first beats (and their third beat, which clears the sums) arrive as early as the
    core lets them."""
    rng   = random.Random(SEED + 2)
    bench = await start(dut, rng)
    for backpressure in (0.0, 0.5, 0.8, 0.9, 0.3):
        frames = [(short_frame(rng), rng.random() < 0.03) for _ in range(400 if FUZZ else 150)]
        # The sequence must be able to show a status out of step: neighbours that differ.
        kinds = [tuple(sorted(reference_status(f, int(e)).items())) for f, e in frames]
        differ = sum(a != b for a, b in zip(kinds, kinds[1:]))
        assert differ > len(frames)//2, f"only {differ} neighbouring frames differ in status"
        await bench.run_frames(frames, idle=0.0, backpressure=backpressure)

# Pytest entry -------------------------------------------------------------------------------------

def rx_checksum_verilog():
    from migen import Module
    from litedav.gateware.checksum import RxChecksum

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = RxChecksum()
            self.drive, self.monitor = PORTS.harness(self, {"sink": dut.sink, "source": dut.source})

    harness = Harness()
    return build_verilog("rx_checksum", harness, [harness.drive], [harness.monitor])

def test_rx_checksum_random_frames(capsys):
    run_cocotb("rx_checksum", "test_rx_checksum", rx_checksum_verilog(), "random_frames")
    with open(os.path.join(sim_build("rx_checksum"), "random_frames.count")) as f:
        count = int(f.read())
    with capsys.disabled():
        print(f"\nrx_checksum: {count} random frames checked (seed {SEED}{', fuzz' if FUZZ else ''})")

def test_rx_checksum_short_frames_back_to_back():
    run_cocotb("rx_checksum", "test_rx_checksum", rx_checksum_verilog(), "short_frames_back_to_back")

def test_rx_checksum_back_to_back_throughput():
    run_cocotb("rx_checksum", "test_rx_checksum", rx_checksum_verilog(), "back_to_back_throughput")
