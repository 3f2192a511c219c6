#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate tests of litedav.gateware.tx_dma.TxDMA, with cocotb 1.9 and Verilator.

Main RAM is cocotb_tests/wishbone_ram.py: it holds the TX ring and the buffers, answers with random
wait states and checks that nothing outside the ring and the buffer pool is read. A CPU model hands
random chains over (frames from scapy or random bytes, cut into 1..N descriptors at random byte
alignments, random flags, mss, empty and oversize descriptors), bumping tail at random times, in
mid-chain too, on rings small enough to wrap many times. Every frame out is checked byte for byte
with its parameters, every buffer word read is checked to be read once, in order, while its
descriptor is at head, and head, `done` and `errors` are checked against the reference model.

    python3 -m pytest -q cocotb_tests/test_tx_dma.py                  # fast: 500 chains
    LITEDAV_FUZZ=1 python3 -m pytest -q cocotb_tests/test_tx_dma.py   # 10,000 (LITEDAV_FUZZ_CHAINS)
    LITEDAV_SEED=n ...                                                # another random sequence
"""

import os
import random
from collections import deque

import cocotb

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build
from streams import ETH_PHY_32, Ports, Stream, StreamBus, StreamSink, random_pauses
from wishbone_ram import WishboneRAM, wishbone_ram_ports

FUZZ_CHAINS = int(os.environ.get("LITEDAV_FUZZ_CHAINS", "10000"))
FAST_CHAINS = int(os.environ.get("LITEDAV_FAST_CHAINS", "500"))

MAX_FRAME   = 1522
RAM_BASE    = 0x40000000
RAM_SIZE    = 1 << 20
RING_AREA   = RAM_BASE + 0x1000 # Rings are placed in [RING_AREA, BUFFERS).
BUFFERS     = RAM_BASE + 0x10000
SLOT_STRIDE = 0x1020            # One buffer area per ring slot, for fragments up to 4 KiB.
MAX_FRAGMENT = 4096

# TxDMA's source (its per-frame params as gateware/tso.py lays them out), and the DUT's signals the
# testbench watches, registered with it.
TX_OFFLOAD_PARAMS = [("ip_csum", 1), ("l4_csum", 1), ("tso", 1), ("hdr_len", 8), ("mss", 16)]
PARAMS = [name for name, _ in TX_OFFLOAD_PARAMS]
PORTS = Ports(outputs={"source": Stream(ETH_PHY_32, TX_OFFLOAD_PARAMS)}, monitor=[("head", 16),
    ("done", 1), ("zero_length_error", 1), ("oversize_error", 1), ("abort_error", 1),
    ("ring_error", 1), ("word_lost", 1)])
get = PORTS.get

# Reference model ----------------------------------------------------------------------------------

class Descriptor:
    def __init__(self, data, eop, ip_csum=0, l4_csum=0, tso=0, mss=0):
        self.data, self.eop = data, eop
        self.ip_csum, self.l4_csum, self.tso, self.mss = ip_csum, l4_csum, tso, mss
        self.take  = len(data) # Bytes TxDMA must read (set by expected_chain()).
        self.addr  = None

    def words(self):
        return 0 if self.take == 0 else ((self.addr & 3) + self.take + 3)//4

    def encode(self):
        word1 = len(self.data) | self.eop << 16 | self.ip_csum << 17 | self.l4_csum << 18 | self.tso << 19
        return b"".join(w.to_bytes(4, "little") for w in (self.addr, word1, self.mss, 0))

def expected_chain(descriptors):
    """The frame (bytes, params, cut) TxDMA must send for a chain, or None, and its error counts;
    sets each descriptor's `take` (bytes read)."""
    first = descriptors[0]
    params = dict(ip_csum=first.ip_csum, l4_csum=first.l4_csum, tso=first.tso,
        hdr_len=min(len(first.data), 255), mss=first.mss)
    frame, cut, zero, oversize = b"", False, 0, 0
    for d in descriptors:
        zero += len(d.data) == 0
        if cut:
            d.take = 0
        elif not first.tso and len(frame) + len(d.data) > MAX_FRAME:
            d.take = MAX_FRAME - len(frame)
            cut, oversize = True, 1
        else:
            d.take = len(d.data)
        frame += d.data[:d.take]
    result = (frame, params, cut) if frame else None
    return result, zero, oversize

# Chain generator ----------------------------------------------------------------------------------

def scapy_frame(rng, length_hint):
    eth = Ether(src="02:00:00:00:00:02", dst="02:00:00:%02x:%02x:%02x" % tuple(rng.randbytes(3)))
    if rng.random() < 0.2:
        eth = eth / Dot1Q(vlan=rng.randrange(4096))
    ip = IP(src="10.0.0.2", dst="10.0.%d.%d" % (rng.randrange(256), rng.randrange(256)),
        id=rng.randrange(65536))
    l4 = TCP(sport=80, dport=rng.randrange(1024, 65536), seq=rng.getrandbits(32), flags="PA") \
        if rng.random() < 0.6 else UDP(sport=53, dport=rng.randrange(1024, 65536))
    packet = eth / ip / l4
    return bytes(packet / Raw(rng.randbytes(max(0, length_hint - len(packet)))))

def split(rng, data, pieces):
    """`data` cut into `pieces` non-empty fragments (fewer if too short)."""
    pieces = max(1, min(pieces, len(data)))
    cuts = sorted(rng.sample(range(1, len(data)), pieces - 1)) if pieces > 1 else []
    return [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]

def fit(rng, data):
    """`data` cut into random pieces of at most MAX_FRAGMENT bytes (the buffer area of a slot)."""
    pieces = []
    while len(data) > MAX_FRAGMENT:
        n = rng.randrange(1, MAX_FRAGMENT + 1)
        pieces.append(data[:n])
        data = data[n:]
    return pieces + [data]

def random_chain(rng, max_fragments=6):
    """A list of Descriptors for one chain."""
    kind = rng.random()
    flags = dict(ip_csum=rng.getrandbits(1), l4_csum=rng.getrandbits(1), mss=rng.getrandbits(16))
    if kind < 0.15:
        # TSO: the header template alone, then the payload (no cut at 1522).
        header  = rng.randbytes(rng.choice([54, 58, 66, rng.randrange(1, 300)]))
        payload = rng.randbytes(rng.choice([0, rng.randrange(1, 200), rng.randrange(1, 6000)]))
        fragments = [header] + (split(rng, payload, rng.randrange(1, max_fragments + 1)) if payload else [])
        flags["tso"] = 1
    else:
        if kind < 0.20:
            frame = rng.randbytes(rng.randrange(MAX_FRAME + 1, 3000)) # Oversize: cut.
        elif kind < 0.55:
            frame = scapy_frame(rng, rng.choice([60, rng.randrange(42, 200), rng.randrange(42, 1515)]))
        elif kind < 0.75:
            frame = rng.randbytes(rng.randrange(1, 64))
        else:
            frame = rng.randbytes(rng.randrange(1, MAX_FRAME + 1))
        fragments = split(rng, frame, rng.choice([1, 1, 2, rng.randrange(1, max_fragments + 1)]))
        flags["tso"] = 0
    fragments = [f for piece in fragments for f in fit(rng, piece)]
    # Bad input: empty descriptors anywhere, the `eop` one included, or only empty ones.
    if rng.random() < 0.01:
        fragments = [b""]*rng.randrange(1, 4)
    for _ in range(3):
        if rng.random() < 0.03:
            fragments.insert(rng.randrange(len(fragments) + 1), b"")
    descriptors = [Descriptor(f, 0) for f in fragments]
    descriptors[-1].eop = 1
    first = descriptors[0]
    for name, value in flags.items():
        setattr(first, name, value)
    for d in descriptors[1:]:
        # Flags of later descriptors must be ignored.
        d.ip_csum, d.l4_csum, d.tso, d.mss = (rng.getrandbits(1), rng.getrandbits(1),
            rng.getrandbits(1), rng.getrandbits(16))
    return descriptors

# Testbench ----------------------------------------------------------------------------------------

class Bench:
    """Drives TxDMA: RAM, CPU (descriptors, tail), sink backpressure; checks everything it sees."""
    def __init__(self, dut, rng, wait=0.0):
        self.dut, self.rng = dut, rng
        self.ram = WishboneRAM(dut.wb_drive, dut.wb_monitor, RAM_SIZE, RAM_BASE, wait=wait, rng=rng)
        self.ram.clear_regions()
        self.ram.allow(RING_AREA, BUFFERS - RING_AREA, "r")
        self.ram.allow(BUFFERS, RAM_SIZE - (BUFFERS - RAM_BASE), "r")
        self.ram.on_access = self.on_access
        self.config = dict(base=RING_AREA, size=2, tail=0, enable=0)
        self.config_written = None
        self.bus  = StreamBus(dut, PORTS)
        self.sink = StreamSink(self.bus, "source")
        self.cycles = 0
        # Ring state as the CPU sees it.
        self.head = 0
        self.slots = []          # Descriptor in each slot (last handed over).
        self.words_read = []     # Buffer words read from each slot's descriptor.
        # Expectations.
        self.frames = deque()    # (bytes, params, cut) in order.
        self.zero = self.oversize = self.abort = 0
        self.expected_chains = 0
        self.done_pulses = 0
        self.events = dict(zero_length_error=0, oversize_error=0, abort_error=0)
        self.received = 0
        self.stall = 0

    # Ports ----------------------------------------------------------------------------------

    def write_config(self):
        c = self.config
        value = c["base"] | c["size"] << 32 | c["tail"] << 49 | c["enable"] << 65
        if value != self.config_written:
            self.dut.ring.setimmediatevalue(value)
            self.config_written = value

    def ring_base(self):
        return self.config["base"]

    def ring_size(self):
        return self.config["size"]

    def owned(self, slot):
        size = self.ring_size()
        return (slot - self.head) % size < (self.config["tail"] - self.head) % size

    # RAM checks -----------------------------------------------------------------------------

    def on_access(self, we, addr, value, sel):
        assert not we, f"TxDMA wrote {addr:#x}"
        base, size = self.ring_base(), self.ring_size()
        if base <= addr < base + 16*size:
            slot, word = (addr - base)//16, (addr - base)//4 % 4
            assert word < 3, f"descriptor word 3 (reserved) read at {addr:#x}"
            assert slot == self.head and self.owned(slot), \
                f"descriptor {slot} read, head {self.head}, tail {self.config['tail']}"
            return
        # A buffer read: of the descriptor at head, which the NIC owns.
        slot = self.head
        assert self.owned(slot), f"read of {addr:#x} with no descriptor handed over"
        d = self.slots[slot]
        expected = (d.addr & ~3) + 4*self.words_read[slot]
        assert addr == expected and self.words_read[slot] < d.words(), \
            f"slot {slot}: buffer word {addr:#x} read, expected {expected:#x} " \
            f"(descriptor {d.addr:#x}+{len(d.data)}, reads {d.take} bytes, {d.words()} words)"
        self.words_read[slot] += 1

    # CPU ------------------------------------------------------------------------------------

    def start_ring(self, size, base):
        assert base % 16 == 0 and RING_AREA <= base and base + 16*size <= BUFFERS
        self.config.update(base=base, size=size, tail=0, enable=1)
        self.slots = [None]*size
        self.words_read = [0]*size
        self.head = 0
        self.write_config()

    def free_slots(self):
        size = self.ring_size()
        return size - 1 - (self.config["tail"] - self.head) % size

    def queue_chain(self, descriptors, pending):
        frame, zero, oversize = expected_chain(descriptors)
        if frame is not None:
            self.frames.append(frame)
        self.zero += zero
        self.oversize += oversize
        self.expected_chains += 1
        pending.extend(descriptors)

    def hand_over(self, pending, count):
        """Write up to `count` pending descriptors into free slots, then bump tail."""
        size = self.ring_size()
        tail = self.config["tail"]
        for _ in range(min(count, self.free_slots(), len(pending))):
            d = pending.popleft()
            if d.addr is None:
                d.addr = BUFFERS + tail*SLOT_STRIDE + 8 + self.rng.randrange(16)
            # Garbage around the buffer: a misaligned read shows.
            self.ram.write(d.addr - 8, self.rng.randbytes(8) + d.data + self.rng.randbytes(8))
            self.ram.write(self.ring_base() + 16*tail, d.encode())
            self.slots[tail] = d
            self.words_read[tail] = 0
            tail = (tail + 1) % size
        self.config["tail"] = tail
        self.write_config()
        self.stall = 0

    # Per cycle ------------------------------------------------------------------------------

    def advance_head(self, head):
        size = self.ring_size()
        assert (head - self.head) % size <= (self.config["tail"] - self.head) % size, \
            f"head moved from {self.head} to {head}, past tail {self.config['tail']}"
        while self.head != head:
            d = self.slots[self.head]
            assert self.words_read[self.head] == d.words(), f"head passed slot {self.head} " \
                f"after {self.words_read[self.head]} of its {d.words()} buffer words"
            self.head = (self.head + 1) % size

    def receive(self, received):
        """A frame out (the StreamSink checked its last_be)."""
        beats = received.beats
        params = {name: beats[0][name] for name in PARAMS}
        for beat in beats:
            beat_params = {name: beat[name] for name in PARAMS}
            assert beat_params == params, f"params changed in mid-frame: {beat_params} != {params}"
        for beat in beats[:-1]:
            assert beat["error"] == 0, f"error {beat['error']:#x} before last"
        got = received.data
        assert self.frames, f"unexpected frame {got.hex()}"
        frame, expected_params, cut = self.frames.popleft()
        assert got == frame, f"frame {self.received}: got {len(got)} bytes {got[:64].hex()}..., " \
            f"expected {len(frame)} bytes {frame[:64].hex()}..." + \
            next((f" (first difference at byte {i})" for i in range(min(len(got), len(frame)))
                if got[i] != frame[i]), "")
        assert params == expected_params, f"frame {self.received}: params {params}, expected {expected_params}"
        error, last_be = beats[-1]["error"], beats[-1]["last_be"]
        assert error == (last_be if cut else 0), f"frame {self.received}: error {error:#06b}, cut {cut}"
        self.received += 1

    async def cycle(self):
        m = await self.bus.sample()
        self.cycles += 1
        self.ram.tick()
        self.stall += 1
        if self.sink.transferred:
            self.stall = 0
        if not self.sink.empty():
            self.receive(self.sink.recv_nowait())
        assert not get(m, "word_lost"), "a buffer word was lost: the FIFO was full at its ack"
        if get(m, "done"):
            self.done_pulses += 1
        for name in self.events:
            self.events[name] += get(m, name)
        head = get(m, "head")
        if head != self.head:
            if self.config["enable"] or head != 0:
                self.advance_head(head)
            else:
                self.head = 0 # Disabled: reset.
            self.stall = 0
        if self.head == self.config["tail"] and not self.frames and self.sink.idle():
            self.stall = 0 # Nothing to do.
        assert self.stall < 2000, "no progress for 2000 cycles: TxDMA is wedged"
        self.bus.drive()
        return m

    def set_backpressure(self, probability):
        self.sink.set_pause_generator(random_pauses(self.rng, probability))

    async def drain(self):
        """Until every handed-over chain is sent and head has caught up with tail."""
        while self.frames or self.head != self.config["tail"] or not self.sink.idle():
            await self.cycle()
        beats = self.sink.beats_received
        for _ in range(20):
            await self.cycle()
        assert self.sink.beats_received == beats, "output after the last expected frame"

    def check_counts(self):
        errors = int(self.dut.counters.value)
        expected_errors = self.zero + self.oversize + self.abort
        assert self.events == dict(zero_length_error=self.zero, oversize_error=self.oversize,
            abort_error=self.abort), f"error events {self.events}"
        assert errors == expected_errors & 0xffff, f"errors counter {errors}, expected {expected_errors}"
        assert self.done_pulses == self.expected_chains, \
            f"{self.done_pulses} done pulses, {self.expected_chains} chains"


async def start(dut, rng, wait=0.0):
    dut.ring.value = 0
    dut.drive.value = 1 # Ready.
    dut.wb_drive.value = 0
    bench = Bench(dut, rng, wait)
    await reset(dut)
    return bench


async def run_session(bench, chains, ring_size, bump=0.05, max_fragments=6):
    """Hand `chains` over on a fresh ring of `ring_size`, bumping tail at random times by random
    amounts (mid-chain too), until all are sent; then disable the engine (head returns to 0)."""
    rng = bench.rng
    base = RING_AREA + 16*rng.randrange((BUFFERS - RING_AREA)//16 - ring_size)
    bench.start_ring(ring_size, base)
    pending = deque()
    for descriptors in chains:
        bench.queue_chain(descriptors, pending)
    while pending:
        await bench.cycle()
        if rng.random() < bump:
            bench.hand_over(pending, rng.choice([1, 2, rng.randrange(1, ring_size + 1), ring_size]))
    await bench.drain()
    bench.config["enable"] = 0
    bench.write_config()
    for _ in range(5):
        await bench.cycle()
    assert bench.bus.get("head") == 0, "head not reset to 0 by enable = 0"
    bench.head = 0


@cocotb.test()
async def random_chains(dut):
    """Random chains on random rings, with random RAM wait states and sink backpressure."""
    rng = random.Random(SEED)
    bench = await start(dut, rng)
    total = FUZZ_CHAINS if FUZZ else FAST_CHAINS
    done = 0
    while done < total:
        count = min(rng.choice([20, 50, 100]), total - done)
        bench.ram.wait = rng.choice([0.0, 0.1, 0.5])
        bench.set_backpressure(rng.choice([0.0, 0.2, 0.7, 0.95]))
        ring_size = rng.choice([2, 3, 4, 7, 16, 33])
        await run_session(bench, [random_chain(rng) for _ in range(count)], ring_size,
            bump=rng.choice([0.01, 0.1, 0.5]))
        done += count
        if done % 1000 < count:
            dut._log.info(f"{done} chains checked")
    bench.check_counts()
    dut._log.info(f"{done} chains, {bench.received} frames, {bench.cycles} cycles; "
        f"RAM {bench.ram.reads} words read")
    with open(os.path.join(sim_build("tx_dma"), "random_chains.count"), "w") as f:
        f.write(f"{done} {bench.received} {bench.cycles} {bench.zero} {bench.oversize}")


@cocotb.test()
async def throughput(dut):
    """Zero wait states, sink always ready: bytes per cycle for 60- and 1514-byte frames."""
    rng = random.Random(SEED + 1)
    bench = await start(dut, rng)
    results = []
    for length, fragments in [(60, 1), (1514, 1), (60, 2), (1514, 3)]:
        for misaligned in (False, True):
            count = 64 if length == 60 else 12
            bench.start_ring(count*fragments + 1, RING_AREA)
            pending = deque()
            for _ in range(count):
                descriptors = [Descriptor(f, 0) for f in split(rng, rng.randbytes(length), fragments)]
                descriptors[-1].eop = 1
                bench.queue_chain(descriptors, pending)
            for slot, d in enumerate(pending):
                d.addr = BUFFERS + slot*SLOT_STRIDE + 8 + (rng.randrange(4) if misaligned else 0)
            bench.hand_over(pending, len(pending))
            first = last = None
            nbytes = 0
            while bench.frames or not bench.sink.idle():
                await bench.cycle()
                beat = bench.sink.transferred
                if beat:
                    first = bench.cycles if first is None else first
                    last = bench.cycles
                    nbytes += beat["last_be"].bit_length() if beat["last"] else 4
            await bench.drain()
            rate = nbytes/(last - first + 1)
            results.append(rate)
            dut._log.info(f"{count} x {length}-byte frames in {fragments} descriptor(s), "
                f"{'any' if misaligned else 'word'} alignment: {nbytes} bytes in {last - first + 1} "
                f"cycles = {rate:.2f} bytes/cycle")
            bench.config["enable"] = 0
            bench.write_config()
            for _ in range(3):
                await bench.cycle()
            bench.head = 0
            assert rate >= 1.0, f"{rate:.2f} bytes/cycle: below 1 Gbit/s at 125 MHz"
    bench.check_counts()
    with open(os.path.join(sim_build("tx_dma"), "throughput.txt"), "w") as f:
        f.write(" ".join(f"{r:.2f}" for r in results))

@cocotb.test()
async def errors_and_disable(dut):
    """Directed cases: tail >= size, size > 4096, enable cleared in mid-chain (with and without the rest of the
    chain handed over), 65535-byte descriptors at odd addresses, TSO and not."""
    rng = random.Random(SEED + 2)
    bench = await start(dut, rng, wait=0.2)
    bench.set_backpressure(0.3)

    # tail >= size: flagged, nothing read.
    bench.config.update(base=RING_AREA, size=4, tail=5, enable=1)
    bench.write_config()
    for _ in range(50):
        m = await bench.cycle()
    assert get(m, "ring_error") and bench.ram.busy_cycles == 0, "tail >= size must flag, not run"
    bench.config["enable"] = 0
    bench.write_config()
    for _ in range(3):
        m = await bench.cycle()
    assert not get(m, "ring_error")

    # A size past the 4096 descriptors that the 12-bit indices count: flagged, nothing read.
    bench.config.update(base=RING_AREA, size=4097, tail=1, enable=1)
    bench.write_config()
    for _ in range(50):
        m = await bench.cycle()
    assert get(m, "ring_error") and bench.ram.busy_cycles == 0, "size > 4096 must flag, not run"
    bench.config.update(size=4096, tail=0, enable=0)
    bench.write_config()
    for _ in range(3):
        m = await bench.cycle()
    assert not get(m, "ring_error")

    def chain(lengths, **flags):
        descriptors = [Descriptor(rng.randbytes(n), 0) for n in lengths]
        descriptors[-1].eop = 1
        for name, value in flags.items():
            setattr(descriptors[0], name, value)
        return descriptors

    async def wait_for_head(head):
        for _ in range(5000):
            await bench.cycle()
            if bench.head == head:
                return
        assert False, f"head did not reach {head}"

    # Disabled in mid-chain, the next descriptor not handed over: the frame so far ends with
    # `error`, head goes to 0, no `done`.
    for handed in (1, 2):
        bench.start_ring(8, RING_AREA + 0x100)
        descriptors = chain([70, 33, 20], ip_csum=1, mss=1460)
        frame = b"".join(d.data for d in descriptors[:handed])
        bench.frames.append((frame, dict(ip_csum=1, l4_csum=0, tso=0, hdr_len=70, mss=1460), True))
        bench.abort += 1
        pending = deque(descriptors)
        bench.hand_over(pending, handed)
        await wait_for_head(handed)
        for _ in range(rng.randrange(30)):
            await bench.cycle()
        bench.config["enable"] = 0
        bench.write_config()
        while bench.frames or not bench.sink.idle():
            await bench.cycle()
        for _ in range(5):
            m = await bench.cycle()
        assert get(m, "head") == 0, "head not reset after an abort"
        bench.head = 0
        bench.check_counts()

    # Disabled in mid-chain with the rest handed over at once: the chain is finished, then stop.
    bench.start_ring(8, RING_AREA + 0x200)
    pending = deque()
    bench.queue_chain(chain([100, 200, 300], l4_csum=1), pending)
    bench.queue_chain(chain([60]), pending) # Handed over while disabled: never sent.
    bench.frames.pop() # receive() fails on any frame not expected.
    bench.expected_chains -= 1
    bench.hand_over(pending, 1)
    await wait_for_head(1)
    bench.config["enable"] = 0
    bench.hand_over(pending, 3)
    for _ in range(3000):
        m = await bench.cycle()
        bench.stall = 0 # Stopped with descriptors handed over: that is the point.
    assert not bench.frames and bench.received and get(m, "head") == 0, \
        f"chain not finished after enable = 0 (head {get(m, 'head')})"
    bench.head = 0
    bench.check_counts()

    # Longest descriptors at odd addresses: a TSO chain, then a plain one cut at 1522 bytes.
    bench.start_ring(5, RING_AREA)
    pending = deque()
    bench.queue_chain(chain([66, 65535, 65535], tso=1, mss=1448), pending)
    bench.queue_chain(chain([65535], ip_csum=1), pending)
    for d, addr in zip(pending, [BUFFERS + 5, BUFFERS + 0x101, BUFFERS + 0x10202, BUFFERS + 0x20303]):
        d.addr = addr
    bench.set_backpressure(0.0)
    bench.hand_over(pending, 4)
    await bench.drain()
    bench.check_counts()
    assert bench.oversize == 1 and bench.received == 5
    with open(os.path.join(sim_build("tx_dma"), "errors_and_disable.count"), "w") as f:
        f.write(f"{bench.received} {bench.abort} {bench.oversize}")

# Pytest entry -------------------------------------------------------------------------------------

def tx_dma_verilog():
    from migen import Module, Signal
    from litedav.gateware.tx_dma import TxDMA

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = TxDMA()
            self.config   = Signal(66, name="ring")
            self.counters = Signal(16, name="counters")
            self.wb_drive, self.wb_monitor = wishbone_ram_ports(self, dut.bus)
            self.drive, self.monitor = PORTS.harness(self, {"source": dut.source}, monitor=dict(
                head=dut.head, done=dut.done, zero_length_error=dut.zero_length_error,
                oversize_error=dut.oversize_error, abort_error=dut.abort_error,
                ring_error=dut.ring_error,
                # White box: a word acknowledged on the bus that the FIFO could not take.
                word_lost=dut.bus.ack & dut.fifo.sink.valid & ~dut.fifo.sink.ready))
            self.comb += [
                # base 32, size 17, tail 16 bits (wider than the DUT's: values past its range
                # reach it cut, as the CPU's writes to narrower CSRs).
                dut.base.eq(self.config[:32]),
                dut.size.eq(self.config[32:49]),
                dut.tail.eq(self.config[49:65]),
                dut.enable.eq(self.config[65]),
            ]
            self.sync += self.counters.eq(dut.errors)

    harness = Harness()
    return build_verilog("tx_dma", harness, [harness.config, harness.drive, harness.wb_drive],
        [harness.monitor, harness.counters, harness.wb_monitor])

def test_tx_dma_random_chains(capsys):
    run_cocotb("tx_dma", "test_tx_dma", tx_dma_verilog(), "random_chains")
    with open(os.path.join(sim_build("tx_dma"), "random_chains.count")) as f:
        count, frames, cycles, zero, oversize = map(int, f.read().split())
    with capsys.disabled():
        print(f"\ntx_dma: {count} random chains checked ({frames} frames, {zero} empty and "
            f"{oversize} oversize descriptors, {cycles} cycles; seed {SEED}{', fuzz' if FUZZ else ''})")

def test_tx_dma_errors_and_disable():
    run_cocotb("tx_dma", "test_tx_dma", tx_dma_verilog(), "errors_and_disable")
    with open(os.path.join(sim_build("tx_dma"), "errors_and_disable.count")) as f:
        assert f.read() == "5 2 1"

def test_tx_dma_throughput(capsys):
    run_cocotb("tx_dma", "test_tx_dma", tx_dma_verilog(), "throughput")
    with open(os.path.join(sim_build("tx_dma"), "throughput.txt")) as f:
        rates = f.read()
    with capsys.disabled():
        print(f"\ntx_dma: bytes/cycle (60 B, 60 B unaligned, 1514 B, 1514 B unaligned, "
            f"60 B in 2, 60 B in 2 unaligned, 1514 B in 3, 1514 B in 3 unaligned): {rates}")
