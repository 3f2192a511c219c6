"""soc/bus_slice.py: a wishbone master behind the register slice reads back what it wrote, and
each of its accesses reaches the bus exactly once (Migen simulation, a few seconds)."""
import random

from migen import Module, Signal, If, run_simulation

from litex.soc.interconnect import wishbone

from litedav.soc.bus_slice import WishboneRegisterSlice


class Harness(Module):
    def __init__(self):
        self.master = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.submodules.slice = WishboneRegisterSlice(self.master)
        self.submodules.ram = wishbone.SRAM(256, bus=wishbone.Interface(data_width=32))
        self.comb += self.slice.bus.connect(self.ram.bus)
        self.accesses = Signal(16)
        self.sync += If(self.ram.bus.cyc & self.ram.bus.stb & self.ram.bus.ack,
                        self.accesses.eq(self.accesses + 1))


def test_slice_round_trips_each_access_once():
    dut = Harness()
    rng = random.Random(7)
    words = {addr: rng.getrandbits(32) for addr in rng.sample(range(64), 24)}
    seen = {}

    def master():
        for addr, value in words.items():
            yield from dut.master.write(addr, value)
        for addr in words:
            seen[addr] = yield from dut.master.read(addr)
        for _ in range(4):
            yield
        seen["accesses"] = yield dut.accesses

    run_simulation(dut, master())
    assert {a: seen[a] for a in words} == words
    assert seen["accesses"] == 2 * len(words)


class CacheHarness(Module):
    """The slice in front of a slave that acks combinationally, as LiteX's L2 cache does on a
    hit: every access still reaches the slave exactly once."""
    def __init__(self):
        self.master = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.submodules.slice = WishboneRegisterSlice(self.master)
        cache_master = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        cache_slave  = wishbone.Interface(data_width=128, address_width=32, addressing="word")
        self.submodules.cache = wishbone.Cache(cachesize=64, master=cache_master, slave=cache_slave)
        self.submodules.ram = wishbone.SRAM(4096, bus=wishbone.Interface(data_width=128))
        self.comb += [
            self.slice.bus.connect(cache_master),
            cache_slave.connect(self.ram.bus),
        ]
        self.accesses = Signal(16)
        self.sync += If(cache_master.cyc & cache_master.stb & cache_master.ack,
                        self.accesses.eq(self.accesses + 1))


def test_slice_in_front_of_a_combinational_ack_slave():
    dut = CacheHarness()
    rng = random.Random(11)
    # More distinct lines than the cache holds: hits, misses and evictions of dirty lines.
    words = {addr: rng.getrandbits(32) for addr in rng.sample(range(1024), 200)}
    seen = {}

    def master():
        for addr, value in words.items():
            yield from dut.master.write(addr, value, sel=0xf)
        for addr in reversed(list(words)):
            seen[addr] = yield from dut.master.read(addr)
        for _ in range(4):
            yield
        seen["accesses"] = yield dut.accesses

    run_simulation(dut, master())
    assert {a: seen[a] for a in words} == words
    assert seen["accesses"] == 2 * len(words)
