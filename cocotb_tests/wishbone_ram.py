#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Main RAM for cocotb tests of wishbone masters (the NIC's DMA engines).

`WishboneRAM` answers a LiteX `wishbone.Interface(data_width=32, addressing="word")` master the way
LiteX's `wishbone.SRAM` with bursting does, and checks the master while doing so:

- Registered slave: a request seen in cycle k is acknowledged in cycle k+1 at the earliest. A
  classic cycle (cti 0b000, or 0b111 alone) therefore takes two cycles per word.
- Incrementing bursts (cti 0b010, bte 0 linear): while the master presents a beat with cti 0b010 on
  an acknowledged cycle, the next beat (address + 1) is acknowledged in the next cycle, so a burst
  moves one word per cycle. The beat with cti 0b111 ends the burst. As in the Wishbone B4 registered
  feedback cycles, cti 0b010 is a promise: a master that drops cyc/stb or changes the address after
  it is a test failure (on a shared bus the promised ack would go to another master).
- Random wait states: with probability `wait` an ack that could be given is delayed by a cycle
  (seeded `rng`, so runs are reproducible). While it waits, the master must hold its request
  (adr, we, sel, cti, dat_w) unchanged, as Wishbone B4 requires.
- Byte address = adr << 2; `sel` enables bytes of writes and says which bytes of a read matter.
- Every access is checked against the allowed regions: an access to a byte (enabled by `sel`)
  outside them, or outside the RAM, fails the test (WishboneAccessError, an AssertionError).
- While no ack is given, dat_r holds garbage, so that a master that samples it without ack fails.

Wiring (Migen harness side), with the harness style of harness.py: the harness registers what the
master drove at each edge into `monitor`, and the testbench writes `drive` at once (setimmediatevalue)
after each RisingEdge. Only one read and at most one write per cycle cost Python time:

    drive, monitor = wishbone_ram_ports(harness, dut.bus)     # in the Migen harness
    build_verilog(name, harness, [..., drive], [..., monitor])

Testbench side:

    ram = WishboneRAM(dut.wb_drive, dut.wb_monitor, size=1 << 20, base=0, wait=0.2, rng=rng)
    ram.write(addr, data); ram.read(addr, n); ram.write_word(addr, v); ram.read_word(addr)
    ram.allow(start, size, "r")     # allowed regions ("r", "w" or "rw"); ram.clear_regions()
    ram.on_access = f               # optional f(we, byte_addr, value, sel) on every transfer
    ram.wait = 0.0                  # may change at any time
    while ...:
        await RisingEdge(dut.sys_clk)
        ram.tick()                  # once per cycle, right after the edge
    # or: cocotb.start_soon(ram.run(dut.sys_clk))

Counters: `reads`, `writes` (words transferred), `bursts` (beats transferred with cti 0b010),
`busy_cycles` (cycles with cyc and stb).

A write is applied to the backing store (and seen by read()/read_word()) at the tick that follows
its ack cycle; a read returns the store as it is at the tick before its ack cycle.
"""

import random

CTI_CLASSIC, CTI_CONSTANT, CTI_INCREMENTING, CTI_END = 0b000, 0b001, 0b010, 0b111


class WishboneAccessError(AssertionError):
    """A master broke the bus protocol or accessed memory outside the allowed regions."""


def wishbone_ram_ports(module, bus, name="wb"):
    """Add to the Migen `module` (a test harness) the two packed ports a WishboneRAM needs for the
    master `bus`: `drive` (input: ack, err, dat_r) and `monitor` (output, registered at each edge:
    cyc, stb, we, cti, bte, sel, adr, dat_w). Returns (drive, monitor)."""
    from migen import Cat, Signal

    assert len(bus.dat_w) == 32 and len(bus.sel) == 4, "32-bit wishbone only"
    drive   = Signal(2 + 32, name=f"{name}_drive")
    monitor = Signal(1 + 1 + 1 + 3 + 2 + 4 + len(bus.adr) + 32, name=f"{name}_monitor")
    module.comb += Cat(bus.ack, bus.err, bus.dat_r).eq(drive)
    module.sync += monitor.eq(Cat(bus.cyc, bus.stb, bus.we, bus.cti, bus.bte, bus.sel, bus.adr,
        bus.dat_w))
    return drive, monitor


class WishboneRAM:
    def __init__(self, drive, monitor, size, base=0, wait=0.0, rng=None, adr_width=30):
        assert base % 4 == 0 and size % 4 == 0
        self.drive_signal   = drive
        self.monitor_signal = monitor
        self.base      = base
        self.size      = size
        self.mem       = bytearray(size)
        self.wait      = wait
        self.rng       = rng or random.Random(0)
        self.adr_width = adr_width
        self.adr_mask  = (1 << adr_width) - 1
        self.regions   = [(base, base + size, "rw")]
        self.on_access = None
        self.reads = self.writes = self.bursts = self.busy_cycles = 0

        # Slave state: what was driven for the cycle the next tick() reads back.
        self._ack      = False
        self._ack_adr  = 0
        self._ack_we   = 0
        self._expect   = None  # Word address the next beat of a burst must present.
        self._pending  = None  # The request of the last cycle, when it was not acknowledged.
        self._read_data = 0
        self._driven   = 0
        self._garbage  = True  # dat_r holds garbage (no ack): keep it, no need to rewrite.
        drive.setimmediatevalue(0)

    # Backing store --------------------------------------------------------------------------

    def _offset(self, addr, n):
        if addr < self.base or addr + n > self.base + self.size:
            raise ValueError(f"RAM access {addr:#x}+{n} outside {self.base:#x}+{self.size:#x}")
        return addr - self.base

    def write(self, addr, data):
        o = self._offset(addr, len(data))
        self.mem[o:o + len(data)] = data

    def read(self, addr, n):
        o = self._offset(addr, n)
        return bytes(self.mem[o:o + n])

    def write_word(self, addr, value):
        self.write(addr, (value & 0xffffffff).to_bytes(4, "little"))

    def read_word(self, addr):
        return int.from_bytes(self.read(addr, 4), "little")

    # Regions --------------------------------------------------------------------------------

    def clear_regions(self):
        self.regions = []

    def allow(self, start, size, access="rw"):
        assert access in ("r", "w", "rw")
        self.regions.append((start, start + size, access))

    def _check(self, we, word_adr, sel):
        kind = "w" if we else "r"
        addr = word_adr << 2
        for lane in range(4):
            if not sel >> lane & 1:
                continue
            byte = addr + lane
            if not any(start <= byte < end and kind in access for start, end, access in self.regions):
                raise WishboneAccessError(f"wishbone {'write' if we else 'read'} of byte {byte:#x} "
                    f"(adr {word_adr:#x}, sel {sel:#06b}) outside the allowed regions")
            if not self.base <= byte < self.base + self.size:
                raise WishboneAccessError(f"wishbone access to {byte:#x}: no RAM there")

    # Bus ------------------------------------------------------------------------------------

    def tick(self):
        """One bus cycle: check what the master did in the cycle that just ended, then drive the
        slave's outputs for the cycle that starts."""
        m     = int(self.monitor_signal.value)
        cyc   = m & 1
        stb   = m >> 1 & 1
        we    = m >> 2 & 1
        cti   = m >> 3 & 7
        bte   = m >> 6 & 3
        sel   = m >> 8 & 0xf
        adr   = m >> 12 & self.adr_mask
        active = cyc and stb
        if active:
            self.busy_cycles += 1

        # Wishbone B4 (3.1.4): a master holds its request, cti included, until it is acknowledged.
        # A slave that bursts decides on the cti it saw: changing it in a waited cycle desynchronises
        # the burst (LiteX's SRAM then acknowledges a beat the master did not mean to send).
        request = (adr, we, sel, cti, m >> (12 + self.adr_width) if we else 0)
        if self._pending is not None and active and request != self._pending:
            raise WishboneAccessError("wishbone master changed its request while waiting for the ack: "
                "adr {:#x} we {} sel {:#06b} cti {:#05b}, was adr {:#x} we {} sel {:#06b} cti {:#05b}".format(
                    *request[:4], *self._pending[:4]))
        self._pending = request if active and not self._ack else None

        if self._ack:
            if not active:
                raise WishboneAccessError("wishbone master dropped cyc/stb in a cycle that was "
                    "acknowledged (request withdrawn, or a burst with cti=0b010 not continued)")
            if adr != self._ack_adr or we != self._ack_we:
                raise WishboneAccessError(f"wishbone master changed its request during an ack: "
                    f"adr {adr:#x} we {we}, expected adr {self._ack_adr:#x} we {self._ack_we}")
            if we:
                self._check(1, adr, sel)
                data = m >> (12 + self.adr_width) & 0xffffffff
                o = self._offset(adr << 2, 4)
                for lane in range(4):
                    if sel >> lane & 1:
                        self.mem[o + lane] = data >> 8*lane & 0xff
                self.writes += 1
            else:
                self.reads += 1
                data = self._read_data
            if cti == CTI_INCREMENTING:
                self.bursts += 1
            if self.on_access is not None:
                self.on_access(we, adr << 2, data, sel)
        elif active and self._expect is not None and adr != self._expect:
            raise WishboneAccessError(f"wishbone burst beat at adr {adr:#x}, expected {self._expect:#x}")

        # Next ack: a pending request, or the beat a burst promised (cti=0b010 on an ack cycle).
        candidate = None
        self._expect = None
        if active:
            if not self._ack:
                candidate = adr
            elif cti == CTI_INCREMENTING:
                if bte != 0:
                    raise WishboneAccessError(f"wishbone burst with bte={bte}: only linear bursts")
                candidate = (adr + 1) & self.adr_mask
                self._expect = candidate
        ack = candidate is not None and not (self.wait and self.rng.random() < self.wait)

        if ack:
            self._expect   = None
            self._ack_adr  = candidate
            self._ack_we   = we
            if we:
                value = 1
            else:
                self._check(0, candidate, sel if sel else 0xf)
                o = self._offset(candidate << 2, 4)
                self._read_data = int.from_bytes(self.mem[o:o + 4], "little")
                value = 1 | self._read_data << 2
            self._garbage = False
        elif not self._garbage:
            value = self.rng.getrandbits(32) << 2
            self._garbage = True
        else:
            value = self._driven
        self._ack = ack
        if value != self._driven:
            self.drive_signal.setimmediatevalue(value)
            self._driven = value

    async def run(self, clock):
        """Tick on every rising edge of `clock`, for testbenches without a per-cycle loop."""
        from cocotb.triggers import RisingEdge
        edge = RisingEdge(clock)
        while True:
            await edge
            self.tick()
