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

Pads (platforms/sim.py), SoC -> host: req_valid (the cycle a request starts),
req_we, req_addr (byte offset in the window), req_data, req_sel; host -> SoC,
registered here, so driven by the host a cycle ahead: resp_valid (one cycle per
request), resp_data, present. A request that starts in cycle c is acked in c+1
at the soonest (the host samples it at c's falling edge). Without the host
module (`present` low) every access is acked at once with zero data, so a
firmware probing ID sees no flash instead of hanging the bus.
"""

from migen import Cat, Constant, If, Signal
from migen.genlib.fsm import FSM, NextState

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

        # The host's pads feed registers only: the host module drives them during the cycle
        # before the one they apply to, and no logic of the SoC depends combinationally on an
        # input pad (Verilator evaluates such logic at every eval, both clock edges; through
        # `ack` and `dat_r` that was the whole bus and the CPU).
        present    = Signal()
        resp_valid = Signal()
        resp_data  = Signal(32)
        self.sync += [
            present.eq(pads.present),
            resp_valid.eq(pads.resp_valid),
            resp_data.eq(pads.resp_data),
        ]

        # The response data goes straight to the bus; it only counts with ack.
        self.comb += bus.dat_r.eq(resp_data)

        self.fsm = fsm = FSM(reset_state="IDLE")
        # A request is on the req_* pads in the cycle it starts (req_valid for that one cycle);
        # the host samples it at the falling edge and answers for the next cycle at the soonest.
        self.comb += [
            pads.req_valid.eq(fsm.ongoing("IDLE") & request & present),
            pads.req_we.eq(bus.we),
            pads.req_addr.eq(Cat(Constant(0, 2), bus.adr[:word_bits])),
            pads.req_data.eq(bus.dat_w),
            pads.req_sel.eq(bus.sel),
        ]
        fsm.act("IDLE",
            If(request,
                If(present,
                    NextState("WAIT"),
                ).Else(
                    bus.ack.eq(1),
                )
            )
        )
        # One answer per request: the host drops resp_valid after one cycle, so the next
        # request starts at the soonest in the cycle after the ack.
        fsm.act("WAIT",
            If(resp_valid,
                bus.ack.eq(bus.cyc),
                NextState("IDLE"),
            )
        )
