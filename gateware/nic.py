#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The offload NIC: LiteEth's MAC core, checksum offloads, TSO and descriptor-ring DMA, with its
control registers and one interrupt (docs/nic.md).

    RX: MAC -> RxChecksum -> RxDMA -> rx_bus (wishbone master) -> main RAM
    TX: main RAM -> tx_bus (wishbone master) -> TxDMA -> TSO -> TxChecksum -> MAC

Registers are LiteX CSRs (`nic_<name>` in the SoC's csr.h); `python3 -m litedav.gateware.nic`
writes their reference (docs/nic_registers.md) from the descriptions below, so the table cannot
drift from the gateware.
"""

import argparse

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStatus, CSRStorage, CSRField
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourceLevel

from liteeth.common import eth_phy_description
from liteeth.mac.core import LiteEthMACCore

from .checksum import RxChecksum
from .rx_dma import RxDMA, rx_dma_counters, ring_index_bits, ring_size_bits
from .tx_dma import TxDMA
from .tso import TSO
from .tx_checksum import TxChecksum
from .irq_moderation import IRQModeration

# Descriptions of the per-ring registers, shared by RX and TX.
ring_registers = {
    "size": (ring_size_bits, "Number of descriptors in the ring, 2..4096 (a larger value, or a tail not below it, stops the ring)."),
    "tail": (ring_index_bits, "CPU: index one past the last descriptor handed to the NIC."),
}

# Interrupt moderation: the timeout counts ticks of this many cycles.
irq_tick_cycles = 16


class MarkLastByte(LiteXModule):
    """Stands in for an 8-bit PHY towards the MAC core, with `last_be` set on the last byte.

    LiteEth's 8-bit PHYs (GMII, MII, the sim model) leave `last_be` at 0, and the MAC's FCS checker
    only evaluates its CRC on a byte whose `last_be` bit is set: without this, frames with a bad
    FCS were passed on as good (found by test_nic.py with cocotbext-eth's GMII model).
    """
    def __init__(self, phy):
        self.dw     = phy.dw
        self.sink   = phy.sink
        self.source = source = stream.Endpoint(eth_phy_description(phy.dw))
        for name in ("with_preamble_crc", "with_padding", "integrated_ifg_inserter"):
            if hasattr(phy, name):
                setattr(self, name, getattr(phy, name))

        # # #

        self.comb += [
            phy.source.connect(source),
            source.last_be.eq(phy.source.last),
        ]


class OffloadNIC(LiteXModule):
    """`phy` is any LiteEth PHY (8-bit GMII/MII, the sim model...), or None for the NIC without its
    MAC: `mac_sink`/`mac_source` (32-bit frame streams) are then its MAC-side ports, which is how
    the resource bench measures the offloads and DMA alone. `with_preamble_crc` as in
    LiteEth: False for the simulator's PHY model, which carries bare frames. `with_sys_datapath`
    as in LiteEth's MAC core: preamble, FCS and padding at 32 bits in sys_clk instead of 8 bits in
    the PHY's clocks, which then hold only the PHY, the width converters and the clock-domain FIFOs
    (what lets an RGMII PHY's 125 MHz domain close timing on an ECP5)."""
    def __init__(self, phy, with_preamble_crc=True, with_sys_datapath=False):
        if phy is None:
            self.mac_sink   = stream.Endpoint(eth_phy_description(32)) # Frames from the wire.
            self.mac_source = stream.Endpoint(eth_phy_description(32)) # Frames to the wire.
            mac_rx, mac_tx, mac_errors = self.mac_sink, self.mac_source, None
        else:
            if phy.dw == 8:
                phy = MarkLastByte(phy)
                self.phy_last_byte = phy
            # With the sys datapath the clock-domain FIFOs' outputs are registered (buffered) and the
            # TX FIFO is 16 words deep (one 16x4 distributed RAM per 4 bits, no read mux): an
            # unregistered or deeper TX FIFO's read side is the 125 MHz RGMII domain's slowest path
            # on an ECP5-6 (docs/colorlight_i5.md). 16 words are enough: TxChecksum sends whole
            # stored frames at 4 bytes per sys cycle, twice what the 125 MHz side drains.
            self.mac = LiteEthMACCore(phy, dw=32, with_preamble_crc=with_preamble_crc,
                with_sys_datapath=with_sys_datapath,
                tx_cdc_depth=16 if with_sys_datapath else 32,
                tx_cdc_buffered=with_sys_datapath, rx_cdc_buffered=with_sys_datapath)
            mac_rx, mac_tx, mac_errors = self.mac.source, self.mac.sink, self.mac.rx_datapath
        self.rx_checksum = RxChecksum()
        self.rx_dma      = rx_dma = RxDMA()
        self.tx_dma      = tx_dma = TxDMA()
        self.tso         = tso    = TSO()
        self.tx_checksum = TxChecksum()

        # Bus masters, for the SoC's interconnect (or a harness' RAM).
        self.rx_bus = rx_dma.bus
        self.tx_bus = tx_dma.bus

        self.comb += [
            mac_rx.connect(self.rx_checksum.sink),
            self.rx_checksum.source.connect(rx_dma.sink),
            tx_dma.source.connect(tso.sink),
            tso.source.connect(self.tx_checksum.sink),
        ]
        if with_sys_datapath:
            # A register between TxChecksum's FIFO and the MAC: from the FIFO's block RAM output
            # (5.8 ns clock-to-output on an ECP5-6) through the MAC's CRC, padding and last_be
            # logic was 13.9 ns, past 75 MHz on the Colorlight i5. Full rate (ready passes through).
            self.tx_register = tx_register = stream.PipeValid(eth_phy_description(32))
            self.comb += [
                self.tx_checksum.source.connect(tx_register.sink),
                tx_register.source.connect(mac_tx),
            ]
        else:
            self.comb += self.tx_checksum.source.connect(mac_tx)

        # Ring registers.
        for direction, dma in (("rx", rx_dma), ("tx", tx_dma)):
            # Descriptors are 16-byte aligned: the base's low bits are not stored (they read 0).
            base = CSRStorage(name=f"{direction}_ring_base", fields=[CSRField("address", offset=4,
                size=28, description="Byte address of descriptor 0, bits 31:4 (16-byte aligned).")])
            setattr(self, f"_{direction}_ring_base", base)
            self.comb += dma.base[4:].eq(base.fields.address)
            for name, (width, description) in ring_registers.items():
                csr = CSRStorage(width, name=f"{direction}_ring_{name}", description=description)
                setattr(self, f"_{direction}_ring_{name}", csr)
                self.comb += getattr(dma, name).eq(csr.storage)
            head = CSRStatus(ring_index_bits, name=f"{direction}_ring_head",
                description="NIC: index of the next descriptor it will use (descriptors before it are done).")
            setattr(self, f"_{direction}_ring_head", head)
            self.comb += head.status.eq(dma.head)

        self._rx_control = CSRStorage(fields=[
            CSRField("enable", description="Run the RX engine. 0 stops at the next frame boundary and resets head to 0."),
            CSRField("keep_errors", description="Hand frames with an FCS/PHY error to the CPU (flagged) instead of dropping them."),
        ])
        self._tx_control = CSRStorage(fields=[
            CSRField("enable", description="Run the TX engine. 0 stops at the next chain boundary and resets head to 0."),
        ])
        self.comb += [
            rx_dma.enable.eq(self._rx_control.fields.enable),
            rx_dma.drop_errors.eq(~self._rx_control.fields.keep_errors),
            tx_dma.enable.eq(self._tx_control.fields.enable),
        ]

        # Counters of what the CPU cannot see in the descriptors (16 bits, wrapping; the driver takes
        # differences). Frames received, cut or short, and chains sent, it counts from the rings.
        rx_counter_descriptions = {
            "dropped_empty":   "Frames dropped: no RX descriptor available (or RX disabled).",
            "dropped_error":   "Frames dropped: FCS/PHY error (keep_errors = 0).",
            "dropped_overrun": "Frames dropped: the RX FIFO was full (bus too slow).",
        }
        for name in rx_dma_counters:
            counter = getattr(rx_dma, name)
            csr = CSRStatus(len(counter), name=f"rx_{name}", description=rx_counter_descriptions[name])
            setattr(self, f"_rx_{name}", csr)
            self.comb += csr.status.eq(counter)
        self._tx_errors = CSRStatus(16, description="Bad TX descriptors: empty, oversize chain, chain aborted by disable.")
        self._tso_errors = CSRStatus(16, description="TSO chains dropped: bad header template, hdr_len or MSS.")
        self.comb += [
            self._tx_errors.status.eq(tx_dma.errors),
            self._tso_errors.status.eq(tso.errors),
        ]

        # The MAC's own error counters, re-exported here so that the register map is the same with
        # and without preamble/FCS handling (the simulator's PHY model has neither).
        self.autocsr_exclude = {"mac"}
        self._rx_fcs_errors = CSRStatus(32, description="Frames with a bad FCS seen by the MAC (0 without FCS checking).")
        self._rx_preamble_errors = CSRStatus(32, description="Frames with a bad preamble seen by the MAC.")
        if hasattr(mac_errors, "crc_errors"): # The PHY may override with_preamble_crc.
            self.comb += [
                self._rx_fcs_errors.status.eq(mac_errors.crc_errors.status),
                self._rx_preamble_errors.status.eq(mac_errors.preamble_errors.status),
            ]

        # Interrupt: one moderated event for both rings (a driver services both on each interrupt:
        # one moderator instead of two). An RX and a TX completion on the same cycle count as one.
        self.ev = EventManager()
        self.ev.done = EventSourceLevel(description="RX frames handed back or TX chains completed "
            "(moderated by irq_count/irq_timeout).")
        self.ev.finalize()
        self.moderation = moderation = IRQModeration(tick_cycles=irq_tick_cycles)
        self._irq_count = CSRStorage(len(moderation.count_threshold), reset=1,
            description="Interrupt after this many completions, RX and TX together (0 or 1: every one).")
        self._irq_timeout = CSRStorage(len(moderation.timeout),
            description=f"... or this many times {irq_tick_cycles} sys_clk cycles after the first "
                "one (0: no timer). Change both with an ack.")
        self.comb += [
            moderation.event.eq(rx_dma.done | tx_dma.done),
            moderation.count_threshold.eq(self._irq_count.storage),
            moderation.timeout.eq(self._irq_timeout.storage),
            moderation.ack.eq(self.ev.done.clear),
            self.ev.done.trigger.eq(moderation.irq),
        ]


# Register reference ------------------------------------------------------------------------------

def register_reference(nic, prefix="nic"):
    """Markdown table of the NIC's CSRs in address order (one 32-bit word per CSR word)."""
    lines = [
        "# Offload NIC registers",
        "",
        f"Generated by `python3 -m litedav.gateware.nic --registers` from gateware/nic.py; do not edit.",
        f"Offsets are in bytes from the NIC's CSR base (`CSR_{prefix.upper()}_BASE` in the SoC's csr.h),",
        "one 32-bit word per register word. Descriptor formats: docs/nic.md.",
        "",
        "| offset | register | bits | access | description |",
        "|---|---|---|---|---|",
    ]
    offset = 0
    # Sorted as LiteX's CSRBankArray sorts them when it assigns addresses.
    for csr in nic.get_csrs(sort=True):
        access = "RO" if isinstance(csr, CSRStatus) else "RW"
        if csr.name.endswith("ev_pending"):
            access = "R, W1C" # Writing 1 clears the event (and acks its moderation).
        description = (getattr(csr, "description", None) or "").replace("\n", " ").strip()
        fields = getattr(csr, "fields", None)
        if fields is not None and fields.fields:
            description = "; ".join(f"bit {f.offset}: `{f.name}`: {f.description}" for f in fields.fields)
        lines.append(f"| 0x{offset:03x} | `{prefix}_{csr.name}` | {csr.size} | {access} | {description} |")
        offset += 4*((csr.size + 31)//32)
    return "\n".join(lines) + "\n"


def model_nic(with_preamble_crc=False):
    """An OffloadNIC on LiteEth's simulation PHY model, for generating the register reference."""
    from liteeth.phy.model import LiteEthPHYModel
    from migen.genlib.record import Record
    pads = Record([("source_valid", 1), ("source_ready", 1), ("source_data", 8),
                   ("sink_valid", 1), ("sink_ready", 1), ("sink_data", 8)])
    return OffloadNIC(LiteEthPHYModel(pads), with_preamble_crc=with_preamble_crc)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Offload NIC: write its register reference.")
    parser.add_argument("--registers", default="docs/nic_registers.md", help="output Markdown file")
    args = parser.parse_args(argv)
    with open(args.registers, "w") as f:
        f.write(register_reference(model_nic()))
    print(f"wrote {args.registers}")


if __name__ == "__main__":
    main()
