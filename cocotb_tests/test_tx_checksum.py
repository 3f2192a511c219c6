#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate tests of litedav.gateware.tx_checksum.TxChecksum, with cocotb 1.9 and Verilator.

Every frame is built with scapy, which computes its checksums; the core is fed the same bytes with
the checksum fields it is asked to write zeroed or filled with garbage, and must give scapy's bytes
back. TSO segments (ip_length) also come with a random IPv4 total length and without the FIN/PSH
flags they are asked to set. Damaged frames (bad lengths, truncation, garbage) are checked against the reference model
below, itself checked against scapy on every intact frame.

    python3 -m pytest cocotb_tests/test_tx_checksum.py -q     # fast: 400 random frames
    LITEDAV_FUZZ=1 python3 -m pytest ... -q                    # long: 100,000 (LITEDAV_FUZZ_FRAMES)
    LITEDAV_SEED=n ...                                         # another random sequence (default 12345)
"""

import os
import random

import cocotb

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import checksum

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build
from frames import be16, corrupt, random_ip, random_packet, random_ports
from streams import ETH_PHY_32, Ports, Stream, StreamBus, StreamFrame, StreamSink, StreamSource, random_pauses

FUZZ_FRAMES = int(os.environ.get("LITEDAV_FUZZ_FRAMES", "100000"))
CUT_THROUGH = 4*512 # TxChecksum(cut_through_beats=512): longer frames are sent unchanged.

# What TxChecksum is asked to do, per frame (gateware/tx_checksum.py).
TX_CHECKSUM_PARAMS = [("ip_csum", 1), ("l4_csum", 1), ("ip_length", 1), ("tcp_flags", 8)]
PORTS = Ports(inputs={"sink": Stream(ETH_PHY_32, TX_CHECKSUM_PARAMS)}, outputs={"source": Stream(ETH_PHY_32)})

# Reference model ----------------------------------------------------------------------------------

def checksum_fields(frame):
    """Offsets of the IPv4 and TCP/UDP checksum fields of `frame`, None where there is none to write:
    not IPv4, too short, or (L4) another protocol or a fragment. Lengths are not checked."""
    n  = len(frame)
    l3 = 18 if n >= 14 and be16(frame, 12) == 0x8100 else 14
    if n < l3 + 20 or be16(frame, l3 - 2) != 0x0800:
        return None, None
    l4    = l3 + 4*(frame[l3] & 0xf)
    proto = frame[l3 + 9]
    if be16(frame, l3 + 6) & 0x3fff or proto not in (6, 17):
        return l3 + 10, None
    field = l4 + (16 if proto == 6 else 6)
    return l3 + 10, field if field + 2 <= n else None

def reference_frame(frame, ip_csum, l4_csum, ip_length=False, tcp_flags=0):
    """The frame TxChecksum must send for `frame` (bytes, no FCS) and the request flags."""
    n  = len(frame)
    l3 = 18 if n >= 14 and be16(frame, 12) == 0x8100 else 14
    if n > CUT_THROUGH:
        return frame # Too long to store: sent as it comes.
    if n < l3 + 20 or be16(frame, l3 - 2) != 0x0800:
        return frame # Not IPv4, or truncated.
    original = frame
    if ip_length:
        if frame[l3 + 9] != 6:
            return frame # ip_length is for TCP segments only.
        frame = bytearray(frame)
        frame[l3 + 2:l3 + 4] = (n - l3).to_bytes(2, "big") # The datagram ends with the frame.
        frame = bytes(frame)
    version, ihl = frame[l3] >> 4, frame[l3] & 0xf
    hlen, total_length = 4*ihl, be16(frame, l3 + 2)
    fragment, proto = be16(frame, l3 + 6) & 0x3fff, frame[l3 + 9]
    if version != 4 or ihl < 5 or total_length < hlen or n < l3 + total_length:
        return original
    out = bytearray(frame)
    l4_length = total_length - hlen
    segment   = bytearray(frame[l3 + hlen:l3 + total_length])
    write_l4  = l4_csum and not fragment and proto in (6, 17)
    if write_l4:
        if proto == 6 and (l4_length < 20 or segment[12] >> 4 < 5 or 4*(segment[12] >> 4) > l4_length):
            return original # RFC 793 3.1: data offset outside [5, segment length / 4].
        if proto == 17 and (l4_length < 8 or be16(segment, 4) != l4_length):
            return original # RFC 768: the UDP length is the datagram's.
        if proto == 6:
            segment[13] |= tcp_flags
            out[l3 + hlen + 13] = segment[13]
    if ip_csum:
        header = bytearray(frame[l3:l3 + hlen])
        header[10:12] = b"\0\0"
        out[l3 + 10:l3 + 12] = checksum(bytes(header)).to_bytes(2, "big")
    if write_l4:
        field = 16 if proto == 6 else 6
        segment[field:field + 2] = b"\0\0"
        pseudo_header = frame[l3 + 12:l3 + 20] + bytes([0, proto]) + l4_length.to_bytes(2, "big")
        value = checksum(pseudo_header + bytes(segment))
        if proto == 17 and value == 0:
            value = 0xffff # RFC 768: an all-zero checksum means "none".
        out[l3 + hlen + field:l3 + hlen + field + 2] = value.to_bytes(2, "big")
    return bytes(out)

# Frame generator ----------------------------------------------------------------------------------

def scramble(rng, frame, offset):
    frame[offset:offset + 2] = rng.choice([b"\0\0", b"\xff\xff", rng.randbytes(2)])

def segment_case(rng, damage):
    """A TSO segment (ip_length: TCP, total length and FIN/PSH still to be written), as
    (frame in, 1, 1, frame expected, 1, tcp_flags)."""
    eth = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
    if rng.random() < 0.3:
        eth = eth / Dot1Q(vlan=rng.randrange(4096))
    ip  = random_ip(rng, 6)
    tcp = TCP(seq=rng.getrandbits(32), flags=rng.randrange(256) & ~0x09, **random_ports(rng))
    payload   = Raw(rng.randbytes(rng.choice([0, 1, 2, 3, rng.randrange(0, 1500)])))
    tcp_flags = rng.choice([0, 0x01, 0x08, 0x09])
    expected  = eth / ip / tcp / payload
    expected[IP].len, expected[TCP].flags = None, int(tcp.flags) | tcp_flags
    frame = bytearray(bytes(eth / ip / tcp / payload))
    l3 = 18 if Dot1Q in expected else 14
    frame[l3 + 2:l3 + 4] = rng.randbytes(2) # Whatever the template said.
    for field in checksum_fields(bytes(frame)):
        if field is not None:
            scramble(rng, frame, field)
    if rng.random() < damage:
        corrupt(rng, frame)
    else:
        want = reference_frame(bytes(frame), True, True, True, tcp_flags)
        if checksum_fields(bytes(frame))[1] is not None: # Not a fragment: scapy's whole frame.
            assert want == bytes(expected), f"reference model disagrees with scapy on {bytes(expected).hex()}"
    return bytes(frame), True, True, reference_frame(bytes(frame), True, True, True, tcp_flags), True, tcp_flags

def random_case(rng, damage=0.25, runts=0.05, jumbo=0.005, segments=0.2):
    """(frame in, ip_csum, l4_csum, frame expected): scapy's frame, with the checksum fields the
    core must write scrambled in the input; fields it must leave alone are sometimes scrambled too,
    identically in input and expected. A few frames are longer than the core stores (consistent
    IPv4 jumbo frames): those must leave unchanged, and never wedge it."""
    if rng.random() < segments:
        return segment_case(rng, damage)
    if rng.random() < jumbo:
        frame = bytearray(bytes(Ether() / random_ip(rng, 17) / UDP(**random_ports(rng)) /
            Raw(rng.randbytes(rng.randrange(CUT_THROUGH - 40, 9000)))))
        scramble(rng, frame, 24)
        return bytes(frame), True, True, reference_frame(bytes(frame), True, True)
    expected = bytearray(bytes(random_packet(rng)))
    if len(expected) < 60 and rng.random() >= runts:
        expected += rng.randbytes(60 - len(expected)) # Padding: not part of any checksum.
    ip_csum, l4_csum = rng.random() < 0.85, rng.random() < 0.85
    ip_field, l4_field = checksum_fields(expected)
    frame = bytearray(expected)
    for field, write in ((ip_field, ip_csum), (l4_field, l4_csum)):
        if field is None:
            continue
        if write:
            scramble(rng, frame, field)
        elif rng.random() < 0.3:
            scramble(rng, frame, field)
            expected[field:field + 2] = frame[field:field + 2]
    if rng.random() < damage:
        corrupt(rng, frame)
        return bytes(frame), ip_csum, l4_csum, reference_frame(bytes(frame), ip_csum, l4_csum)
    assert reference_frame(bytes(frame), ip_csum, l4_csum) == bytes(expected), \
        f"reference model disagrees with scapy on {bytes(expected).hex()}"
    return bytes(frame), ip_csum, l4_csum, bytes(expected)

def test_reference_model_agrees_with_scapy():
    """The model writes scapy's checksums into intact frames and leaves damaged ones alone."""
    rng = random.Random(2)
    written = 0
    for _ in range(500):
        frame, ip_csum, l4_csum, expected, *_ = random_case(rng, damage=0.0)
        written += frame != expected
    assert written > 300
    packet = Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / Raw(b"abc")
    frame  = bytearray(bytes(packet))
    frame[16:18] = (len(frame) - 13).to_bytes(2, "big") # total_length past the frame's end.
    assert reference_frame(bytes(frame), True, True) == bytes(frame)
    jumbo = Ether() / IP() / UDP() / Raw(bytes(CUT_THROUGH))
    assert reference_frame(bytes(jumbo), True, True) == bytes(jumbo)

@cocotb.test()
async def long_frames(dut):
    """Frames around the store-and-forward limit, between normal frames: those longer than the
    FIFO stores leave unchanged, the others get their checksums; nothing is lost or wedged."""
    rng   = random.Random(SEED + 2)
    bench = await start(dut, rng)
    cases = []
    for size in [CUT_THROUGH - 3, CUT_THROUGH, CUT_THROUGH + 1, CUT_THROUGH + 4, 4000, 9000, 1514]:
        cases.append(random_case(rng, jumbo=0.0))
        packet = Ether() / random_ip(rng, 6) / TCP(**random_ports(rng))
        packet = packet / Raw(rng.randbytes(size - len(packet)))
        frame  = bytearray(bytes(packet))
        scramble(rng, frame, 24)
        cases.append((bytes(frame), True, True, reference_frame(bytes(frame), True, True)))
        assert (cases[-1][3] == bytes(packet)) == (size <= CUT_THROUGH)
    for idle, backpressure in ((0.0, 0.0), (0.3, 0.5), (0.0, 0.9)):
        await bench.run_frames(cases, idle, backpressure)

# Testbench ----------------------------------------------------------------------------------------

class Bench:
    """TxChecksum's sink driven by a StreamSource, its source taken by a StreamSink."""
    def __init__(self, dut, rng):
        self.rng    = rng
        self.bus    = StreamBus(dut, PORTS)
        self.source = StreamSource(self.bus, "sink", rng)
        self.sink   = StreamSink(self.bus, "source")

    async def run_frames(self, cases, idle, backpressure, errors=0.03):
        """Sends cases [(frame, ip_csum, l4_csum, expected[, ip_length, tcp_flags])] with random
        idle cycles on sink and random backpressure on source; checks every beat out: error bits,
        padding to 60 bytes and the zeroed lanes after each frame's end included.
        Returns (cycles, cycles with sink valid but not ready, cycle of the first and last beat out)."""
        rng, bus, source, sink = self.rng, self.bus, self.source, self.sink
        beats_out = []
        for frame, ip_csum, l4_csum, expected, *extra in cases:
            ip_length, tcp_flags = extra or (False, 0)
            sent = StreamFrame(frame, dict(ip_csum=int(ip_csum), l4_csum=int(l4_csum),
                ip_length=int(ip_length), tcp_flags=tcp_flags), error=rng.random() < errors)
            source.send_nowait(sent)
            # Out: padded with zeros to 60 bytes, lanes after the end zero (never the garbage on sink).
            padded = expected.ljust(60, b"\0")
            count  = (len(padded) + 3)//4
            beats  = []
            for index in range(count):
                data_out = int.from_bytes(padded[4*index:4*index + 4].ljust(4, b"\0"), "little")
                last     = int(index == count - 1)
                last_be  = 1 << ((len(padded) - 1) % 4) if last else 0
                # The error bits are kept as one: a beat with any leaves with all four.
                error    = index < len(sent.beats) and sent.beats[index]["error"] != 0
                beats.append((data_out, last_be, 0xf if error else 0, last))
            beats_out.append(beats)
        source.set_pause_generator(random_pauses(rng, idle))
        sink.set_pause_generator(random_pauses(rng, backpressure))
        cycles = stall = sink_stalls = frames_done = 0
        first_out = last_out = None
        while frames_done < len(cases):
            await bus.step()
            cycles += 1
            stall  += 1
            sink_stalls += source.stalled
            if sink.transferred:
                stall = 0
                first_out = cycles if first_out is None else first_out
                last_out  = cycles
            if not sink.empty():
                got = [(b["data"], b["last_be"], b["error"], b["last"]) for b in sink.recv_nowait().beats]
                if got != beats_out[frames_done]:
                    frame, ip_csum, l4_csum, expected, *_ = cases[frames_done]
                    want  = beats_out[frames_done]
                    index = next(i for i, (a, b) in enumerate(zip(got + [None], want + [None])) if a != b)
                    assert False, f"frame {frames_done} (ip_csum {ip_csum:d}, l4_csum {l4_csum:d}) " \
                        f"beat {index}: got {got[index:index + 1]}, expected {want[index:index + 1]}\n" \
                        f"in       {frame.hex()}\nexpected {expected.hex()}"
                frames_done += 1
            # Store and forward: a frame leaves only once it is all in.
            assert stall < 40000, f"no output for 40000 cycles after {sink.beats_received} beats: the core is wedged"
        return cycles, sink_stalls, first_out, last_out

async def start(dut, rng):
    dut.drive.value = 0
    await reset(dut)
    return Bench(dut, rng)


@cocotb.test()
async def random_frames(dut):
    """Random frames under every mix of idle cycles and backpressure."""
    rng   = random.Random(SEED)
    bench = await start(dut, rng)
    total = FUZZ_FRAMES if FUZZ else 400
    done  = 0
    while done < total:
        count = min(100, total - done)
        cases = [random_case(rng) for _ in range(count)]
        idle, backpressure = rng.choice([0.0, 0.2, 0.6]), rng.choice([0.0, 0.3, 0.7])
        await bench.run_frames(cases, idle, backpressure)
        done += count
        if done % 10000 == 0:
            dut._log.info(f"{done} frames checked")
    with open(os.path.join(sim_build("tx_checksum"), "random_frames.count"), "w") as f:
        f.write(str(done))

def short_case(rng):
    """A frame of at most 72 bytes: random_case's kinds (TCP, UDP, other IPv4, ARP, non-IP, VLAN,
    TSO segments, runts, damage), or now and then a 1..12-byte scrap (ends before beat 3)."""
    if rng.random() < 0.05:
        frame = rng.randbytes(rng.randrange(1, 13))
        return frame, True, True, frame
    while True:
        case = random_case(rng, jumbo=0.0)
        if len(case[0]) <= 72:
            return case

@cocotb.test()
async def short_frames_back_to_back(dut):
    """Back-to-back short frames of mixed kinds, never an idle cycle on sink, under backpressure
    from none to heavy: each result must stay with its frame while the next frames' first beats
    (and their third beat, which clears the sums) arrive as early as the core lets them; frames
    shorter than 60 bytes leave padded with zeros, the garbage after each frame's end never."""
    rng   = random.Random(SEED + 3)
    bench = await start(dut, rng)
    for backpressure in (0.0, 0.5, 0.8, 0.95, 0.3):
        cases = [short_case(rng) for _ in range(400 if FUZZ else 120)]
        await bench.run_frames(cases, idle=0.0, backpressure=backpressure)

def sized_case(rng, size):
    """An intact TCP or UDP frame of exactly `size` bytes (60..1514), checksums to be written."""
    eth = Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
    if rng.random() < 0.3:
        eth = eth / Dot1Q(vlan=rng.randrange(4096))
    while True:
        ip = random_ip(rng, rng.choice([6, 17]))
        if not ip.frag and not ip.flags.MF:
            break
    l4 = TCP(seq=rng.getrandbits(32), flags="PA", **random_ports(rng)) if ip.proto == 6 \
        else UDP(**random_ports(rng))
    header = len(bytes(eth / ip / l4))
    expected = bytes(eth / ip / l4 / Raw(rng.randbytes(max(0, size - header))))
    expected += bytes(max(0, size - len(expected))) # Headers longer than a minimum frame: pad.
    frame = bytearray(expected)
    for field in checksum_fields(expected):
        scramble(rng, frame, field)
    assert reference_frame(bytes(frame), True, True) == expected
    return bytes(frame), True, True, expected

@cocotb.test()
async def back_to_back_throughput(dut):
    """Back-to-back minimum (60 B) and maximum (1514 B) frames with source always ready: no frame
    lost, no bubble on sink, frames per cycle against 1 Gbit/s at 125 MHz (1 byte per cycle)."""
    rng   = random.Random(SEED + 1)
    bench = await start(dut, rng)
    results = []
    for size, count in ((60, 200 if FUZZ else 60), (1514, 20 if FUZZ else 6)):
        cases  = [sized_case(rng, size) for _ in range(count)]
        cycles, sink_stalls, first_out, last_out = await bench.run_frames(cases, idle=0.0,
            backpressure=0.0, errors=0.0)
        beats  = count*((size + 3)//4)
        wire   = size + 4 + 8 + 12 # FCS, preamble + SFD, inter-frame gap: cycles at 1 byte/cycle.
        # Steady state: from the first beat out to the last, over the frames after the first.
        per_frame = (last_out - first_out + 1)/count
        dut._log.info(f"{count} x {size} B back to back: {beats} beats in, {cycles} cycles, "
            f"{sink_stalls} sink stalls, {per_frame:.2f} cycles/frame out = "
            f"{1/per_frame:.4f} frames/cycle; 1 Gbit/s needs {1/wire:.4f} ({wire} cycles/frame), "
            f"margin x{wire/per_frame:.1f}")
        assert sink_stalls == 0, f"sink stalled {sink_stalls} times on back-to-back {size} B frames"
        assert per_frame <= (size + 3)//4 + 1, f"{per_frame:.2f} cycles per {size} B frame out"
        assert per_frame < wire
        results.append(f"{size} B: {per_frame:.2f} cycles/frame (line rate {wire})")
    with open(os.path.join(sim_build("tx_checksum"), "throughput.txt"), "w") as f:
        f.write("; ".join(results))

# Pytest entry -------------------------------------------------------------------------------------

def tx_checksum_verilog():
    from migen import Module
    from litedav.gateware.tx_checksum import TxChecksum

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = TxChecksum()
            self.drive, self.monitor = PORTS.harness(self, {"sink": dut.sink, "source": dut.source})

    harness = Harness()
    return build_verilog("tx_checksum", harness, [harness.drive], [harness.monitor])

def test_tx_checksum_random_frames(capsys):
    run_cocotb("tx_checksum", "test_tx_checksum", tx_checksum_verilog(), "random_frames")
    with open(os.path.join(sim_build("tx_checksum"), "random_frames.count")) as f:
        count = int(f.read())
    with capsys.disabled():
        print(f"\ntx_checksum: {count} random frames checked (seed {SEED}{', fuzz' if FUZZ else ''})")

def test_tx_checksum_short_frames_back_to_back():
    run_cocotb("tx_checksum", "test_tx_checksum", tx_checksum_verilog(), "short_frames_back_to_back")

def test_tx_checksum_long_frames():
    run_cocotb("tx_checksum", "test_tx_checksum", tx_checksum_verilog(), "long_frames")

def test_tx_checksum_back_to_back_throughput(capsys):
    run_cocotb("tx_checksum", "test_tx_checksum", tx_checksum_verilog(), "back_to_back_throughput")
    with open(os.path.join(sim_build("tx_checksum"), "throughput.txt")) as f:
        with capsys.disabled():
            print(f"\ntx_checksum throughput: {f.read()}")
