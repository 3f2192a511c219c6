#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""NIC-level cycle-accurate tests of litedav.gateware.nic.OffloadNIC, with cocotb 1.9 and Verilator.

The whole NIC as the SoC instantiates it: LiteEth's MAC core with preamble and FCS, behind a GMII
(1 Gbit/s, 125 MHz PHY clock) or MII (100 Mbit/s, 25 MHz) PHY driven by cocotbext-eth's models;
its two DMA masters share one wishbone bus (LiteX arbiter) to a RAM model (wishbone_ram.py); its
registers are reached through LiteX's CSR bank, as the CPU reaches them. A driver model plays the
CPU: it keeps the RX ring stocked, collects frames and their status from the descriptors, and
posts TX chains (scatter-gather, checksum requests, TSO).

Every expected frame comes from scapy (frames.py, and the reference models of the per-core tests).

    python3 -m pytest cocotb_tests/test_nic.py      # fast
    LITEDAV_FUZZ=1 ...                              # long: LITEDAV_NIC_FRAMES frames each way
"""

import os
import random

import cocotb
from cocotb.triggers import Lock, RisingEdge

from harness import FUZZ, SEED, build_verilog, reset, run_cocotb, sim_build
from wishbone_ram import WishboneRAM, wishbone_ram_ports
from frames import random_frame
from test_rx_checksum import reference_status
from test_tx_checksum import reference_frame
from test_tso import random_template, expected_segments

SYS_CLK_NS = 8                          # 125 MHz.
# 125 MHz GMII (8 bits), 25 MHz MII (4 bits); gmii_sys: GMII with the MAC's datapath in sys_clk
# and buffered clock-domain FIFOs, as the boards build it (OffloadNIC with_sys_datapath).
PHY_CLK_NS = {"gmii": 8, "mii": 40, "gmii_sys": 8}
RAM_SIZE   = 8 << 20
RX_RING, TX_RING = 0x0000, 0x4000       # Descriptor rings.
RX_BUFFERS = 0x10000                    # RX buffers, 2 KiB each.
TX_BUFFERS = 0x100000                   # TX data, one slot per descriptor.
RX_SLOT, TX_SLOT = 2048, 16384
RX_DESCRIPTORS, TX_DESCRIPTORS = 64, 128

FRAMES = int(os.environ.get("LITEDAV_NIC_FRAMES", "20000" if FUZZ else "150"))

EOP, IP_CSUM, L4_CSUM, TSO_FLAG = 1 << 16, 1 << 17, 1 << 18, 1 << 19

# Harness ------------------------------------------------------------------------------------------

def nic_verilog(phy_mode):
    from migen import Module, Signal, ClockDomain, ClockDomainsRenamer, Cat
    from litex.soc.interconnect import csr_bus, wishbone
    from liteeth.phy.gmii import LiteEthPHYGMIIRX, LiteEthPHYGMIITX
    from liteeth.phy.mii import LiteEthPHYMIIRX, LiteEthPHYMIITX
    from litedav.gateware.nic import OffloadNIC

    width = 4 if phy_mode == "mii" else 8

    class Pads:
        def __init__(self):
            for name, bits in (("rx_dv", 1), ("rx_er", 1), ("rx_data", width),
                               ("tx_en", 1), ("tx_er", 1), ("tx_data", width)):
                setattr(self, name, Signal(bits, name=name))

    class PHY(Module):
        """LiteEth's GMII/MII RX and TX halves on one PHY clock (no CRG: the clock is a port)."""
        dw = 8
        def __init__(self, pads, clock):
            self.clock_domains.cd_eth_rx = ClockDomain()
            self.clock_domains.cd_eth_tx = ClockDomain()
            self.comb += [self.cd_eth_rx.clk.eq(clock), self.cd_eth_tx.clk.eq(clock)]
            rx, tx = (LiteEthPHYGMIIRX, LiteEthPHYGMIITX) if width == 8 else (LiteEthPHYMIIRX, LiteEthPHYMIITX)
            self.submodules.rx = ClockDomainsRenamer("eth_rx")(rx(pads))
            self.submodules.tx = ClockDomainsRenamer("eth_tx")(tx(pads))
            self.sink, self.source = self.tx.sink, self.rx.source

    class Harness(Module):
        def __init__(self):
            self.phy_clk = Signal(name="phy_clk")
            self.pads = pads = Pads()
            self.submodules.phy = PHY(pads, self.phy_clk)
            self.submodules.nic = nic = OffloadNIC(self.phy, with_preamble_crc=True,
                with_sys_datapath=phy_mode == "gmii_sys")
            # Both DMA masters on one bus, as in the SoC.
            bus = wishbone.Interface(data_width=32, address_width=32, addressing="word", bursting=True)
            self.submodules.arbiter = wishbone.Arbiter([nic.rx_bus, nic.tx_bus], bus)
            self.wb_drive, self.wb_monitor = wishbone_ram_ports(self, bus)
            # Registers through LiteX's CSR bank (bank 0), one 32-bit word per register word.
            self.csr = csr_bus.Interface(data_width=32, address_width=14)
            self.submodules.csrbanks = csr_bus.CSRBankArray(self,
                lambda name, memory: 0 if name == "nic" else None, data_width=32, address_width=14)
            self.submodules.csrcon = csr_bus.Interconnect(self.csr, self.csrbanks.get_buses())
            self.csr_drive = Signal(14 + 1 + 32, name="csr_drive")
            self.csr_read  = Signal(32, name="csr_read")
            self.irq       = Signal(name="irq")
            self.comb += [
                Cat(self.csr.adr, self.csr.we, self.csr.dat_w).eq(self.csr_drive),
                self.csr_read.eq(self.csr.dat_r),
                self.irq.eq(nic.ev.irq),
            ]

    harness = Harness()
    p = harness.pads
    return build_verilog(f"nic_{phy_mode}", harness,
        [harness.csr_drive, harness.wb_drive, p.rx_dv, p.rx_er, p.rx_data],
        [harness.csr_read, harness.irq, harness.wb_monitor, p.tx_en, p.tx_er, p.tx_data],
        clock_period_ns=SYS_CLK_NS, extra_clocks={harness.phy_clk: PHY_CLK_NS[phy_mode]})

# Driver model (the CPU) ---------------------------------------------------------------------------

def register_offsets():
    """Word offsets of the NIC's registers, in CSRBankArray's order (see docs/nic_registers.md)."""
    import re
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "nic_registers.md")
    offsets = {}
    for offset, name in re.findall(r"^\| 0x([0-9a-f]+) \| `nic_(\w+)` \|", open(path).read(), re.M):
        offsets[name] = int(offset, 16)//4
    return offsets


class Driver:
    def __init__(self, dut, rng, phy_mode):
        self.dut, self.rng, self.phy_mode = dut, rng, phy_mode
        self.ram = WishboneRAM(dut.wb_drive, dut.wb_monitor, size=RAM_SIZE, rng=rng)
        self.ram.write(0, rng.randbytes(RAM_SIZE))
        self.regs = register_offsets()
        self.csr_lock = Lock()
        self.rx_next = 0  # Next RX descriptor the driver expects back.
        self.tx_tail = 0
        self.tx_done = 0  # Oldest TX descriptor not known to be done.
        self.received = []

    async def csr_write(self, name, value):
        async with self.csr_lock:
            self.dut.csr_drive.setimmediatevalue(self.regs[name] | 1 << 14 | value << 15)
            await RisingEdge(self.dut.sys_clk)
            self.dut.csr_drive.setimmediatevalue(self.regs[name])
            await RisingEdge(self.dut.sys_clk)

    async def csr_read(self, name):
        async with self.csr_lock:
            self.dut.csr_drive.setimmediatevalue(self.regs[name])
            await RisingEdge(self.dut.sys_clk)
            await RisingEdge(self.dut.sys_clk)
            return int(self.dut.csr_read.value)

    async def start(self, keep_errors=False):
        for i in range(RX_DESCRIPTORS):
            self.post_rx(i)
        for name, value in (("rx_ring_base", RX_RING), ("rx_ring_size", RX_DESCRIPTORS),
                            ("rx_ring_tail", RX_DESCRIPTORS - 1), ("tx_ring_base", TX_RING),
                            ("tx_ring_size", TX_DESCRIPTORS), ("tx_ring_tail", 0),
                            ("rx_control", 1 | keep_errors << 1), ("tx_control", 1)):
            await self.csr_write(name, value)

    def post_rx(self, i):
        d = RX_RING + 16*i
        self.ram.write_word(d, RX_BUFFERS + RX_SLOT*i)
        self.ram.write_word(d + 4, RX_SLOT)
        self.ram.write_word(d + 8, 0)
        self.ram.write_word(d + 12, 0)

    async def rx_poll(self):
        """Collect frames the NIC handed back; give their descriptors back."""
        head = await self.csr_read("rx_ring_head")
        while self.rx_next != head:
            i = self.rx_next
            d = RX_RING + 16*i
            word2, word3 = self.ram.read_word(d + 8), self.ram.read_word(d + 12)
            assert word2 >> 16 & 1, f"RX descriptor {i} before head {head} is not done"
            length = word2 & 0xffff
            self.received.append((self.ram.read(RX_BUFFERS + RX_SLOT*i, length), word2, word3))
            self.post_rx(i)
            self.rx_next = (i + 1) % RX_DESCRIPTORS
        # One slot stays empty: tail one behind the next descriptor to come back.
        await self.csr_write("rx_ring_tail", (self.rx_next + RX_DESCRIPTORS - 1) % RX_DESCRIPTORS)

    def tx_free(self):
        return (self.tx_done - self.tx_tail - 1) % TX_DESCRIPTORS

    async def tx_reap(self):
        self.tx_done = await self.csr_read("tx_ring_head")

    async def post_tx(self, fragments, flags, mss=0):
        """Post one chain: `fragments` (bytes each) as consecutive descriptors, each buffer at a
        random byte offset of its descriptor's slot."""
        while self.tx_free() < len(fragments):
            await self.tx_reap()
        for k, data in enumerate(fragments):
            i = self.tx_tail
            address = TX_BUFFERS + TX_SLOT*i + self.rng.randrange(0, TX_SLOT - len(data) + 1)
            self.ram.write(address, data)
            d = TX_RING + 16*i
            self.ram.write_word(d, address)
            self.ram.write_word(d + 4, len(data) | (EOP if k == len(fragments) - 1 else 0) | (flags if k == 0 else 0))
            self.ram.write_word(d + 8, mss if k == 0 else 0)
            self.ram.write_word(d + 12, 0)
            self.tx_tail = (i + 1) % TX_DESCRIPTORS
        await self.csr_write("tx_ring_tail", self.tx_tail)


def split(rng, data, max_fragments=4, max_size=TX_SLOT):
    """`data` cut into 1..max_fragments non-empty pieces of at most max_size bytes."""
    pieces = max(-(-len(data)//max_size), rng.randrange(1, max_fragments + 1))
    pieces = min(pieces, len(data)) or 1
    cuts = sorted(rng.sample(range(1, len(data)), pieces - 1)) if pieces > 1 else []
    bounds = [0] + cuts + [len(data)]
    out = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    if any(len(p) > max_size for p in out):
        return [data[i:i + max_size] for i in range(0, len(data), max_size)]
    return out


def mac_padded(frame):
    return frame + bytes(max(0, 60 - len(frame)))

# Reference RX outcome ------------------------------------------------------------------------------

def rx_descriptor_words(frame, frame_error=0):
    st = reference_status(frame, frame_error)
    word2 = (len(frame) | 1 << 16 | st["frame_error"] << 17 | st["runt"] << 18 | st["truncated"] << 19
        | st["length_error"] << 20 | st["vlan"] << 22 | st["l3_status"] << 24 | st["l4_status"] << 26)
    word3 = st["protocol"] | st["l3_offset"] << 8 | st["l4_offset"] << 16
    return word2, word3

# Tests --------------------------------------------------------------------------------------------

async def boot(dut, phy_mode, seed):
    from cocotbext.eth import GmiiSink, GmiiSource, MiiSink, MiiSource
    rng = random.Random(seed)
    dut.csr_drive.setimmediatevalue(0)
    dut.rx_dv.setimmediatevalue(0)
    dut.rx_er.setimmediatevalue(0)
    dut.rx_data.setimmediatevalue(0)
    driver = Driver(dut, rng, phy_mode)
    cocotb.start_soon(driver.ram.run(dut.sys_clk))
    await reset(dut, cycles=10)
    Source, Sink = (MiiSource, MiiSink) if phy_mode == "mii" else (GmiiSource, GmiiSink)
    driver.source = Source(dut.rx_data, dut.rx_er, dut.rx_dv, dut.phy_clk)
    driver.sink   = Sink(dut.tx_data, dut.tx_er, dut.tx_en, dut.phy_clk)
    return rng, driver


def gmii_frame(rng, frame, bad_fcs):
    from cocotbext.eth import GmiiFrame
    if not bad_fcs:
        return GmiiFrame.from_payload(frame, min_len=0)
    good = GmiiFrame.from_payload(frame, min_len=0)
    raw = bytearray(good.get_payload(strip_fcs=False))
    raw[-1 - rng.randrange(4)] ^= 1 << rng.randrange(8)
    return GmiiFrame.from_raw_payload(bytes(raw))


@cocotb.test()
async def random_traffic(dut):
    """Random frames both ways at once: RX checksum status, FCS drops; TX scatter-gather, checksum
    insertion and TSO; rings wrap many times."""
    phy_mode = os.environ["LITEDAV_NIC_PHY"]
    rng, driver = await boot(dut, phy_mode, SEED)
    await driver.start()

    # RX: frames from the wire; the ones with a bad FCS must be dropped and counted.
    rx_expected, rx_bad_fcs, rx_bad_frames = [], 0, []
    for _ in range(FRAMES):
        frame = random_frame(rng)
        bad_fcs = rng.random() < 0.05
        if len(frame) < 14:
            frame += rng.randbytes(14 - len(frame))
        await driver.source.send(gmii_frame(rng, frame, bad_fcs))
        if bad_fcs:
            rx_bad_fcs += 1
            rx_bad_frames.append(frame)
        else:
            rx_expected.append(frame)

    # TX: plain frames with random checksum requests, and TSO chains.
    tx_expected, tso_chains = [], 0
    async def transmit():
        nonlocal tso_chains
        for _ in range(FRAMES):
            if rng.random() < 0.2:
                template = random_template(rng)
                mss = rng.randrange(536, 1461)
                payload = rng.randbytes(rng.choice([0, rng.randrange(1, 3*mss), rng.randrange(1, 20000 if FUZZ else 6000)]))
                header = bytes(template)
                await driver.post_tx([header] + (split(rng, payload, 6) if payload else []),
                    IP_CSUM | L4_CSUM | TSO_FLAG, mss)
                tx_expected.extend(expected_segments(template, payload, mss, with_checksums=True))
                tso_chains += 1
            else:
                frame = random_frame(rng, damage=0.1, runts=0.0)
                flags = rng.choice([0, IP_CSUM, L4_CSUM, IP_CSUM | L4_CSUM])
                await driver.post_tx(split(rng, frame), flags)
                tx_expected.append(reference_frame(frame, bool(flags & IP_CSUM), bool(flags & L4_CSUM)))
    tx_task = cocotb.start_soon(transmit())

    tx_received = 0
    async def collect_tx():
        nonlocal tx_received
        while True:
            got = await driver.sink.recv()
            assert got.check_fcs(), "TX frame with a bad FCS"
            payload = got.get_payload()
            want = mac_padded(tx_expected[tx_received])
            assert payload == want, (f"TX frame {tx_received}: got {len(payload)} bytes\n{payload.hex()}\n"
                f"expected {len(want)}\n{want.hex()}")
            tx_received += 1
    cocotb.start_soon(collect_tx())

    cycles = 0
    while len(driver.received) < len(rx_expected) or not tx_task.done() or tx_received < len(tx_expected):
        await driver.rx_poll()
        for _ in range(20):
            await RisingEdge(dut.sys_clk)
        cycles += 22
        assert cycles < 2_000_000 + 40_000*FRAMES, (f"stuck: RX {len(driver.received)}/{len(rx_expected)}, "
            f"TX {tx_received}/{len(tx_expected)}")

    for n, (frame, (data, word2, word3)) in enumerate(zip(rx_expected, driver.received)):
        if data != frame:
            later = [(k, len(f)) for k, f in enumerate(rx_expected) if f[:12] == data[:12]]
            later += [("bad fcs", k, f == data) for k, f in enumerate(rx_bad_frames) if f[:12] == data[:12]]
            counters = {name: await driver.csr_read(name) for name in ("rx_ring_head", "rx_dropped_empty",
                "rx_dropped_error", "rx_dropped_overrun", "rx_fcs_errors", "rx_preamble_errors")}
            dut._log.error(f"RX frame {n} ({len(frame)} bytes) missing: got {len(data)} bytes, same MACs as expected {later}; "
                f"lengths {[len(f) for f in rx_expected[n - 2:n + 3]]}; {counters}")
        assert data == frame, f"RX frame {n}: got {data.hex()}\nexpected {frame.hex()}"
        want2, want3 = rx_descriptor_words(frame)
        assert (word2, word3) == (want2, want3), (f"RX frame {n} descriptor: got {word2:#010x} {word3:#010x}, "
            f"expected {want2:#010x} {want3:#010x}")
    assert await driver.csr_read("rx_dropped_error") == rx_bad_fcs
    assert await driver.csr_read("rx_dropped_empty") == 0
    assert await driver.csr_read("rx_dropped_overrun") == 0
    assert await driver.csr_read("rx_ring_head") == len(rx_expected) % RX_DESCRIPTORS
    assert await driver.csr_read("tx_errors") == 0
    with open(os.path.join(sim_build(f"nic_{phy_mode}"), "random_traffic.count"), "w") as f:
        f.write(f"{len(rx_expected)} {rx_bad_fcs} {FRAMES} {tso_chains} {len(tx_expected)}\n")


def sized_frame(rng, size):
    """An IPv4/UDP frame of exactly `size` bytes (no FCS), built by scapy."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    head = Ether(dst="02:00:00:00:00:01") / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2)
    return bytes(head / Raw(rng.randbytes(size - len(head))))


@cocotb.test()
async def line_rate(dut):
    """Back-to-back minimum- and maximum-size frames in both directions at once at line rate: no
    frame lost, and the frames accepted per cycle compared with what the wire allows."""
    phy_mode = os.environ["LITEDAV_NIC_PHY"]
    rng, driver = await boot(dut, phy_mode, SEED + 1)
    await driver.start()
    await driver.csr_write("irq_count", 16)
    bits_per_cycle = 4 if phy_mode == "mii" else 8
    report = []
    for size in (60, 1514):
        count = 200 if size == 60 else 40
        frames = [sized_frame(rng, size) for _ in range(count)]
        rx_before = len(driver.received)
        for frame in frames:
            await driver.source.send(gmii_frame(rng, frame, False))
        # TX: all chains posted first, so the NIC has them all before the wire is busy.
        tx_times = []
        for frame in frames[:TX_DESCRIPTORS//2]:
            await driver.post_tx([frame], IP_CSUM | L4_CSUM)
        posted = min(count, TX_DESCRIPTORS//2)
        start = None
        while len(tx_times) < posted or len(driver.received) - rx_before < count:
            if not driver.sink.empty():
                got = driver.sink.recv_nowait()
                assert got.check_fcs() and got.get_payload() == frames[len(tx_times)]
                tx_times.append(got.sim_time_sfd)
            await driver.rx_poll()
            for _ in range(8):
                await RisingEdge(dut.sys_clk)
        # Per frame on the wire: preamble + SFD 8, frame, FCS 4, inter-frame gap 12 bytes.
        wire_bytes = 8 + size + 4 + 12
        period_ns = (tx_times[-1] - tx_times[0])/(len(tx_times) - 1)/1000  # sim_time_sfd is in ps.
        line_ns = wire_bytes*8/bits_per_cycle*PHY_CLK_NS[phy_mode]
        report.append(f"{size} {count} {posted} {period_ns:.1f} {line_ns:.1f}")
        assert period_ns <= line_ns*1.001, f"TX of {size}-byte frames: {period_ns} ns per frame, line rate {line_ns}"
    assert await driver.csr_read("rx_dropped_empty") == 0
    assert await driver.csr_read("rx_dropped_overrun") == 0
    with open(os.path.join(sim_build(f"nic_{phy_mode}"), "line_rate.txt"), "w") as f:
        f.write("\n".join(report) + "\n")


@cocotb.test()
async def short_frames_zero_padding(dut):
    """Frames of 14 to 59 bytes, in one to three buffers whose RAM goes on with random bytes: the
    MAC pads them to 60 bytes with zeros, never with what the DMA read past a buffer's end (with
    the sys_clk datapath LiteEth's padding inserter sends the last word whole)."""
    phy_mode = os.environ["LITEDAV_NIC_PHY"]
    rng, driver = await boot(dut, phy_mode, SEED + 3)
    await driver.start()
    expected = []
    for size in list(range(14, 60))*2:
        frame = random_frame(rng, damage=0.0, runts=1.0)[:size]
        frame += rng.randbytes(size - len(frame))
        flags = rng.choice([0, IP_CSUM, L4_CSUM, IP_CSUM | L4_CSUM])
        await driver.post_tx(split(rng, frame, 3), flags)
        expected.append(mac_padded(reference_frame(frame, bool(flags & IP_CSUM), bool(flags & L4_CSUM))))
    for n, want in enumerate(expected):
        got = (await driver.sink.recv()).get_payload()
        assert got == want, f"TX frame {n} ({len(got)} bytes)\n{got.hex()}\nexpected\n{want.hex()}"


@cocotb.test()
async def interrupt_moderation(dut):
    """The interrupt fires after irq_count completions (here RX frames, TX idle), or irq_timeout x 16
    cycles after the first; clearing the pending bit acks it."""
    phy_mode = os.environ["LITEDAV_NIC_PHY"]
    rng, driver = await boot(dut, phy_mode, SEED + 2)
    await driver.start()
    await driver.csr_write("ev_enable", 1)
    await driver.csr_write("irq_count", 3)
    await driver.csr_write("irq_timeout", 0)
    for n in range(3):
        await driver.source.send(gmii_frame(rng, sized_frame(rng, 100), False))
        await driver.source.wait()
        for _ in range(300):
            await RisingEdge(dut.sys_clk)
        head = await driver.csr_read("rx_ring_head")
        status = await driver.csr_read("ev_status")
        assert int(dut.irq.value) == (n == 2), f"irq after {n + 1} frames of 3 (rx head {head}, ev_status {status})"
    await driver.csr_write("ev_pending", 1)
    await RisingEdge(dut.sys_clk)
    assert int(dut.irq.value) == 0, "irq still set after the ack"
    # Timer: one frame, timeout of 63 ticks of 16 cycles (1008 cycles).
    await driver.csr_write("irq_timeout", 63)
    await driver.source.send(gmii_frame(rng, sized_frame(rng, 100), False))
    await driver.source.wait()
    for _ in range(300):
        await RisingEdge(dut.sys_clk)
    assert int(dut.irq.value) == 0, "irq before the timeout"
    for _ in range(1000):
        await RisingEdge(dut.sys_clk)
    assert int(dut.irq.value) == 1, "no irq after the timeout"
    # TX completions count too: two chains, count 2, no timer.
    await driver.csr_write("irq_count", 2)
    await driver.csr_write("irq_timeout", 0)
    await driver.csr_write("ev_pending", 1)
    await RisingEdge(dut.sys_clk)
    assert int(dut.irq.value) == 0, "irq still set after the second ack"
    for n in range(2):
        await driver.post_tx([sized_frame(rng, 100)], 0)
        for _ in range(2000):
            await RisingEdge(dut.sys_clk)
        assert int(dut.irq.value) == (n == 1), f"irq after {n + 1} TX chains of 2"

# pytest entry points ------------------------------------------------------------------------------

def run_nic(phy_mode, testcase):
    os.environ["LITEDAV_NIC_PHY"] = phy_mode
    run_cocotb(f"nic_{phy_mode}", "test_nic", nic_verilog(phy_mode), testcase)


def test_register_reference_is_current():
    """docs/nic_registers.md matches the gateware, with and without preamble/FCS handling."""
    from litedav.gateware.nic import model_nic, register_reference
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "nic_registers.md")
    for with_preamble_crc in (False, True):
        assert register_reference(model_nic(with_preamble_crc)) == open(path).read(), \
            "docs/nic_registers.md is stale: run python3 -m litedav.gateware.nic"


def test_nic_gmii_random_traffic(capsys):
    run_nic("gmii", "random_traffic")
    rx, bad, tx_chains, tso, tx_frames = open(os.path.join(sim_build("nic_gmii"), "random_traffic.count")).read().split()
    with capsys.disabled():
        print(f"\nnic (GMII): {rx} RX frames checked, {bad} with a bad FCS dropped; {tx_chains} TX chains "
              f"({tso} TSO) -> {tx_frames} frames checked (seed {SEED}{', fuzz' if FUZZ else ''})")


def test_nic_mii_random_traffic(capsys):
    run_nic("mii", "random_traffic")


def test_nic_gmii_sys_datapath_random_traffic(capsys):
    """The boards' MAC: preamble, FCS and padding in sys_clk, buffered clock-domain FIFOs."""
    run_nic("gmii_sys", "random_traffic")


def test_nic_gmii_sys_datapath_short_frames_zero_padding():
    run_nic("gmii_sys", "short_frames_zero_padding")


def test_nic_gmii_line_rate(capsys):
    run_nic("gmii", "line_rate")
    with capsys.disabled():
        for line in open(os.path.join(sim_build("nic_gmii"), "line_rate.txt")):
            size, count, posted, period, line_ns = line.split()
            print(f"\nnic (GMII, sys_clk 125 MHz): {count} x {size}-byte frames RX + {posted} TX at once: "
                  f"TX {period} ns/frame (line rate {line_ns}), no RX drops")


def test_nic_interrupt_moderation():
    run_nic("gmii", "interrupt_moderation")
