"""LiteEth's MAC for the simulated ideal SoC, with its RX slots in one memory.

LiteEth gives each RX slot its own memory with its own write port, its own wishbone SRAM (an
address register and an ack register) and a leg of a decoder and of a read multiplexer. With the
ideal SoC's 32 slots that is about a quarter of the SoC's per-cycle code in the Verilated model,
all of it evaluated every cycle, whatever the traffic (bench/README.md, "Where the time goes").

Here the slots are one memory of nslots x stride words, stride the power of two LiteEth's decoder
already spaces the slots by: the writer's port writes word `addr` of slot `s` at `{s, addr}`,
and one wishbone SRAM answers the whole RX region, so the bus address reaches the memory as it
did through the decoder (slot in the decoder's bits, word below them). What the CPU and the MAC
see is unchanged cycle for cycle: the same ack one cycle after the request, the same read data,
the same writes (tests/test_liteeth_slots.py runs both side by side, cycle by cycle). Only
words no slot has (LiteEth's slot is 383 words in a 512-word stride) read differently: a word
of the padding instead of an out-of-range read; no driver reads there.

The change is made on LiteEth's own modules after they are built (the writer's per-slot ports and
their slot case are replaced, the per-slot SRAMs and decoder are not created), so the MAC's
state machines, FIFOs and CSRs are LiteEth's. A LiteEth whose writer is built differently is
refused with a message rather than merged wrongly.
"""

import math
from unittest import mock

from migen import Case, Cat, If, Memory
from migen.fhdl.bitcontainer import log2_int
from migen.fhdl.structure import _Assign
from migen.fhdl.specials import _MemoryPort

from litex.soc.interconnect import wishbone

import liteeth.mac
from liteeth.common import eth_mtu
from liteeth.mac.wishbone import LiteEthMACWishboneInterface


class LiteEthSlotsError(RuntimeError):
    """LiteEth's writer is not built the way the merge expects (another LiteEth version)."""


def _slot_case(writer):
    """The writer's `Case(slot, {n: [port_n.adr.eq(addr), port_n.dat_w.eq(data),
    If(cond, port_n.we.eq(...))]})` and its per-slot ports."""
    ports = {id(port.adr): port for port in writer._fragment.specials
             if isinstance(port, _MemoryPort)}
    for statement in writer._fragment.comb:
        if isinstance(statement, Case) and any(
                isinstance(s, _Assign) and id(s.l) in ports
                for body in statement.cases.values() for s in body):
            return statement, ports
    raise LiteEthSlotsError("LiteEth's SRAM writer has no per-slot write case: this LiteEth "
                            "builds its RX slots differently; build with LiteEth's own slots "
                            "(litedav-soc --liteeth-stock-slots)")


def merge_writer_slots(writer, nslots, depth):
    """Replaces the writer's per-slot memories by one; returns it (nslots x stride words)."""
    if nslots < 2 or nslots & (nslots - 1):
        raise LiteEthSlotsError(f"merged RX slots need a power-of-two slot count of at least 2, "
                                f"not {nslots} (LiteEth's slot counter wraps at a power of two)")
    case, ports = _slot_case(writer)
    bodies = {getattr(key, "value", key): body for key, body in case.cases.items()}
    if set(bodies) != set(range(nslots)) or len(ports) != nslots:
        raise LiteEthSlotsError(f"LiteEth's SRAM writer has {len(ports)} slot ports and a case "
                                f"over {sorted(map(str, bodies))}, expected {nslots} slots")
    body = bodies[0]
    if not (len(body) == 3 and isinstance(body[0], _Assign) and isinstance(body[1], _Assign)
            and isinstance(body[2], If) and len(body[2].t) == 1):
        raise LiteEthSlotsError("LiteEth's SRAM writer writes its slots differently than "
                                "address, data and a conditional write enable")
    port0 = ports.get(id(body[0].l))
    if port0 is None:
        raise LiteEthSlotsError("LiteEth's SRAM writer slot case does not drive a slot port")
    if body[1].l is not port0.dat_w or body[2].t[0].l is not port0.we:
        raise LiteEthSlotsError("LiteEth's SRAM writer slot case does not drive one port")
    word_addr, word_data, write = body[0].r, body[1].r, body[2].cond

    addr_bits = log2_int(depth, need_pow2=False)   # LiteEth's decoder offset, as it computes it
    memory = Memory(len(word_data), nslots << addr_bits, name="rx_slots")
    port = memory.get_port(write_capable=True)
    writer._fragment.comb.remove(case)
    for slot_port in ports.values():
        writer._fragment.specials.remove(slot_port)
    writer.specials += port
    writer.comb += [
        port.adr.eq(Cat(word_addr[:addr_bits], case.test)),
        port.dat_w.eq(word_data),
        If(write, port.we.eq(2**len(port.we) - 1)),
    ]
    return memory


class MergedRxSlotsInterface(LiteEthMACWishboneInterface):
    """LiteEthMACWishboneInterface with its RX slots in one memory behind one wishbone SRAM."""

    def _expose_wishbone_sram_interfaces(self, bus, dw, mems, nslots, read_only, write_only):
        if mems is not self.sram.writer.mems:   # The TX slots: as LiteEth exposes them.
            return super()._expose_wishbone_sram_interfaces(bus, dw, mems, nslots, read_only,
                                                            write_only)
        depth = math.ceil(eth_mtu / (dw // 8))
        memory = merge_writer_slots(self.sram.writer, nslots, depth)
        self.sram.writer.mems = [memory]
        self.rx_sram = wishbone.SRAM(memory, read_only=read_only, write_only=write_only, bus=bus)


def add_ethernet(soc, phy, nrxslots, ntxslots):
    """What LiteX's SoC.add_ethernet() adds for the simulator's PHY (8-bit PHY data, MAC datapath
    in the PHY's clock domains, wishbone slots, no timestamps), with MergedRxSlotsInterface."""
    with mock.patch.object(liteeth.mac, "LiteEthMACWishboneInterface", MergedRxSlotsInterface):
        soc.add_ethernet(phy=phy, nrxslots=nrxslots, ntxslots=ntxslots)
    if not isinstance(soc.ethmac.interface, MergedRxSlotsInterface):
        raise LiteEthSlotsError("LiteX's add_ethernet() did not build LiteEth's MAC through "
                                "liteeth.mac.LiteEthMACWishboneInterface")
