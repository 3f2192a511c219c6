"""gateware/spi_master.py against a SPI mode 0 chip model (Migen simulation, a few seconds): through
its CSRs as the firmware's LiteSPI driver uses them (chip select, phyconfig's length, a write of
rxtx, tx_ready and rx_ready polled, rxtx read), transfers of 8 to 32 bits send their bits MSB first
and read back what the chip sent in their low bits, back to back under one chip select as the
driver's streamed reads do; MOSI is set a cycle before each rising clock edge and held over it,
the chip sees chip select a fixed delay after the CSR and before the first edge, and the clock
stays low outside transfers; with the chip's output one or two cycles late after a falling edge
(the master samples MISO a cycle after the rising edge: a cycle of margin more than LiteSPI's PHY)."""
import random

import pytest

from migen import Record, run_simulation, passive

from litedav.gateware.spi_master import SPIMaster

CS_DELAY = 10


class Chip:
    """A SPI mode 0 chip on `pads`: takes MOSI at each rising clock edge, drives the next bit of
    `reply` onto MISO `delay` cycles after the clock pin fell (1: MISO changes with the next
    cycle; 2, up to 26 ns at 75 MHz: a SPI NOR chip's tCLQV of 6-8 ns plus the pads' delays take
    less), the first one when selected."""
    def __init__(self, pads, delay):
        self.pads, self.delay = pads, delay
        self.received = []        # bits, in order
        self.reply = []           # bits to send, in order
        self.selected_at = None   # cycle chip select went low
        self.first_edge_at = None
        self.violations = []

    @passive
    def process(self):
        pads = self.pads
        cycle, last_clk, last_cs_n, last_mosi, pending = 0, 0, 1, 0, []
        while True:
            clk, cs_n, mosi = (yield pads.clk), (yield pads.cs_n), (yield pads.mosi)
            if cs_n and clk:
                self.violations.append(f"cycle {cycle}: clock high while not selected")
            if last_cs_n and not cs_n:
                self.selected_at = cycle
                pending.append((cycle, self.reply.pop(0) if self.reply else 1))
            if not cs_n and clk and not last_clk:
                if self.first_edge_at is None:
                    self.first_edge_at = cycle
                if mosi != last_mosi:
                    self.violations.append(f"cycle {cycle}: MOSI changed with the rising edge")
                self.received.append(mosi)
            if not cs_n and last_clk and not clk:
                pending.append((cycle + self.delay - 1, self.reply.pop(0) if self.reply else 1))
            while pending and pending[0][0] <= cycle:
                yield pads.miso.eq(pending.pop(0)[1])
            last_clk, last_cs_n, last_mosi = clk, cs_n, mosi
            cycle += 1
            yield


def bits_of(value, n):
    return [(value >> (n - 1 - i)) & 1 for i in range(n)]


def write(csr, value):
    """A CPU write of a plain CSR (CSRStorage has its own write())."""
    yield csr.r.eq(value)
    yield csr.re.eq(1)
    yield
    yield csr.re.eq(0)


def read(csr):
    value = yield csr.w
    yield csr.we.eq(1)
    yield
    yield csr.we.eq(0)
    return value


def wait_status(master, field):
    for _ in range(1000):
        if (yield getattr(master.status.fields, field)):
            return
        yield
    raise AssertionError(f"{field} never set")


@pytest.mark.parametrize("delay", [1, 2])
def test_transfers_under_one_chip_select(delay):
    rng = random.Random(delay)
    pads = Record([("cs_n", 1), ("clk", 1), ("mosi", 1), ("miso", 1)])
    master = SPIMaster(pads, cs_delay=CS_DELAY)
    chip = Chip(pads, delay)
    # The driver's patterns: opcode, 32-bit address, replies of 8/16/24 bits and streamed words.
    lengths = [8, 32, 8, 16, 24, 32, 32, 32, 1, 31]
    sent = [rng.getrandbits(32) for _ in lengths]
    reply = [[rng.getrandbits(1) for _ in range(n)] for n in lengths]
    chip.reply = [b for r in reply for b in r]
    got = []

    def driver():
        for _ in range(5):
            yield
        assert (yield pads.cs_n) == 1 and (yield pads.clk) == 0
        yield from master.cs.write(1)
        select_cycle = 5
        for n, out in zip(lengths, sent):
            yield from master.phyconfig.write(1 << 16 | 1 << 8 | n)
            yield from wait_status(master, "tx_ready")
            yield from write(master.rxtx, out)
            assert not (yield master.status.fields.rx_ready)
            yield from wait_status(master, "rx_ready")
            got.append((yield from read(master.rxtx)))
            yield
            assert not (yield master.status.fields.rx_ready)
            assert (yield master.status.fields.tx_ready)
            assert (yield pads.clk) == 0
        yield from master.cs.write(0)
        yield
        yield
        assert (yield pads.cs_n) == 1
        # cs_delay cycles after the CSR (set at the end of cycle select_cycle), one more for the
        # registered select.
        assert chip.selected_at == select_cycle + 1 + CS_DELAY + 1, chip.selected_at
        assert chip.first_edge_at > chip.selected_at

    run_simulation(master, [driver(), chip.process()])
    assert not chip.violations, chip.violations
    assert chip.received == [b for n, out in zip(lengths, sent) for b in bits_of(out, n)]
    for n, out, r, word in zip(lengths, sent, reply, got):
        low = word & ((1 << n) - 1)
        assert bits_of(low, n) == r, (n, hex(word))
        # Above them, what was written, shifted up (as LiteSPI's PHY leaves its shift register).
        assert word >> n == (out & 0xffffffff) & ((1 << (32 - n)) - 1), (n, hex(out), hex(word))


def test_write_while_busy_is_dropped_and_clock_idles_low():
    pads = Record([("cs_n", 1), ("clk", 1), ("mosi", 1), ("miso", 1)])
    master = SPIMaster(pads, cs_delay=CS_DELAY)
    chip = Chip(pads, 1)

    def driver():
        yield from master.cs.write(1)
        yield from master.phyconfig.write(8)
        yield from write(master.rxtx, 0xA5)
        yield
        assert not (yield master.status.fields.tx_ready)
        yield from write(master.rxtx, 0xFF)     # dropped: a transfer runs
        yield from wait_status(master, "rx_ready")
        yield from read(master.rxtx)
        for _ in range(50):
            assert (yield pads.clk) == 0
            yield
        yield from master.cs.write(0)

    run_simulation(master, [driver(), chip.process()])
    assert chip.received == bits_of(0xA5, 8)
    assert not chip.violations, chip.violations
