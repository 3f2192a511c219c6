"""SimFlash: a memory-mapped SPI NOR flash for the simulated SoC, kept by the host.

The SoC sees one uncached wishbone window (docs/sim_flash.md):

  [0, 16 MiB)          the flash array: loads read it, word stores program it
                       (NOR: the host keeps old & data, so bits only clear)
  [16 MiB, +0x20)      control registers (ID, SIZE, STATUS, ERASE_SECTOR, ERASE_BLOCK)

The gateware is only a bridge: every bus cycle becomes one request on the
`flash` sim pads, and the LiteX sim module `flash_file` (sim/modules/flash_file)
answers it from a host file, decoding addresses, enforcing NOR rules and
modelling busy time by holding its answer back. One request is in flight at a
time; the answer is acked to the bus the cycle it arrives.

Pads (platforms/sim.py), SoC -> host: req_valid, req_we, req_addr (byte
offset in the window), req_data, req_sel; host -> SoC: resp_valid (one cycle
per request), resp_data, present. Without the host module (`present` low) every
access is acked at once with zero data, so a firmware probing ID sees no flash
instead of hanging the bus.
"""

from migen import Cat, Constant, If
from migen.genlib.fsm import FSM, NextState, NextValue

from litex.gen import LiteXModule, log2_int
from litex.soc.interconnect import wishbone

WINDOW_SIZE = 32 * 1024 * 1024
ARRAY_SIZE_MAX = 16 * 1024 * 1024
CTRL_OFFSET = ARRAY_SIZE_MAX


class SimFlash(LiteXModule):
    def __init__(self, pads, window_size=WINDOW_SIZE):
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # # #

        word_bits = log2_int(window_size) - 2
        request = bus.cyc & bus.stb

        # The response data goes straight to the bus; it only counts with ack.
        self.comb += bus.dat_r.eq(pads.resp_data)

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(request,
                If(pads.present,
                    NextValue(pads.req_valid, 1),
                    NextValue(pads.req_we,    bus.we),
                    NextValue(pads.req_addr,  Cat(Constant(0, 2), bus.adr[:word_bits])),
                    NextValue(pads.req_data,  bus.dat_w),
                    NextValue(pads.req_sel,   bus.sel),
                    NextState("WAIT"),
                ).Else(
                    bus.ack.eq(1),
                )
            )
        )
        # req_valid drops with the ack, so the host sees at least one idle
        # cycle between two requests and never answers one twice.
        fsm.act("WAIT",
            If(pads.resp_valid,
                bus.ack.eq(bus.cyc),
                NextValue(pads.req_valid, 0),
                NextState("IDLE"),
            )
        )
