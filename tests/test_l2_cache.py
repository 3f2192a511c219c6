"""gateware/l2_cache.py against a reference memory (Migen simulation, a few seconds): random reads
and byte-masked writes over more lines than the cache holds, through a main-RAM model that answers
after random delays (a write's data held from request to ack); what the CPU reads and what ends
up in main RAM match the reference, hits never reach main RAM, and a hit is acked in the third
cycle of its request; behind LiteDRAM's wishbone bridge, as on the board, a line's words land at
consecutive port addresses; no block RAM output reaches the line port's write data through logic
alone (the board's timing)."""
import random

from migen import Case, If, Memory, passive, run_simulation
from migen.fhdl.structure import _Assign
from migen.fhdl.tools import list_signals, list_targets

from litex.soc.interconnect import wishbone

from litedav.gateware.l2_cache import L2Cache

LINE_WORDS = 4
CACHE_BYTES = 256                       # 16 lines of 16 bytes: small, to force evictions.
CACHE_LINES = CACHE_BYTES // (4 * LINE_WORDS)
RAM_WORDS = 1024                        # 4 KiB of main RAM behind it.
BASE_LINE = 0x40000000 >> 4             # Main RAM's base, as the SoC maps it (tags must hold it).


class MainRAM:
    """A line-wide wishbone slave over a dict, acking after 0-3 idle cycles."""
    def __init__(self, bus, rng):
        self.bus, self.rng = bus, rng
        self.lines = {}
        self.reads = self.writes = 0

    def word(self, word_adr):
        line = self.lines.get(word_adr // LINE_WORDS, 0)
        return (line >> (32 * (word_adr % LINE_WORDS))) & 0xffffffff

    @passive
    def process(self):
        bus = self.bus
        while True:
            yield bus.ack.eq(0)
            yield
            if not ((yield bus.cyc) and (yield bus.stb)):
                continue
            requested = yield bus.dat_w
            for _ in range(self.rng.randrange(4)):
                yield
            line = (yield bus.adr) - BASE_LINE
            assert 0 <= line < RAM_WORDS // LINE_WORDS, f"line {line:#x} outside main RAM"
            assert (yield bus.sel) == 2**len(bus.sel) - 1
            if (yield bus.we):
                assert (yield bus.dat_w) == requested, "write data changed before the ack"
                self.lines[line] = yield bus.dat_w
                self.writes += 1
            else:
                yield bus.dat_r.eq(self.lines.get(line, 0))
                self.reads += 1
            yield bus.ack.eq(1)
            yield


def word_address(word):
    return (BASE_LINE * LINE_WORDS) + word


def make_dut():
    master = wishbone.Interface(data_width=32, address_width=32, addressing="word")
    return L2Cache(CACHE_BYTES, master, line_words=LINE_WORDS)


def test_random_accesses_match_a_reference():
    rng = random.Random(5)
    dut = make_dut()
    ram = MainRAM(dut.slave, rng)
    reference = {}
    mismatches = []
    # Half the accesses in a hot set of 24 words (hits), half anywhere (misses, dirty evictions).
    hot = rng.sample(range(RAM_WORDS), 24)

    def cpu():
        for _ in range(1500):
            word = rng.choice(hot) if rng.random() < 0.5 else rng.randrange(RAM_WORDS)
            if rng.random() < 0.5:
                value, sel = rng.getrandbits(32), rng.randrange(1, 16)
                mask = sum(0xff << (8 * b) for b in range(4) if sel >> b & 1)
                reference[word] = (reference.get(word, 0) & ~mask) | (value & mask)
                yield from dut.master.write(word_address(word), value, sel=sel)
            else:
                got = yield from dut.master.read(word_address(word))
                if got != reference.get(word, 0):
                    mismatches.append((word, got, reference.get(word, 0)))
            for _ in range(rng.randrange(3)):
                yield
        # Push every dirty line out: two lines of different tags at every index leave a clean one.
        for index in range(CACHE_LINES):
            for line in (index + CACHE_LINES, index + 2 * CACHE_LINES):
                yield from dut.master.read(word_address(line * LINE_WORDS))

    run_simulation(dut, [cpu(), ram.process()])
    assert not mismatches, mismatches[:5]
    in_ram = {word: ram.word(word) for word in reference}
    assert in_ram == reference
    assert ram.writes > 100 and ram.reads > 100     # Misses and dirty evictions did happen.


def test_hits_stay_in_the_cache_and_take_three_cycles():
    dut = make_dut()
    ram = MainRAM(dut.slave, random.Random(1))
    seen = {}

    def cpu():
        yield from dut.master.write(word_address(5), 0x12345678)       # Miss: the line is refilled.
        seen["ram_reads"] = ram.reads
        bus = dut.master
        yield bus.adr.eq(word_address(6))
        yield bus.we.eq(0)
        yield bus.cyc.eq(1)
        yield bus.stb.eq(1)
        cycles = 1
        yield
        while not (yield bus.ack):
            cycles += 1
            yield
        seen["hit_cycles"] = cycles
        yield bus.cyc.eq(0)
        yield bus.stb.eq(0)
        yield
        seen["word5"] = yield from bus.read(word_address(5))
        seen["ram_after"] = (ram.reads, ram.writes)

    run_simulation(dut, [cpu(), ram.process()])
    assert seen["ram_reads"] == 1
    assert seen["hit_cycles"] == 3
    assert seen["word5"] == 0x12345678
    assert seen["ram_after"] == (1, 0)


class NativePortRAM:
    """LiteDRAM's 32-bit native user port over a dict of words: commands accepted at once, write
    data taken only for an accepted write command, read data in command order after a few cycles."""
    def __init__(self, port, rng):
        self.port, self.rng = port, rng
        self.words = {}

    @passive
    def process(self):
        port = self.port
        pending_writes, pending_reads = [], []
        yield port.cmd.ready.eq(1)
        while True:
            yield port.wdata.ready.eq(bool(pending_writes))
            yield port.rdata.valid.eq(0)
            if pending_reads and self.rng.random() < 0.5:
                yield port.rdata.data.eq(self.words.get(pending_reads.pop(0), 0))
                yield port.rdata.valid.eq(1)
            yield
            if (yield port.cmd.valid):
                addr = yield port.cmd.addr
                (pending_writes if (yield port.cmd.we) else pending_reads).append(addr)
            if (yield port.wdata.valid) and (yield port.wdata.ready):
                self.words[pending_writes.pop(0)] = yield port.wdata.data


def test_lines_reach_litedram_in_word_order():
    """Through LiteDRAM's wishbone bridge (line -> 4 commands on a 32-bit port), as on the board:
    the word the CPU wrote at main RAM + 4 i is port word i."""
    from migen import Module
    from litedram.common import LiteDRAMNativePort
    from litedram.frontend.wishbone import LiteDRAMWishbone2Native

    rng = random.Random(3)
    top = Module()
    top.submodules.cache = cache = make_dut()
    port = LiteDRAMNativePort("both", address_width=21, data_width=32)
    top.submodules.bridge = LiteDRAMWishbone2Native(cache.slave, port, base_address=BASE_LINE * 16)
    ram = NativePortRAM(port, rng)
    written = {word: rng.getrandbits(32) for word in rng.sample(range(RAM_WORDS), 40)}
    seen = {}

    def cpu():
        for word, value in written.items():
            yield from cache.master.write(word_address(word), value)
        for index in range(CACHE_LINES):
            for line in (index + CACHE_LINES, index + 2 * CACHE_LINES):
                yield from cache.master.read(word_address(line * LINE_WORDS))
        for word in written:
            seen[word] = yield from cache.master.read(word_address(word))

    run_simulation(top, [cpu(), ram.process()])
    assert {word: ram.words.get(word) for word in written} == written
    assert seen == written


def test_snoops_write_back_invalidate_and_protect():
    """A snoop port (gateware/sdram_dma.py's link): a read snoop writes a dirty line back and leaves
    it cached, a write snoop invalidates; a CPU miss on a protected block (also in a window that
    wraps past the top block) waits and reaches main RAM only once `protect` drops; every refill
    is announced with its block."""
    from litedav.gateware.l2_cache import SNOOP_BLOCK_LINES

    dut = make_dut()
    snoop = dut.add_snoop_port()
    ram = MainRAM(dut.slave, random.Random(2))
    block_of = lambda word: (word_address(word) // LINE_WORDS) // SNOOP_BLOCK_LINES
    seen = {"refills": []}

    @passive
    def announcements():
        while True:
            if (yield snoop.refilled):
                seen["refills"].append((yield snoop.refilled_block))
            yield

    def request(block, write):
        yield snoop.block.eq(block)
        yield snoop.write.eq(write)
        yield snoop.valid.eq(1)
        yield
        while not (yield snoop.done):
            yield
        yield snoop.valid.eq(0)
        yield

    def read_waits(word, cycles):
        """Start a CPU read of `word`; True if no ack came for `cycles` cycles (then the read
        is left pending)."""
        bus = dut.master
        yield bus.adr.eq(word_address(word))
        yield bus.we.eq(0)
        yield bus.cyc.eq(1)
        yield bus.stb.eq(1)
        for _ in range(cycles):
            yield
            if (yield bus.ack):
                yield bus.cyc.eq(0)
                yield bus.stb.eq(0)
                yield
                return False
        return True

    def finish_read():
        bus = dut.master
        while not (yield bus.ack):
            yield
        value = yield bus.dat_r
        yield bus.cyc.eq(0)
        yield bus.stb.eq(0)
        yield
        return value

    def cpu():
        yield from dut.master.write(word_address(8), 0xcafe0001)       # Dirty line in block 0.
        writes, reads = ram.writes, ram.reads
        yield from request(block_of(8), write=0)
        seen["read_snoop"] = (ram.writes - writes, ram.word(8))
        yield from dut.master.read(word_address(8))                     # Still cached: a hit.
        seen["hit_after_read_snoop"] = ram.reads == reads
        yield from request(block_of(8), write=1)                        # Clean: no write-back.
        seen["writes_after_write_snoop"] = ram.writes - writes
        seen["refills"].clear()
        seen["reread"] = yield from dut.master.read(word_address(8))    # Invalidated: a refill.
        seen["announced"] = list(seen["refills"])
        # A dirty line under a write snoop: written back, then gone.
        yield from dut.master.write(word_address(9), 0xcafe0002)
        writes = ram.writes
        yield from request(block_of(9), write=1)
        seen["dirty_write_snoop"] = (ram.writes - writes, ram.word(9))
        # Protection: blocks B..B+1 protected; a miss in B+1 waits until released.
        word = 8 + SNOOP_BLOCK_LINES * LINE_WORDS
        yield snoop.protect_first.eq(block_of(8))
        yield snoop.protect_last.eq(block_of(8) + 1)
        yield snoop.protect.eq(1)
        reads = ram.reads
        seen["protected_waits"] = yield from read_waits(word, 60)
        seen["protected_ram_reads"] = ram.reads - reads
        yield snoop.protect.eq(0)
        if seen["protected_waits"]:
            seen["released_read"] = yield from finish_read()
        # A window that wraps past the top block: every block but B+1's.
        yield snoop.protect_first.eq(block_of(word) + 1)
        yield snoop.protect_last.eq(block_of(word) - 1)
        yield snoop.protect.eq(1)
        seen["outside_window_waits"] = yield from read_waits(word + LINE_WORDS, 60)
        seen["wrapped_window_waits"] = yield from read_waits(word + 2 * SNOOP_BLOCK_LINES * LINE_WORDS, 60)
        yield snoop.protect.eq(0)
        if seen["wrapped_window_waits"]:
            yield from finish_read()

    run_simulation(dut, [cpu(), ram.process(), announcements()])
    assert seen["read_snoop"] == (1, 0xcafe0001)
    assert seen["hit_after_read_snoop"]
    assert seen["writes_after_write_snoop"] == 1
    assert seen["reread"] == 0xcafe0001 and seen["announced"] == [block_of(8)]
    assert seen["dirty_write_snoop"] == (1, 0xcafe0002)
    assert seen["protected_waits"] and seen["protected_ram_reads"] == 0
    assert seen["released_read"] == 0
    assert not seen["outside_window_waits"] and seen["wrapped_window_waits"]


def comb_drivers(statements, conditions=frozenset(), drivers=None):
    """signal -> every signal it depends on through combinational statements (assigned values,
    indices and the conditions of enclosing If/Case)."""
    drivers = {} if drivers is None else drivers
    for statement in statements:
        if isinstance(statement, _Assign):
            sources = list_signals(statement.r) | conditions
            for target in list_targets(statement):
                drivers.setdefault(target, set()).update(sources)
        elif isinstance(statement, If):
            inner = conditions | list_signals(statement.cond)
            comb_drivers(statement.t, inner, drivers)
            comb_drivers(statement.f, inner, drivers)
        elif isinstance(statement, Case):
            inner = conditions | list_signals(statement.test)
            for body in statement.cases.values():
                comb_drivers(body if isinstance(body, list) else [body], inner, drivers)
        else:
            comb_drivers(statement, conditions, drivers)
    return drivers


def comb_reach(drivers, signals):
    """Every signal the given ones depend on through combinational logic (themselves included)."""
    reached, frontier = set(), set(signals)
    while frontier:
        signal = frontier.pop()
        reached.add(signal)
        frontier |= drivers.get(signal, set()) - reached
    return reached


def test_no_block_ram_output_reaches_the_line_write_data_through_logic():
    """On the Colorlight i5 the eviction path from the data block RAM's output through LiteDRAM's
    128->32-bit converter to the SDRAM's DQ output register failed 75 MHz (13.5 ns): the victim
    line must leave a flip-flop."""
    dut = make_dut()
    fragment = dut.get_fragment()
    drivers = comb_drivers(fragment.comb)
    ram_outputs = {port.dat_r for special in fragment.specials if isinstance(special, Memory)
                   for port in special.ports}
    assert len(ram_outputs) == 2                # The data and the tag memory.
    assert not comb_reach(drivers, list_signals(dut.slave.dat_w)) & ram_outputs
    assert comb_reach(drivers, [dut.master.dat_r]) & ram_outputs   # The walk does see such paths.


def test_ram_write_ports_take_no_bus_request_through_logic():
    """The granted master's address, data and byte enables come through the SoC bus arbiter's
    muxes; into the tag RAM's write data that was the Colorlight i5's worst path at 75 MHz (13.9 ns,
    nextpnr seed 3): the write ports take what the lookup registered. (The RAMs' read address has
    to come from the bus: a hit is answered in 3 cycles.)"""
    dut = make_dut()
    fragment = dut.get_fragment()
    drivers = comb_drivers(fragment.comb)
    ports = [port for special in fragment.specials if isinstance(special, Memory)
             for port in special.ports]
    write_inputs = [signal for port in ports for signal in (port.dat_w, port.we)]
    request = {dut.master.adr, dut.master.dat_w, dut.master.sel}
    assert not comb_reach(drivers, write_inputs) & request
    assert comb_reach(drivers, [port.adr for port in ports]) & request   # The walk sees such paths.


def test_ram_write_data_take_no_bus_handshake_through_logic():
    """The bus arbiter's grant through the address decode (the request's cyc/stb/we) into the data
    RAM's write data select was the Colorlight i5's worst path at 75 MHz (13.7 ns, nextpnr seed 2):
    both RAMs' write data follow the FSM's state and registers; requests and acks reach only the
    write enables."""
    dut = make_dut()
    fragment = dut.get_fragment()
    drivers = comb_drivers(fragment.comb)
    ports = [port for special in fragment.specials if isinstance(special, Memory)
             for port in special.ports]
    handshake = {dut.master.cyc, dut.master.stb, dut.master.we, dut.slave.ack}
    assert not comb_reach(drivers, [port.dat_w for port in ports]) & handshake
    assert comb_reach(drivers, [port.we for port in ports]) & handshake   # The walk sees such paths.
