#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Cycle-accurate tests of litedav.gateware.rx_dma.RxDMA, with cocotb 1.9 and Verilator.

The DUT's wishbone master talks to WishboneRAM (wishbone_ram.py), which holds the RX ring and the
buffers. A software model of the driver ("CPU") refills descriptors at a random pace, sometimes
letting the ring run empty; the frames come with random sizes (14..1522 bytes), random status
params and error bits. The sender is a token bucket filled at the rate of a 1 Gbit/s wire, one or
two bytes per cycle (sys_clk 125 or 62.5 MHz); each beat takes its bytes from it and each frame the
24 wire bytes the MAC strips. Phases alternate between two paces:

- wire: a bucket of one beat plus those 24 bytes. This is all a real MAC can do: its pipeline is
  never stalled (sink.ready is 1), so its clock-crossing FIFO stays empty and bytes come no faster
  than the wire. No frame may overrun the FIFO: the bus keeps up. Per frame, the engine needs
  ceil(n/4) data words + 4 descriptor words + about 8 cycles that cannot use the bus. With
  p = 0.3 wait states at 2 bytes/cycle that is about 1/0.7 cycle per word, e.g. 174 cycles for a
  445-byte frame (the mean of random_length) that takes 235 cycles on the wire. A stall of at most
  400 cycles adds at most 800 bytes (200 of the 512 FIFO words), and the bus then catches up.
- burst: a 6000-byte bucket. Up to 6000 bytes come at one beat per cycle, four bytes, twice the
  wire at 62.5 MHz and as fast as the best-case drain. Then any wait state or stall fills the FIFO,
  so a frame may overrun. It must then be dropped whole and counted: it is never handed back, and
  the frames around it stay intact. A burst phase ends when every frame has its outcome, so the
  next wire phase starts with an empty FIFO.

sink.ready must stay 1 (the MAC cannot be stalled): the testbench checks it on every edge and fails if
it ever drops. Each frame's outcome (handed back, dropped for an empty ring, for an error bit, for
a FIFO overrun) is read cycle by cycle from the DUT's `done` pulse and drop counters and checked
against the model:

- a handed-back frame: its buffer holds the frame byte for byte (cut to the buffer's size), words
  2 and 3 of its descriptor hold the length and status, `head` advanced by one (wrapping);
- an empty-ring drop is legal only if the ring was empty (or the engine disabled) while the frame
  was in flight; an error drop only for a frame with an error bit while drop_errors is 1;
- every bus access is checked as it happens: reads only of words 0-1 of descriptor `head`, writes
  only into that descriptor's buffer and to its words 3 then 2, and only while the NIC owns it.
  Nothing else in RAM may change (random guard bytes around every buffer and descriptor);
- a frame that overruns the FIFO must be a burst-paced one ("overrun at line rate" otherwise);
- at the end the DUT's (16-bit, wrapping) drop counters equal the model's.

    python3 -m pytest cocotb_tests/test_rx_dma.py -q           # fast
    LITEDAV_FUZZ=1 ...                                          # 100,000 frames (LITEDAV_FUZZ_FRAMES)
    LITEDAV_SEED=n ...                                          # another random sequence
"""

import itertools
import os
import random
from collections import deque

import cocotb

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build
from streams import ETH_PHY_32, Ports, Stream, StreamBus, StreamFrame, StreamSource
from wishbone_ram import WishboneRAM, wishbone_ram_ports

from litedav.gateware.checksum import rx_checksum_status_layout
from litedav.gateware.rx_dma import rx_dma_counters

FUZZ_FRAMES  = int(os.environ.get("LITEDAV_FUZZ_FRAMES", "100000"))
FAST_FRAMES  = 450
RAM_BASE     = 0x4000_0000 # Main RAM of the LiteX SoC: high address bits set.
RAM_SIZE     = 1 << 20
RING_AREA    = RAM_BASE + 0x100
ARENA        = RAM_BASE + 0x2_0000
SLOT         = 2048 + 64   # Arena bytes per ring slot: a buffer and guard bytes around it.
MAX_RING     = (RAM_SIZE - (ARENA - RAM_BASE))//SLOT
COUNTER_BITS = 16            # Width of the drop counters.
WIRE_OVERHEAD = 24         # Preamble 8, FCS 4, inter-frame gap 12: wire bytes the MAC strips.
WIRE_BUCKET   = WIRE_OVERHEAD + 4 # A MAC never stalled: at most one beat ahead of the wire.
BURST_BUCKET  = 6000       # Bursts faster than the wire (as if buffered upstream).

STATUS_FIELDS = rx_checksum_status_layout
# RxDMA's sink: RxChecksum's frames, the status valid on the last beat. The MAC cannot be stalled:
# `ready` is watched on every edge.
PORTS = Ports(inputs={"sink": Stream(ETH_PHY_32, STATUS_FIELDS, params_on_last_beat=True)},
              monitor=[("ready", 1)])

# Descriptor word 2 bits (docs/nic.md).
DONE, FRAME_ERROR, RUNT, TRUNCATED, LENGTH_ERROR, OVERFLOW, VLAN = range(16, 23)

# Frames -------------------------------------------------------------------------------------------

def random_length(rng):
    kind = rng.random()
    if kind < 0.4:
        return rng.randrange(14, 129)
    if kind < 0.7:
        return rng.randrange(60, 601)
    return rng.randrange(600, 1523)

def random_status(rng, frame_error):
    st = {name: rng.getrandbits(width) for name, width in STATUS_FIELDS}
    st["frame_error"] = int(frame_error)
    return st

class Frame(StreamFrame):
    """A frame out of RxChecksum: its status params, and error bits when status["frame_error"]."""
    def __init__(self, index, data, status):
        super().__init__(data, status, error=bool(status["frame_error"]))
        self.index    = index
        self.status   = status
        self.overrun  = False  # Dropped by the ingress (FIFO full), seen from the counters.
        self.burst    = False  # Sent while the bucket allowed more than the wire rate.
        self.first_cycle = None

# Driver model ("CPU") -----------------------------------------------------------------------------

class RingModel:
    """The driver's view of the RX ring: which descriptors the NIC owns and their buffers."""
    def __init__(self, ram, rng, base, size):
        self.ram, self.rng = ram, rng
        self.base, self.size = base, size
        self.tail = 0
        self.head = 0
        self.buffers = [None]*size  # (address, size) of the descriptors the NIC owns.
        self.to_refill = list(range(size))
        self.word3_written = False
        # Guard bytes: random everywhere, remembered to check that the NIC never writes there.
        ram.write(base, rng.randbytes(16*size))

    def owned(self, index):
        return (index - self.head) % self.size < (self.tail - self.head) % self.size

    def can_refill(self):
        # The CPU never fills the last free slot: a full ring is tail + 1 == head.
        return self.to_refill and (self.tail + 1) % self.size != self.head

    def refill(self):
        index = self.to_refill.pop(0)
        assert index == self.tail
        area = ARENA + index*SLOT + 32
        kind = self.rng.random()
        if kind < 0.7:
            size = self.rng.randrange(1522, 2000)
        elif kind < 0.93:
            size = self.rng.randrange(0, 1600)
        else:
            size = self.rng.randrange(0, 70)
        address = area + 4*self.rng.randrange(0, (SLOT - 64 - size)//4 + 1)
        self.buffers[index] = (address, size)
        d = self.base + 16*index
        self.ram.write_word(d, address)
        self.ram.write_word(d + 4, size | self.rng.getrandbits(16) << 16) # Upper half: reserved.
        self.ram.write_word(d + 8, 0)
        self.ram.write_word(d + 12, self.rng.getrandbits(32))
        self.tail = (self.tail + 1) % self.size

# Testbench ----------------------------------------------------------------------------------------

class Bench:
    def __init__(self, dut, rng, bytes_per_cycle=2, bucket=BURST_BUCKET):
        self.dut, self.rng = dut, rng
        self.ram = WishboneRAM(dut.wb_drive, dut.wb_monitor, size=RAM_SIZE, base=RAM_BASE, rng=rng)
        self.ram.write(RAM_BASE, rng.randbytes(RAM_SIZE))
        self.initial = bytes(self.ram.mem)
        self.ram.clear_regions()
        self.ram.allow(RAM_BASE, RAM_SIZE, "r")
        self.ram.on_access = self.on_access
        self.cycle = 0
        self.head = 0
        self.enable = 0
        self.drop_errors = 1
        self.ring = None
        self.control_value = None
        self.counts = {name: 0 for name in rx_dma_counters + ["received", "overflow", "runts"]}
        self.nibbles = 0
        # Frames sent, waiting for their outcome, in order.
        self.in_flight = []
        self.frames_sent = 0
        self.outcomes = 0
        self.last_empty_cycle = -1
        # Sender.
        self.bytes_per_cycle = bytes_per_cycle
        self.bucket = bucket
        self.tokens = bucket
        self.bus    = StreamBus(dut, PORTS)
        self.source = StreamSource(self.bus, "sink", rng)
        self.source.set_pause_generator(self.wire_pace())
        self.bytes_left = 0       # Bytes of the frame being sent not yet in a beat.
        self.spacing = 1
        self.wait_beats = 0
        self.refill_rate = 0.05
        self.written_bytes = 0
        self.bytes_sent = 0
        self.burst_frames = 0
        self.next_length = None

    # Control and monitor ------------------------------------------------------------------------

    def drive_control(self):
        r = self.ring
        value = (r.base | r.size << 32 | r.tail << 49 | self.enable << 65 | self.drop_errors << 66)
        if value != self.control_value:
            self.dut.control.setimmediatevalue(value)
            self.control_value = value

    def new_ring(self, size):
        base = RING_AREA + 16*self.rng.randrange(0, 64)
        assert base + 16*size <= ARENA and size <= MAX_RING
        self.ram.clear_regions()
        self.ram.allow(RAM_BASE, RAM_SIZE, "r")
        self.ram.allow(base, 16*size, "rw")
        self.ram.allow(ARENA, SLOT*size, "w")
        self.ring = RingModel(self.ram, self.rng, base, size)
        self.head = 0
        self.drive_control()

    # Bus checks, called by the RAM for every transfer (with `head` as before the edge) -----------

    def on_access(self, we, addr, value, sel):
        r = self.ring
        index = self.head
        desc = r.base + 16*index
        assert r.owned(index), f"bus access at {addr:#x} while descriptor {index} is the CPU's"
        if not we:
            assert addr in (desc, desc + 4), f"read of {addr:#x}: not words 0-1 of descriptor {index}"
            return
        if addr == desc + 12:
            assert not r.word3_written, "descriptor word 3 written twice"
            r.word3_written = True
            return
        if addr == desc + 8:
            assert r.word3_written, "descriptor word 2 written before word 3"
            r.word3_written = False
            return
        assert not r.word3_written, f"buffer write at {addr:#x} after descriptor word 3"
        address, size = r.buffers[index]
        for lane in range(4):
            if sel >> lane & 1:
                assert address <= addr + lane < address + size, (f"write of byte {addr + lane:#x} "
                    f"outside buffer {address:#x}+{size} of descriptor {index}")
        self.written_bytes += bin(sel).count("1")

    # Outcomes -----------------------------------------------------------------------------------

    def next_frame(self):
        while self.in_flight and self.in_flight[0].overrun:
            self.in_flight.pop(0)
        assert self.in_flight, "an outcome without a frame in flight"
        return self.in_flight.pop(0)

    def received(self, increments):
        frame = self.next_frame()
        r = self.ring
        index = self.head
        assert not (frame.status["frame_error"] and self.drop_errors), \
            f"frame {frame.index} with an error bit handed back while drop_errors is 1"
        assert r.owned(index), f"descriptor {index} handed back but the CPU owns it"
        address, size = r.buffers[index]
        stored = min(len(frame.data), size)
        desc = r.base + 16*index
        st = frame.status
        word2 = (stored | 1 << DONE | st["frame_error"] << FRAME_ERROR | st["runt"] << RUNT |
            st["truncated"] << TRUNCATED | st["length_error"] << LENGTH_ERROR |
            int(stored < len(frame.data)) << OVERFLOW | st["vlan"] << VLAN |
            st["l3_status"] << 24 | st["l4_status"] << 26)
        word3 = st["protocol"] | st["l3_offset"] << 8 | st["l4_offset"] << 16
        got2, got3 = self.ram.read_word(desc + 8), self.ram.read_word(desc + 12)
        assert (got2, got3) == (word2, word3), (f"frame {frame.index} ({len(frame.data)} bytes, "
            f"buffer {size}) descriptor {index}: words 2,3 {got2:#010x} {got3:#010x}, expected "
            f"{word2:#010x} {word3:#010x}")
        got = self.ram.read(address, stored)
        if got != frame.data[:stored]:
            first = next(i for i in range(stored) if got[i] != frame.data[i])
            assert False, f"frame {frame.index}: buffer differs from byte {first} on ({stored} bytes)"
        self.counts["overflow"] += stored < len(frame.data) # The driver's own counts, for the report.
        self.counts["runts"] += st["runt"]
        # The CPU takes the frame: the buffer's bytes are the guard bytes again for the next check.
        self.restore(address, size)
        r.buffers[index] = None
        r.to_refill.append(index)
        r.head = (index + 1) % r.size

    def observe(self, m):
        """Counters moved at the edge that just passed: attribute the changes to frames."""
        head = m & 0xffff
        assert self.bus.get("ready"), "sink.ready dropped: the MAC would lose data"
        nibbles = m >> 17
        increments = {}
        for i, name in enumerate(rx_dma_counters):
            delta = ((nibbles >> 4*i) - (self.nibbles >> 4*i)) & 0xf
            assert delta <= 1, f"{name} moved by {delta} in one cycle"
            increments[name] = delta
            self.counts[name] += delta
        self.nibbles = nibbles
        increments["received"] = m >> 16 & 1 # `done`: a descriptor handed back.
        self.counts["received"] += increments["received"]
        if increments["dropped_overrun"]:
            frame = self.source.transferred
            assert frame is not None, "overrun counted without a beat on sink"
            assert not frame.overrun, f"frame {frame.index} overrun counted twice"
            assert frame.burst, (f"overrun at line rate: frame {frame.index} ({len(frame.data)} "
                f"bytes) dropped for a full FIFO at cycle {self.cycle}, sent at wire pace "
                f"({self.bytes_per_cycle} bytes/cycle, RAM wait {self.ram.wait})")
            frame.overrun = True
            self.outcomes += 1
        outcome = [name for name in ("received", "dropped_empty", "dropped_error") if increments[name]]
        assert len(outcome) <= 1, f"two outcomes in one cycle: {outcome}"
        if not outcome:
            assert head == self.head or (head == 0 and not self.enable), \
                f"head moved from {self.head} to {head} without a frame"
        elif outcome[0] == "received":
            self.received(increments)
            assert head == (self.head + 1) % self.ring.size, \
                f"head {head} after descriptor {self.head} (ring size {self.ring.size})"
            self.outcomes += 1
        else:
            frame = self.next_frame()
            if outcome[0] == "dropped_error":
                assert frame.status["frame_error"] and self.drop_errors, \
                    f"frame {frame.index} dropped for an error it does not have"
            else:
                assert not (frame.status["frame_error"] and self.drop_errors), \
                    f"frame {frame.index} with an error counted as dropped for an empty ring"
                assert self.last_empty_cycle >= frame.first_cycle, (f"frame {frame.index} "
                    f"dropped for an empty ring, but the ring was not empty since cycle {frame.first_cycle}")
            self.outcomes += 1
        self.head = head

    # Sender -------------------------------------------------------------------------------------

    def send(self, frames_left):
        """Start a frame when the wire allows: its preamble and gap are taken from the bucket here,
        its bytes beat by beat by wire_pace()."""
        self.tokens = min(self.bucket, self.tokens + self.bytes_per_cycle)
        if self.next_length is None:
            self.next_length = random_length(self.rng)
        if self.source.idle() and frames_left and self.rng.random() < 0.7:
            length = self.next_length
            if self.tokens >= WIRE_OVERHEAD:
                self.next_length = None
                self.tokens -= WIRE_OVERHEAD
                error = self.rng.random() < 0.08
                frame = Frame(self.frames_sent, self.rng.randbytes(length), random_status(self.rng, error))
                frame.first_cycle = self.cycle
                frame.burst = self.bucket > WIRE_BUCKET
                self.burst_frames += frame.burst
                self.frames_sent += 1
                self.bytes_sent += length
                self.in_flight.append(frame)
                self.source.send_nowait(frame)
                self.bytes_left = length
                self.spacing = self.rng.choice([1, 1, 1, 2, 4])
                self.wait_beats = 0

    def wire_pace(self):
        """The source's pause generator: a beat comes `spacing` cycles after the one before at the
        earliest, and once the bucket holds its bytes."""
        while True:
            beat_bytes = min(4, self.bytes_left)
            if self.wait_beats:
                self.wait_beats -= 1
                yield True
            elif self.tokens >= beat_bytes:
                self.tokens -= beat_bytes
                self.bytes_left -= beat_bytes
                self.wait_beats = self.spacing - 1
                yield False
            else:
                yield True

    # Cycle --------------------------------------------------------------------------------------

    async def step(self, frames_left=0):
        await self.bus.sample()
        self.cycle += 1
        self.ram.tick()
        self.observe(int(self.dut.registers.value))
        r = self.ring
        if r is not None and self.enable:
            while r.can_refill() and self.rng.random() < self.refill_rate:
                r.refill()
            self.drive_control()
        if not self.enable or self.head == r.tail:
            self.last_empty_cycle = self.cycle
        self.send(frames_left)
        self.bus.drive()

    async def drain(self, limit=20000):
        """Let every frame sent get its outcome."""
        for _ in range(limit):
            if not self.in_flight or all(f.overrun for f in self.in_flight):
                self.in_flight.clear()
                return
            await self.step()
        assert False, f"{len(self.in_flight)} frames without an outcome after {limit} cycles"

    async def reconfigure(self, size, frames_left):
        """Disable while traffic goes on, wait for the frame boundary, set up a new ring."""
        self.enable = 0
        self.drive_control()
        pending = list(self.in_flight)
        for _ in range(20000):
            await self.step(frames_left)
            if all(f not in self.in_flight for f in pending):
                break
        for _ in range(100):
            await self.step(frames_left)
        assert self.head == 0, f"head {self.head} with enable 0"
        self.check_guard()
        # The CPU takes every buffer back: their bytes are guard bytes again, as is the old ring.
        old = self.ring
        for buffer in old.buffers:
            if buffer is not None:
                self.restore(*buffer)
        self.restore(old.base, 16*old.size)
        self.drop_errors = self.rng.choice([0, 1, 1])
        self.new_ring(size)
        while self.ring.can_refill() and self.rng.random() < 0.9:
            self.ring.refill()
        self.enable = 1
        self.drive_control()

    def restore(self, address, size):
        self.ram.write(address, self.initial[address - RAM_BASE:address - RAM_BASE + size])

    def check_guard(self):
        """RAM equals its initial contents outside descriptors words and the buffers the NIC owns."""
        r = self.ring
        mem = self.ram.mem
        skip = []
        for index in range(r.size):
            d = r.base - RAM_BASE + 16*index
            skip.append((d, d + 16))
            if r.buffers[index] is not None:
                a, s = r.buffers[index]
                skip.append((a - RAM_BASE, a - RAM_BASE + s))
        skip.sort()
        position = 0
        for start, end in skip + [(RAM_SIZE, RAM_SIZE)]:
            if mem[position:start] != self.initial[position:start]:
                first = next(i for i in range(position, start) if mem[i] != self.initial[i])
                assert False, f"RAM changed at {first + RAM_BASE:#x}, outside buffers and descriptors"
            position = max(position, end)

    def check_counters(self):
        value = int(self.dut.counters.value)
        for i, name in enumerate(rx_dma_counters):
            got = value >> COUNTER_BITS*i & ((1 << COUNTER_BITS) - 1)
            assert got == self.counts[name] % (1 << COUNTER_BITS), f"counter {name}: {got}, model {self.counts[name]}"

async def start(dut, rng, **kwargs):
    dut.drive.value = 0
    dut.control.value = 0
    await reset(dut)
    bench = Bench(dut, rng, **kwargs)
    bench.nibbles = int(dut.registers.value) >> 17
    return bench


@cocotb.test()
async def random_traffic(dut):
    """Random frames, ring sizes, buffer sizes, refill pace, RAM wait states, enable toggling."""
    rng   = random.Random(SEED)
    bench = await start(dut, rng)
    total = FUZZ_FRAMES if FUZZ else FAST_FRAMES
    bench.enable = 1
    bench.new_ring(rng.randrange(2, 9))
    while bench.ring.can_refill():
        bench.ring.refill()
    bench.drive_control()
    sizes, waits = set(), set()
    next_report = 10000
    while bench.frames_sent < total:
        # A phase: a pace of the CPU, of the RAM and of the wire.
        bench.refill_rate = rng.choice([0.002, 0.01, 0.05, 0.3, 1.0])
        bench.bytes_per_cycle = rng.choice([1, 2])
        bench.ram.wait = rng.choice([0.0, 0.0, 0.1, 0.3] + ([0.5] if bench.bytes_per_cycle == 1 else []))
        waits.add(bench.ram.wait)
        burst = rng.random() < 0.3
        bench.bucket = BURST_BUCKET if burst else WIRE_BUCKET
        stall = rng.random() < 0.3
        phase_end = min(total, bench.frames_sent + rng.randrange(10, 80))
        cycles = 0
        while bench.frames_sent < phase_end:
            await bench.step(phase_end - bench.frames_sent)
            cycles += 1
            if stall and cycles % 3000 == 1000:
                # The bus is taken by someone else for a while: the FIFO must absorb it.
                saved, bench.ram.wait = bench.ram.wait, 1.0
                for _ in range(rng.randrange(50, 400)):
                    await bench.step(phase_end - bench.frames_sent)
                bench.ram.wait = saved
        if burst:
            # Faster than the wire: the FIFO may have overrun. Empty it before the wire pace again.
            await bench.drain()
        if rng.random() < 0.15:
            size = rng.choice([2, 3, rng.randrange(2, 17), rng.randrange(2, MAX_RING + 1)])
            sizes.add(size)
            await bench.reconfigure(size, 0)
        if bench.frames_sent >= next_report:
            dut._log.info(f"{bench.frames_sent} frames sent, {bench.counts}")
            next_report += 10000
    bench.refill_rate = 1.0
    await bench.drain()
    for _ in range(200):
        await bench.step()
    bench.check_counters()
    bench.check_guard()
    c = bench.counts
    assert c["received"] + c["dropped_empty"] + c["dropped_error"] + c["dropped_overrun"] == bench.frames_sent
    assert bench.burst_frames < bench.frames_sent, "no frame at wire pace: weak test"
    for name in ("received", "dropped_empty", "dropped_error", "overflow", "runts"):
        assert c[name] > 0 or bench.frames_sent < 200, f"nothing counted as {name}: weak test"
    dut._log.info(f"{bench.frames_sent} frames ({bench.bytes_sent} bytes) in {bench.cycle} cycles: {c}; {bench.ram.bursts} "
        f"burst beats, {bench.ram.writes} writes, {bench.ram.reads} reads")
    with open(os.path.join(sim_build("rx_dma"), "random_traffic.count"), "w") as f:
        f.write(f"{bench.frames_sent} {c['received']} {c['dropped_empty']} {c['dropped_error']} {c['overflow']} {bench.bytes_sent} {bench.cycle} {bench.ram.writes} {bench.ram.bursts} {bench.burst_frames} {c['dropped_overrun']}")


@cocotb.test()
async def throughput(dut):
    """Zero RAM wait states, descriptors always available: back-to-back frames at one beat per
    cycle (bursts the FIFO absorbs, to measure the engine's own rate), then at wire rate."""
    rng   = random.Random(SEED + 1)
    bench = await start(dut, rng)
    bench.enable = 1
    bench.new_ring(64)
    bench.refill_rate = 1.0
    while bench.ring.can_refill():
        bench.ring.refill()
    bench.drive_control()
    results = []
    for length, count, wire in [(60, 30, False), (1514, 24, False), (60, 600, True), (1514, 40, True)]:
        frames = deque(Frame(bench.frames_sent + i, rng.randbytes(length), random_status(rng, False))
            for i in range(count))
        bench.frames_sent += count
        start_cycle = bench.cycle
        first_done = last_done = None
        received = bench.counts["received"]
        gap = (length + WIRE_OVERHEAD + 1)//2 - (length + 3)//4 if wire else 0 # 2 bytes/cycle.
        # Each frame's beats one per cycle, then `gap` idle cycles.
        bench.source.set_pause_generator(itertools.cycle([False]*((length + 3)//4) + [True]*gap))
        while frames or bench.in_flight:
            await step_only(bench, frames)
            if bench.counts["received"] != received:
                received = bench.counts["received"]
                first_done = first_done or bench.cycle
                last_done = bench.cycle
        c = bench.counts
        assert c["dropped_overrun"] == 0 and c["dropped_empty"] == 0 and c["dropped_error"] == 0, c
        rate = (count - 1)/(last_done - first_done)
        wire_rate = 2/(length + WIRE_OVERHEAD)
        results.append((length, count, wire, rate))
        dut._log.info(f"{count} x {length}-byte frames {'at wire rate (2 bytes/cycle)' if wire else 'back-to-back at 1 beat/cycle'}: "
            f"{rate:.4f} frames/cycle ({rate*length:.2f} bytes/cycle) handed back, "
            f"{bench.cycle - start_cycle} cycles; 1 Gbit/s at 62.5 MHz is {wire_rate:.4f} frames/cycle")
        if not wire:
            assert rate > 1.5*wire_rate, "the engine has no margin over the wire at 62.5 MHz"
    bench.check_counters()
    with open(os.path.join(sim_build("rx_dma"), "throughput.txt"), "w") as f:
        for length, count, wire, rate in results:
            f.write(f"{length} {count} {int(wire)} {rate:.5f}\n")

async def step_only(bench, frames):
    """A cycle of throughput(): every descriptor refilled at once, the next of `frames` sent as
    soon as the one before is all taken."""
    await bench.bus.sample()
    bench.cycle += 1
    bench.ram.tick()
    bench.observe(int(bench.dut.registers.value))
    r = bench.ring
    while r.can_refill():
        r.refill()
    bench.drive_control()
    if frames and bench.source.idle():
        frame = frames.popleft()
        frame.first_cycle = bench.cycle
        bench.in_flight.append(frame)
        bench.source.send_nowait(frame)
    bench.bus.drive()


@cocotb.test()
async def overrun(dut):
    """A bus slower than the wire (a small FIFO, frames at 1 beat/cycle, RAM wait states): frames
    that find the FIFO full are dropped whole and counted; all others arrive intact."""
    rng   = random.Random(SEED + 2)
    bench = await start(dut, rng, bytes_per_cycle=4, bucket=1 << 30)
    bench.enable = 1
    bench.new_ring(8)
    bench.refill_rate = 1.0
    while bench.ring.can_refill():
        bench.ring.refill()
    bench.drive_control()
    bench.ram.wait = 0.5
    total = 250 if not FUZZ else 4000
    while bench.frames_sent < total:
        await bench.step(total - bench.frames_sent)
    await bench.drain()
    for _ in range(50):
        await bench.step()
    bench.check_counters()
    bench.check_guard()
    c = bench.counts
    assert c["dropped_overrun"] > 0 and c["received"] > 0, f"no overrun or nothing received: {c}"
    assert c["received"] + c["dropped_empty"] + c["dropped_error"] + c["dropped_overrun"] == total
    dut._log.info(f"{total} frames: {c}")

# Pytest entry -------------------------------------------------------------------------------------

def rx_dma_verilog(name, **kwargs):
    from migen import Module, Signal, Cat, C
    from litedav.gateware.rx_dma import RxDMA

    class Harness(Module):
        def __init__(self):
            self.submodules.dut = dut = RxDMA(**kwargs)
            self.drive, self.monitor = PORTS.harness(self, {"sink": dut.sink}, monitor={"ready": dut.sink.ready})
            self.control   = Signal(67, name="control") # base 32, size 17, tail 16, enable, drop_errors.
            self.registers = Signal(17 + 4*len(rx_dma_counters), name="registers")
            self.counters  = Signal(COUNTER_BITS*len(rx_dma_counters), name="counters")
            counters = [getattr(dut, name) for name in rx_dma_counters]
            self.comb += [
                dut.base.eq(self.control[:32]),
                dut.size.eq(self.control[32:49]),
                dut.tail.eq(self.control[49:65]),
                dut.enable.eq(self.control[65]),
                dut.drop_errors.eq(self.control[66]),
                # Registers of the DUT, read just after the edge that updated them.
                self.registers.eq(Cat(dut.head, C(0, 16 - len(dut.head)), dut.done, *[c[:4] for c in counters])),
                self.counters.eq(Cat(*counters)),
            ]
            self.wb_drive, self.wb_monitor = wishbone_ram_ports(self, dut.bus)

    harness = Harness()
    return build_verilog(name, harness, [harness.drive, harness.control, harness.wb_drive],
        [harness.monitor, harness.registers, harness.counters, harness.wb_monitor])

def test_rx_dma_random_traffic(capsys):
    run_cocotb("rx_dma", "test_rx_dma", rx_dma_verilog("rx_dma"), "random_traffic")
    with open(os.path.join(sim_build("rx_dma"), "random_traffic.count")) as f:
        (sent, received, empty, error, overflow, nbytes, cycles, writes, bursts, burst_frames,
            overrun) = map(int, f.read().split())
    with capsys.disabled():
        print(f"\nrx_dma: {sent} random frames checked: {received} handed back ({overflow} cut), "
            f"{empty} dropped for an empty ring, {error} for errors, {overrun} of the {burst_frames} sent "
            f"faster than the wire for an overrun, none of the {sent - burst_frames} at wire pace "
            f"(seed {SEED}{', fuzz' if FUZZ else ''})")

def test_rx_dma_throughput(capsys):
    run_cocotb("rx_dma", "test_rx_dma", rx_dma_verilog("rx_dma"), "throughput")
    with open(os.path.join(sim_build("rx_dma"), "throughput.txt")) as f:
        lines = [line.split() for line in f]
    with capsys.disabled():
        for length, count, wire, rate in lines:
            pace = "at wire rate, 2 bytes/cycle" if int(wire) else "back-to-back, 1 beat/cycle"
            print(f"\nrx_dma: {count} x {length}-byte frames {pace}: {float(rate):.4f} frames/cycle, "
                f"{float(rate)*int(length):.2f} bytes/cycle, no drops")

def test_rx_dma_overrun():
    run_cocotb("rx_dma_small_fifo", "test_rx_dma", rx_dma_verilog("rx_dma_small_fifo", fifo_depth=16,
        status_depth=4), "overrun")
