#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate tests of litedav.gateware.tso.TSO, with cocotb 1.9 and Verilator.

Every TSO chain is a header template built with scapy (802.1Q or not, IPv4 and TCP options, random
flags, sequence number and ID) followed by a random payload; the expected segments are built
independently with scapy from the template's fields and slices of the payload.

TSO is cut-through and writes no lengths: it leaves the IPv4 total length and both checksum fields
as in the template and clears FIN and PSH; TxChecksum, asked by ip_length = ip_csum = l4_csum = 1,
writes the total length and the checksums, and sets the flags TSO passes in `tcp_flags` on the last
beat (the template's FIN and PSH, on the chain's last segment only). So each output segment must
equal the model's segment byte for byte, and once run through a scapy model of TxChecksum it must
equal the segment scapy builds with its own lengths and checksums.

    python3 -m pytest -q cocotb_tests/test_tso.py                 # fast: ~200 chains
    LITEDAV_FUZZ=1 python3 -m pytest -q cocotb_tests/test_tso.py  # 10,000 chains
                                                                  # (LITEDAV_FUZZ_CHAINS)
    LITEDAV_SEED=n ...                                            # another random sequence
"""

import os
import random

import cocotb

from scapy.layers.inet import IP, TCP, IPOption_NOP, IPOption_RR, IPOption_Router_Alert
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build
from streams import ETH_PHY_32, Ports, Stream, StreamBus, StreamFrame, StreamSink, StreamSource, random_pauses

FUZZ_CHAINS = int(os.environ.get("LITEDAV_FUZZ_CHAINS", "10000"))

# Per-frame params in (TxDMA -> TSO) and out (TSO -> TxChecksum), as gateware/tso.py lays them out;
# `error` is TSO's pulse for a frame it drops.
TX_OFFLOAD_PARAMS = [("ip_csum", 1), ("l4_csum", 1), ("tso", 1), ("hdr_len", 8), ("mss", 16)]
REQUEST_PARAMS    = [("ip_csum", 1), ("l4_csum", 1), ("ip_length", 1), ("tcp_flags", 8)]
PORTS = Ports(inputs={"sink": Stream(ETH_PHY_32, TX_OFFLOAD_PARAMS)},
              outputs={"source": Stream(ETH_PHY_32, REQUEST_PARAMS)}, monitor=[("error", 1)])

MAX_MSS          = 1920  # TSO(): the longest segment, 128 + 1920 bytes, fits in TxChecksum's store.
LONG_CHAIN       = 128 + 2**16 # Longer than any one descriptor: still cut in segments, whole.
FIN, PSH, CWR    = 0x01, 0x08, 0x80

# Reference model ----------------------------------------------------------------------------------

def random_template(rng):
    """A scapy Ether/[Dot1Q]/IP/TCP header template of at most 128 bytes. The IPv4 total length
    and both checksums are random: TSO must rewrite the first and leave the others alone."""
    while True:
        eth = Ether(src="02:00:00:%02x:%02x:%02x" % tuple(rng.randrange(256) for _ in range(3)),
            dst="02:00:00:00:00:01")
        if rng.random() < 0.3:
            eth = eth / Dot1Q(vlan=rng.randrange(4096), prio=rng.randrange(8))
        ip_options = rng.choice([[], [], [IPOption_NOP()], [IPOption_Router_Alert()],
            [IPOption_NOP(), IPOption_RR(routers=["10.0.0.%d" % i for i in range(rng.randrange(1, 10))])]])
        ip = IP(src="10.%d.%d.%d" % tuple(rng.randrange(256) for _ in range(3)),
            dst="192.168.%d.%d" % (rng.randrange(256), rng.randrange(256)),
            id=rng.randrange(65536), ttl=rng.randrange(1, 256), tos=rng.randrange(256),
            flags=rng.choice([0, "DF"]), options=ip_options, len=rng.randrange(65536),
            chksum=rng.randrange(65536))
        tcp_options = rng.choice([[], [], [("NOP", None), ("NOP", None), ("Timestamp", (rng.getrandbits(32), rng.getrandbits(32)))],
            [("MSS", 1460)], [("NOP", None), ("WScale", rng.randrange(15))],
            [("NOP", None), ("NOP", None), ("SAck", tuple(rng.getrandbits(32) for _ in range(2*rng.randrange(1, 5))))],
            [("MSS", 536), ("NOP", None), ("WScale", 7), ("SAckOK", b"")]])
        tcp = TCP(sport=rng.randrange(65536), dport=rng.randrange(65536), seq=rng.getrandbits(32),
            ack=rng.getrandbits(32), window=rng.randrange(65536), flags=rng.randrange(256),
            urgptr=rng.randrange(65536), chksum=rng.randrange(65536), options=tcp_options)
        template = eth / ip / tcp
        if len(bytes(template)) <= 128:
            return template

def expected_segments(template, payload, mss, with_checksums=False):
    """The frames TSO must send for `template` + `payload`: with the template's total length and
    checksum fields and without FIN and PSH, or (`with_checksums`) the frames TxChecksum then sends:
    lengths, flags and checksums computed by scapy."""
    count = max(1, -(-len(payload)//mss))
    flags = int(template[TCP].flags)
    segments = []
    for k in range(count):
        segment = template.copy()
        segment[IP].id = (template[IP].id + k) & 0xffff
        segment[TCP].seq = (template[TCP].seq + k*mss) & 0xffffffff
        segment[TCP].flags = flags & ~(FIN | PSH) & ~(CWR if k else 0)
        if with_checksums:
            if k == count - 1:
                segment[TCP].flags = flags & ~(CWR if k else 0)
            segment[IP].len = None
            segment[IP].chksum = None
            segment[TCP].chksum = None
        chunk = payload[k*mss:(k + 1)*mss]
        segments.append(bytes(segment / Raw(chunk)) if chunk else bytes(segment))
    return segments

def tx_checksum_model(frame, tcp_flags=0):
    """What TxChecksum does to a segment asking for ip_length, ip_csum and l4_csum, done by
    scapy."""
    # The length goes into the bytes first: scapy would cut the datagram at the template's.
    frame = bytearray(frame)
    l3 = 18 if frame[12:14] == b"\x81\x00" else 14
    frame[l3 + 2:l3 + 4] = (len(frame) - l3).to_bytes(2, "big")
    packet = Ether(bytes(frame))
    packet[IP].chksum = None
    packet[TCP].flags = int(packet[TCP].flags) | tcp_flags
    packet[TCP].chksum = None
    return bytes(packet)

def test_reference_model():
    """The model's segments reassemble into the template's payload and flags, with checksums that
    scapy accepts."""
    rng = random.Random(2)
    for _ in range(50):
        template = random_template(rng)
        mss      = rng.choice([1, 3, 536, 1460])
        payload  = rng.randbytes(rng.randrange(0, 50 if mss < 9 else 5000))
        segments = expected_segments(template, payload, mss, with_checksums=True)
        hdr_len  = len(bytes(template))
        assert b"".join(s[hdr_len:] for s in segments) == payload
        flags = 0
        raw = expected_segments(template, payload, mss)
        for k, frame in enumerate(segments):
            packet = Ether(frame)
            assert packet[IP].len == len(frame) - (18 if Dot1Q in packet else 14)
            assert packet[TCP].seq == (template[TCP].seq + k*mss) & 0xffffffff
            assert tx_checksum_model(frame) == frame
            last_flags = int(template[TCP].flags) & (FIN | PSH) if k == len(segments) - 1 else 0
            assert tx_checksum_model(raw[k], last_flags) == frame
            flags |= int(packet[TCP].flags)
        assert flags == int(template[TCP].flags)

# Stimulus -----------------------------------------------------------------------------------------

def random_payload_length(rng, mss, large):
    if rng.random() < large:
        return rng.randrange(0, 65536)
    return rng.choice([0, 1, 2, 3, rng.randrange(0, 100), rng.randrange(0, 3000),
        max(0, rng.randrange(1, 4)*mss + rng.randrange(-3, 4)), mss, mss + 1, mss - 1])

def random_mss(rng):
    if rng.random() < 0.06:
        return rng.randrange(1, 9)
    if rng.random() < 0.03:
        return rng.choice([MAX_MSS, rng.randrange(1461, MAX_MSS + 1)])
    return rng.choice([536, 1460, rng.randrange(536, 1461)])

class Chain:
    """One frame on sink: a TSO chain, a plain frame, or a bad TSO frame that must be dropped."""
    def __init__(self, frame, tso, hdr_len=0, mss=0, ip_csum=0, l4_csum=0, segments=(),
            fixed=(), bad=False, error=False):
        self.frame, self.tso, self.hdr_len, self.mss = frame, tso, hdr_len, mss
        self.ip_csum, self.l4_csum = ip_csum, l4_csum
        self.segments, self.fixed, self.bad = list(segments), list(fixed), bad
        self.error = error      # One beat with `error` set.
        self.error_byte = None  # First byte of that beat, once sent.
        self.beats = []         # Field values of each beat, once sent.

    def stream_frame(self):
        return StreamFrame(self.frame, dict(ip_csum=self.ip_csum, l4_csum=self.l4_csum, tso=self.tso,
            hdr_len=self.hdr_len, mss=self.mss), error=self.error)

def tso_chain(rng, large=0.0, mss=None, payload=None):
    template = random_template(rng)
    mss      = mss or random_mss(rng)
    if payload is None:
        length  = random_payload_length(rng, mss, large)
        # Tiny MSS: keep the number of segments sane.
        payload = rng.randbytes(min(length, 80) if mss < 9 else length)
    header = bytes(template)
    chain = Chain(header + payload, 1, len(header), mss,
        segments=expected_segments(template, payload, mss),
        fixed=expected_segments(template, payload, mss, with_checksums=True))
    chain.last_flags = int(template[TCP].flags) & (FIN | PSH)
    return chain

def plain_frame(rng):
    length = rng.choice([rng.randrange(1, 80), rng.randrange(60, 1515), rng.randrange(1, 9)])
    return Chain(rng.randbytes(length), 0, rng.randrange(256), rng.randrange(65536),
        rng.randrange(2), rng.randrange(2))

def bad_chain(rng):
    """A TSO frame TSO must drop and count."""
    chain = tso_chain(rng, mss=rng.choice([536, 1460]))
    frame, l3 = bytearray(chain.frame), 18 if Dot1Q in Ether(chain.frame) else 14
    kind = rng.choice(["short_hdr_len", "long_hdr_len", "mss_zero", "mss_large", "hdr_len_mismatch",
        "truncated", "not_ipv4", "version", "udp", "ihl", "data_offset", "arp", "ipv6"])
    if kind == "short_hdr_len":
        chain.hdr_len = rng.randrange(0, 54)
    elif kind == "long_hdr_len":
        chain.hdr_len = rng.choice([128, rng.randrange(129, 256)])
    elif kind == "mss_zero":
        chain.mss = 0
    elif kind == "mss_large":
        chain.mss = rng.choice([MAX_MSS + 1, rng.randrange(MAX_MSS + 1, 65536)])
    elif kind == "hdr_len_mismatch":
        chain.hdr_len += rng.choice([-1, 1])*rng.choice([1, 2, 3, 4, 8])
        if not 54 <= chain.hdr_len <= 128:
            chain.hdr_len = 54 if chain.hdr_len > 128 else 128
    elif kind == "truncated":
        frame = frame[:rng.randrange(1, chain.hdr_len)]
    elif kind == "not_ipv4":
        frame[l3 - 2:l3] = rng.choice([b"\x86\xdd", b"\x08\x06", b"\x81\x00", b"\x88\xa8"])
    elif kind == "version":
        frame[l3] = (frame[l3] & 0x0f) | (rng.choice([0, 6, 15]) << 4)
    elif kind == "udp":
        frame[l3 + 9] = rng.choice([17, 1, 0])
    elif kind == "ihl":
        frame[l3] = (frame[l3] & 0xf0) | rng.randrange(5)
    elif kind == "data_offset":
        l4 = l3 + 4*(frame[l3] & 0xf)
        frame[l4 + 12] = (frame[l4 + 12] & 0x0f) | (rng.randrange(5) << 4)
    elif kind == "arp":
        frame = bytearray(bytes(Ether() / ARP()) + rng.randbytes(rng.randrange(0, 200)))
        chain.hdr_len = 54
    else:
        frame = bytearray(bytes(Ether() / IPv6() / TCP()) + rng.randbytes(rng.randrange(0, 200)))
        chain.hdr_len = 74
    chain.frame, chain.bad, chain.segments, chain.fixed = bytes(frame), True, [], []
    return chain

def random_traffic(rng, count, large, bad=0.1, plain=0.25, errors=0.05):
    chains = []
    for _ in range(count):
        r = rng.random()
        if r < bad:
            chains.append(bad_chain(rng))
        elif r < bad + plain:
            chains.append(plain_frame(rng))
        else:
            chains.append(tso_chain(rng, large))
    for chain in chains:
        chain.error = rng.random() < errors
    return chains

# Testbench ----------------------------------------------------------------------------------------

class Checker:
    """Matches the frames out of TSO with what each chain on sink must give."""
    def __init__(self, chains):
        self.expected = []  # (chain, segment index or None for a plain frame)
        for chain in chains:
            if chain.bad:
                continue
            if chain.tso:
                self.expected += [(chain, k) for k in range(len(chain.segments))]
            else:
                self.expected.append((chain, None))
        self.frames = 0
        self.chain_errors = {} # chain -> error flags of its segments so far

    def frame(self, received):
        """Check a frame out (a StreamFrame from the StreamSink, which checked its last_be)."""
        assert self.frames < len(self.expected), "more frames out than expected"
        chain, k = self.expected[self.frames]
        self.frames += 1
        beats = received.beats
        flags = [(b["ip_csum"], b["l4_csum"], b["ip_length"]) for b in beats]
        tcp_flags = beats[-1]["tcp_flags"]
        if k is None:
            got  = [(b["data"], b["last_be"], b["error"]) for b in beats]
            want = [(b["data"], b["last_be"], b["error"]) for b in chain.beats]
            assert got == want, f"plain frame {chain.frame.hex()}: got {got}, expected {want}"
            assert set(flags) == {(chain.ip_csum, chain.l4_csum, 0)}, f"plain frame flags {set(flags)}"
            assert tcp_flags == 0, f"plain frame tcp_flags {tcp_flags:#x}"
            return
        frame = received.data
        assert set(flags) == {(1, 1, 1)}, f"segment flags {set(flags)}"
        last_flags = chain.last_flags if k == len(chain.segments) - 1 else 0
        assert tcp_flags == last_flags, f"segment {k}/{len(chain.segments)}: tcp_flags " \
            f"{tcp_flags:#x}, expected {last_flags:#x}"
        expected = chain.segments[k]
        assert frame == expected, f"chain hdr_len {chain.hdr_len} mss {chain.mss} payload " \
            f"{len(chain.frame) - chain.hdr_len} segment {k}/{len(chain.segments)}, {len(frame)} bytes " \
            f"for {len(expected)}:\n" \
            f" got      {frame.hex()}\n expected {expected.hex()}"
        assert tx_checksum_model(frame, tcp_flags) == chain.fixed[k]
        # Cut-through: `error` is set from the first beat that used an input beat with error on,
        # and stays set for the rest of the chain.
        errors = [b["error"] for b in beats]
        assert set(errors) <= {0, 0xf}, f"segment error bits {errors}"
        previous = self.chain_errors.setdefault(id(chain), [])
        for error in errors:
            assert not (previous and previous[-1] and not error), "error cleared within a chain"
            previous.append(error != 0)
        segment_end = chain.hdr_len + sum(len(s) - chain.hdr_len for s in chain.segments[:k + 1])
        error = errors[-1] != 0
        if chain.error_byte is not None and chain.error_byte < segment_end:
            assert error, f"segment {k} ends after the error beat at {chain.error_byte} but has no error"
        else:
            assert not any(errors), f"segment {k} ends before any error beat but has error set"

class Bench:
    """TSO's sink driven by a StreamSource, its source taken by a StreamSink."""
    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.bus    = StreamBus(dut, PORTS)
        self.source = StreamSource(self.bus, "sink", rng)
        self.sink   = StreamSink(self.bus, "source")

    async def run_traffic(self, chains, idle, backpressure, check_no_bubbles=False):
        """Sends chains with random idle cycles on sink and backpressure on source; checks every
        frame out, the error pulses and the error counter (one per bad chain).
        Returns (cycles, output beats, cycles of the first and the last output beat, checker)."""
        bus, source, sink = self.bus, self.source, self.sink
        for chain in chains:
            sent = chain.stream_frame()
            source.send_nowait(sent)
            chain.beats = sent.beats
            for index, beat in enumerate(chain.beats):
                if beat["error"]:
                    chain.error_byte = 4*index
        source.set_pause_generator(random_pauses(self.rng, idle))
        sink.set_pause_generator(random_pauses(self.rng, backpressure))
        checker = Checker(chains)
        errors  = sum(chain.bad for chain in chains)
        errors_before = int(self.dut.errors.value)
        cycles = stall = error_pulses = beats_out = 0
        first_out = last_out = None
        while checker.frames < len(checker.expected) or not source.idle() or stall < 20:
            await bus.step()
            cycles += 1
            stall  += 1
            if source.transferred:
                stall = 0
            elif check_no_bubbles:
                assert not source.stalled, f"sink not ready at beat {source.beats_sent} of back-to-back plain frames"
            if sink.transferred:
                stall = 0
                beats_out += 1
                last_out = cycles
                if first_out is None:
                    first_out = cycles
            if not sink.empty():
                checker.frame(sink.recv_nowait())
            error_pulses += bus.get("error")
            assert stall < 3000, f"no progress for 3000 cycles after {source.beats_sent} beats in, " \
                f"{checker.frames} frames out: the core is wedged"
        assert checker.frames == len(checker.expected)
        assert sink.idle(), "a frame out without its last beat"
        assert error_pulses == errors, f"{error_pulses} error pulses for {errors} bad chains"
        assert int(self.dut.errors.value) == (errors_before + errors) & 0xffff, "error counter"
        return cycles, beats_out, first_out, last_out, checker

async def start(dut, rng):
    dut.drive.value = 0
    await reset(dut)
    return Bench(dut, rng)

@cocotb.test()
async def random_chains(dut):
    """TSO chains, plain frames and bad frames under every mix of idle cycles and backpressure."""
    rng   = random.Random(SEED)
    bench = await start(dut, rng)
    total = FUZZ_CHAINS if FUZZ else 200
    done  = segments = 0
    while done < total:
        count  = min(20, total - done)
        large  = 0.02 if FUZZ else rng.choice([0.0, 0.0, 0.0, 0.05])
        chains = random_traffic(rng, count, large)
        idle, backpressure = rng.choice([0.0, 0.2, 0.6]), rng.choice([0.0, 0.3, 0.7])
        await bench.run_traffic(chains, idle, backpressure)
        done     += sum(chain.tso and not chain.bad for chain in chains)
        segments += sum(len(chain.segments) for chain in chains)
        if FUZZ and done // 1000 != (done - count) // 1000:
            dut._log.info(f"{done} TSO chains checked")
    with open(os.path.join(sim_build("tso"), "random_chains.count"), "w") as f:
        f.write(f"{done} {segments}")

@cocotb.test()
async def oversized_chain(dut):
    """A chain longer than 64 KiB (more than one descriptor can hold) is segmented whole, the
    sequence number and ID wrapping; the next chain is intact."""
    rng   = random.Random(SEED + 2)
    bench = await start(dut, rng)
    chain = tso_chain(rng, mss=rng.choice([1460, 1459, 1461, MAX_MSS]),
        payload=rng.randbytes(LONG_CHAIN + 700))
    after = tso_chain(rng, mss=536, payload=rng.randbytes(2000))
    cycles, _, _, _, checker = await bench.run_traffic([chain, after], 0.1, 0.3)
    dut._log.info(f"oversized chain: {len(chain.segments)} segments in {cycles} cycles")

@cocotb.test()
async def throughput(dut):
    """Source always ready, sink always valid: output beats per cycle within long chains, cycles
    per short chain, and no bubble at all on plain frames."""
    rng   = random.Random(SEED + 1)
    bench = await start(dut, rng)
    results = []
    for mss, payload in [(1460, 30*1460), (536, 30*536), (1460, 30*1460 - 1)]:
        chain = tso_chain(rng, mss=mss, payload=rng.randbytes(payload))
        cycles, beats, first, last, _ = await bench.run_traffic([chain], 0.0, 0.0)
        # The template is checked before it leaves: measure from the first beat out.
        rate = beats/(last - first + 1)
        per_segment = (last - first + 1)/len(chain.segments)
        dut._log.info(f"mss {mss}, hdr_len {chain.hdr_len}: {len(chain.segments)} segments, "
            f"{beats} beats out in {last - first + 1} cycles: {rate:.4f} beats/cycle, "
            f"{per_segment:.1f} cycles/segment")
        assert rate > 0.985 if mss == 1460 else rate > 0.96
        results.append((mss, rate, per_segment))
    # Short chains back to back: whole chains per cycle (store-and-forward included).
    chains = [tso_chain(rng, mss=1460, payload=rng.randbytes(rng.randrange(0, 64))) for _ in range(40)]
    short_cycles, beats, first, last, _ = await bench.run_traffic(chains, 0.0, 0.0)
    wire = sum(max(60, len(c.segments[0])) + 4 + 8 + 12 for c in chains) # + FCS, preamble, IFG.
    dut._log.info(f"40 short chains in {short_cycles} cycles ({short_cycles/40:.1f} cycles/chain; "
        f"{wire/40:.1f} wire byte times/frame at 1 Gbit/s)")
    assert short_cycles < wire
    # Plain frames: one beat per cycle, no bubble.
    plain = [plain_frame(rng) for _ in range(30)]
    cycles, beats, first, last, _ = await bench.run_traffic(plain, 0.0, 0.0, check_no_bubbles=True)
    assert last - first + 1 == sum(len(c.beats) for c in plain)
    with open(os.path.join(sim_build("tso"), "throughput.txt"), "w") as f:
        for mss, rate, per_segment in results:
            f.write(f"mss {mss}: {rate:.4f} beats/cycle, {per_segment:.1f} cycles/segment\n")
        f.write(f"short chains (payload 0..63): {short_cycles/40:.1f} cycles/chain, "
            f"{wire/40:.1f} byte times each on a 1 Gbit/s wire\n")

# Pytest entry -------------------------------------------------------------------------------------

def tso_verilog():
    from migen import Module, Signal
    from litedav.gateware.tso import TSO

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = TSO()
            assert dut.max_mss == MAX_MSS
            self.drive, self.monitor = PORTS.harness(self, {"sink": dut.sink, "source": dut.source},
                monitor={"error": dut.error})
            self.errors = Signal(16, name="errors")
            self.comb += self.errors.eq(dut.errors)

    harness = Harness()
    return build_verilog("tso", harness, [harness.drive], [harness.monitor, harness.errors])

def test_tso_random_chains(capsys):
    run_cocotb("tso", "test_tso", tso_verilog(), "random_chains")
    with open(os.path.join(sim_build("tso"), "random_chains.count")) as f:
        chains, segments = map(int, f.read().split())
    with capsys.disabled():
        print(f"\ntso: {chains} TSO chains ({segments} segments) checked (seed {SEED}{', fuzz' if FUZZ else ''})")

def test_tso_oversized_chain():
    run_cocotb("tso", "test_tso", tso_verilog(), "oversized_chain")

def test_tso_throughput(capsys):
    run_cocotb("tso", "test_tso", tso_verilog(), "throughput")
    with open(os.path.join(sim_build("tso"), "throughput.txt")) as f:
        report = f.read()
    with capsys.disabled():
        print("\ntso throughput:\n" + report)
