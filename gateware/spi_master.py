#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""A single-line SPI master behind the CSRs of LiteSPI's master, for a chip that only a driver
talks to (the store flash, platforms/store_flash.py): the same registers and fields at the same
offsets (`cs`, `phyconfig` len/width/mask, `rxtx`, `status` tx_ready/rx_ready), so the firmware's
LiteSPI driver (firmware/ports/litex/flash_litespi.c) runs on it unchanged, without LiteSPI's
crossbar, FIFOs, clock divider register and multi-line PHY, which a 1x port driven through CSRs
alone does not use."""

from litex.gen import *

from litex.soc.interconnect.csr import CSR, CSRField, CSRStatus, CSRStorage

# SPI Master ---------------------------------------------------------------------------------------

class SPIMaster(LiteXModule):
    """SPI mode 0 on one data line (pads: cs_n, clk, mosi, miso), SPI clock sys_clk/4.

    A write of `rxtx` starts a transfer of `phyconfig.len` bits (1 to 32) of the written word, its
    bit len-1 first; once `status.rx_ready`, a read of `rxtx` gives the bits the chip sent in its
    low len bits, the first one highest (the bits above them are what was written, shifted up, as
    LiteSPI's PHY leaves its shift register) and clears rx_ready. `status.tx_ready` is set while no
    transfer runs; a write meanwhile is dropped (the driver waits for tx_ready, or for rx_ready,
    which comes at the end of a transfer). `phyconfig.width` and `.mask` are kept for the driver,
    which sets them to one line, and otherwise unused.

    Chip select follows `cs` `cs_delay` cycles late when set (LiteSPI's PHY's default: the chip
    then sees it high for longer than its minimum between commands, tSHSL, however soon the driver
    selects it again) and at once when cleared; a transfer starts once the chip is selected, and
    the driver changes `cs` only between transfers.

    Each bit takes four cycles, all pads from registers: the bit onto MOSI, the clock's rising edge
    a cycle later, the clock's falling edge two cycles after that; MISO is sampled from a register
    that took the pin a cycle after the rising edge, the bit the chip drove since the falling edge
    before it.
    """
    def __init__(self, pads, cs_delay=10):
        self.cs        = CSRStorage(1, description="SPI chip select (1: selected).")
        self.phyconfig = CSRStorage(fields=[
            CSRField("len",   size=8, offset=0,  description="Transfer length in bits (1-32)."),
            CSRField("width", size=4, offset=8,  description="Data lines (1 only: LiteSPI's field)."),
            CSRField("mask",  size=8, offset=16, description="DQ output enables (LiteSPI's field, unused)."),
        ], description="Transfer settings, LiteSPI master's layout.")
        self.rxtx      = CSR(32)
        self.status    = CSRStatus(fields=[
            CSRField("tx_ready", size=1, offset=0, description="No transfer running: rxtx may be written."),
            CSRField("rx_ready", size=1, offset=1, description="A transfer ended: rxtx holds its bits."),
        ])

        # # #

        length    = self.phyconfig.fields.len[:6]
        shift     = Signal(32)   # Bits to send, MSB at `top`; received bits enter at bit 0.
        top       = Signal(5)    # Index of the next bit to send in `shift`: len - 1.
        bits_left = Signal(6)    # Of the running transfer; 0: none.
        phase     = Signal(2)    # Within a bit: 0 MOSI set, 1 clock rises, 3 clock falls.
        rx_ready  = Signal()
        selected  = Signal()
        cs_wait   = Signal(max=cs_delay + 1)
        clk       = Signal()
        mosi      = Signal()
        miso      = Signal()
        busy      = Signal()

        self.comb += [
            busy.eq(bits_left != 0),
            pads.cs_n.eq(~selected),
            pads.clk.eq(clk),
            pads.mosi.eq(mosi),
            self.rxtx.w.eq(shift),
            self.status.fields.tx_ready.eq(~busy),
            self.status.fields.rx_ready.eq(rx_ready),
        ]

        # Chip select.
        self.sync += [
            If(~self.cs.storage,
                cs_wait.eq(0),
                selected.eq(0),
            ).Elif(cs_wait == cs_delay,
                selected.eq(1),
            ).Else(
                cs_wait.eq(cs_wait + 1),
            )
        ]

        # Transfers.
        self.sync += [
            miso.eq(pads.miso),
            If(self.rxtx.we,
                rx_ready.eq(0),
            ),
            If(self.rxtx.re & ~busy,
                shift.eq(self.rxtx.r),
                top.eq(length - 1),
                bits_left.eq(length),
                phase.eq(0),
            ).Elif(busy & selected,
                phase.eq(phase + 1),
                Case(phase, {
                    0: mosi.eq(Array(shift)[top]),
                    1: clk.eq(1),
                    3: [
                        clk.eq(0),
                        shift.eq(Cat(miso, shift[:-1])),
                        bits_left.eq(bits_left - 1),
                        If(bits_left == 1, rx_ready.eq(1)),
                    ],
                }),
            ),
        ]


class SPIMasterCore(LiteXModule):
    """SPIMaster as submodule `master`: its CSRs named as LiteSPI's core's (<core>_master_cs,
    ...), where the driver and the simulator look for them."""
    def __init__(self, pads, cs_delay=10):
        self.master = SPIMaster(pads, cs_delay)
