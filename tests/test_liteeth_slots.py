"""sim/liteeth_slots.py: LiteEth's MAC interface with its RX slots merged into one memory behaves
as LiteEth's own, cycle for cycle (Migen simulation of both side by side, about 40 s).

Both interfaces get the same frames (random lengths, some longer than the MTU, some with a bad
FCS, gaps inside frames, frames arriving while every slot is full) and the same bus traffic (reads
of received frames, reads of slots the MAC is writing at that moment, the event cleared at random
times). Every cycle, everything the CPU can see must be equal: the bus's ack and read data, the
slot, length and error CSRs and the event. The words the CPU reads must also be the frame's bytes,
so the comparison is not between two equally broken interfaces."""
import random

import pytest
from migen import Module, Signal, passive, run_simulation

from liteeth.mac.wishbone import LiteEthMACWishboneInterface

from litedav.sim.liteeth_slots import LiteEthSlotsError, MergedRxSlotsInterface

SLOT_STRIDE_WORDS = 512   # LiteEth's decoder spaces its 383-word slots by 2 KiB
SLOT_WORDS        = 383


class Harness(Module):
    def __init__(self, nrxslots):
        kwargs = dict(dw=32, nrxslots=nrxslots, ntxslots=2, endianness="little")
        self.submodules.stock  = LiteEthMACWishboneInterface(**kwargs)
        self.submodules.merged = MergedRxSlotsInterface(**kwargs)
        self.duts = (self.stock, self.merged)
        self.cycle = Signal(32)
        self.sync += self.cycle.eq(self.cycle + 1)


def visible(dut):
    """What the CPU and the PHY side can see of one interface."""
    writer = dut.sram.writer
    return (dut.bus_rx.ack, dut.bus_rx.dat_r, dut.sink.ready, writer._slot.status,
            writer._length.status, writer._errors.status, writer.ev.available.trigger)


def frame_words(payload):
    """(data, last_be) beats of a frame on the 32-bit sink, little-endian."""
    beats = []
    for offset in range(0, len(payload), 4):
        chunk = payload[offset:offset + 4]
        beats.append((int.from_bytes(chunk, "little"), 1 << (len(chunk) - 1)))
    return beats


def run(nrxslots, frames, long_frames, seed):
    """`frames` frames of 1-96 bytes, `long_frames` of them of 1,200-1,700 (past the MTU too)."""
    dut = Harness(nrxslots)
    rng = random.Random(seed)
    lengths = [rng.randint(1, 96) for _ in range(frames - long_frames)]
    lengths += [rng.choice([rng.randint(1200, 1530), rng.randint(1531, 1700)])
                for _ in range(long_frames)]
    rng.shuffle(lengths)
    payloads = [(bytes(rng.getrandbits(8) for _ in range(length)), rng.random() < 0.1)
                for length in lengths]
    done = {"phy": False}
    checked = {"frames": 0, "words": 0, "long": 0, "slots": set(), "mismatch": None}

    def drive(signal_of, value):
        for d in dut.duts:
            yield signal_of(d).eq(value)

    def phy():
        for payload, bad_fcs in payloads:
            beats = frame_words(payload)
            for i, (data, last_be) in enumerate(beats):
                while rng.random() < 0.2:           # a gap inside the frame
                    yield from drive(lambda d: d.sink.valid, 0)
                    yield
                last = i == len(beats) - 1
                yield from drive(lambda d: d.sink.valid, 1)
                yield from drive(lambda d: d.sink.data, data)
                yield from drive(lambda d: d.sink.last, int(last))
                yield from drive(lambda d: d.sink.last_be, last_be if last else 0)
                yield from drive(lambda d: d.sink.error, last_be if last and bad_fcs else 0)
                yield
            yield from drive(lambda d: d.sink.valid, 0)
            for _ in range(rng.choice([2, 3, 12, 60])):   # LiteEth ignores a beat in TERMINATE
                yield
        done["phy"] = True

    def bus_read(address):
        yield from drive(lambda d: d.bus_rx.adr, address)
        yield from drive(lambda d: d.bus_rx.cyc, 1)
        yield from drive(lambda d: d.bus_rx.stb, 1)
        yield
        while not (yield dut.merged.bus_rx.ack):
            yield
        value = yield dut.merged.bus_rx.dat_r
        yield from drive(lambda d: d.bus_rx.cyc, 0)
        yield from drive(lambda d: d.bus_rx.stb, 0)
        yield
        return value

    def cpu():
        expected = [p for p, bad in payloads]
        while not done["phy"] or (yield dut.merged.sram.writer.ev.available.trigger):
            if rng.random() < 0.3:                  # a read anywhere, the MAC maybe writing there
                slot = rng.randrange(nrxslots)
                yield from bus_read(slot * SLOT_STRIDE_WORDS + rng.randrange(SLOT_WORDS))
                continue
            if not (yield dut.merged.sram.writer.ev.available.trigger) or rng.random() < 0.5:
                yield
                continue
            slot = yield dut.merged.sram.writer._slot.status
            length = yield dut.merged.sram.writer._length.status
            words = []
            stored = min((length + 3) // 4, SLOT_WORDS)
            for w in sorted(rng.sample(range(stored), min(8, stored))):
                words.append((w, (yield from bus_read(slot * SLOT_STRIDE_WORDS + w))))
            # The frame this is: the next one that was not dropped (slots full, bad FCS).
            while expected and not payload_matches(expected[0], length, words):
                expected.pop(0)
            assert expected, f"slot {slot} holds {length} bytes that match no frame sent"
            expected.pop(0)
            checked["frames"] += 1
            checked["words"] += len(words)
            checked["long"] += length > 1200
            checked["slots"].add(slot)
            for d in dut.duts:                      # clear the event: the slot is free again
                yield d.sram.writer.ev.pending.r.eq(1)
                yield d.sram.writer.ev.pending.re.eq(1)
            yield
            for d in dut.duts:
                yield d.sram.writer.ev.pending.re.eq(0)
            yield                                   # the FIFO pops at the end of that cycle
        for _ in range(8):
            yield
        checked["dropped"] = yield dut.merged.sram.writer._errors.status

    @passive
    def compare():
        while True:
            stock, merged = [], []
            for values, d in ((stock, dut.stock), (merged, dut.merged)):
                for signal in visible(d):
                    values.append((yield signal))
            if stock != merged and checked["mismatch"] is None:
                checked["mismatch"] = ((yield dut.cycle), stock, merged)
            yield

    run_simulation(dut, [phy(), cpu(), compare()])
    assert checked["mismatch"] is None, f"cycle, stock, merged: {checked['mismatch']}"
    return checked


def payload_matches(payload, length, words):
    """Whether `length` bytes and the sampled (word, value) pairs are this frame's: the MAC keeps
    at most the first 1534 bytes of a long frame (LiteEth's MTU check comes after the write)."""
    if length != len(payload) and not (len(payload) > 1530 and length >= 1530):
        return False
    padded = payload + bytes(4)
    return all(int.from_bytes(padded[4 * w:4 * w + 4], "little") == value
               or 4 * w + 4 > length for w, value in words)


@pytest.mark.parametrize("nrxslots, frames, long_frames, seed", [(2, 40, 4, 1), (32, 40, 1, 2)])
def test_merged_slots_behave_as_liteeths_cycle_for_cycle(nrxslots, frames, long_frames, seed):
    checked = run(nrxslots, frames, long_frames, seed)
    assert checked["frames"] >= frames // 3     # most frames were received and read back
    assert checked["words"] > checked["frames"]
    assert checked["slots"] == set(range(nrxslots))
    assert checked["long"] > 0
    if nrxslots == 2:
        assert checked["dropped"] > 0           # frames arrived while every slot was full


def test_slot_counts_it_cannot_merge_are_refused():
    for nrxslots in (1, 3, 6):
        with pytest.raises(LiteEthSlotsError, match="power-of-two"):
            MergedRxSlotsInterface(dw=32, nrxslots=nrxslots, ntxslots=2, endianness="little")
