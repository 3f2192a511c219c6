"""The `sim` platform: the SoC in Verilator (`litedav-soc --platform sim`).

Pins are not physical: each group is a set of Verilator top-level ports that a
LiteX sim module drives every clock edge.

- sys_clk / sys_rst: the config's `clocker` entry at the SoC's sys_clk, driven by the model's
  own main loop (sim/model/sim_main.c) with LiteX's clocker's edges.
- serial: 8-bit stream to `serial2console` (the firmware's UART console).
- eth: SimPHY's 8-bit frame stream (sim/phy.py: no preamble or FCS, an
  explicit `last` each way, TX `ready` from the module), driven and paced at a
  wire rate by LiteDAV's `slirp_ethernet` module (sim/modules/).
- flash: SimFlash's request/response pair (sim/flash.py), answered by
  LiteDAV's `flash_file` module from a host file (docs/sim_flash.md).
- spiflash: single-bit SPI (clk, cs_n, mosi, miso) from LiteSPI's 1x SDR PHY
  (litedav-soc --spi-flash, instead of `flash`), answered by LiteDAV's
  `spi_nor_flash` module, a SPI NOR chip kept in a host file (docs/sim_flash.md).
- storeflash: the same for the boards' store flash (platforms/store_flash.py), a
  second `spi_nor_flash` session playing the Pmod's MT25QL256.

The SoC on it (SimBoard, the recipe LiteDAVSoC takes as its board): the CPU resets straight into
main RAM, preloaded with the firmware image (no BIOS, no boot flash), the UART is LiteX's sim
UART, and the calendar flash is either SimFlash's window or, with --spi-flash, the Colorlight i5's
flash path: LiteSPI on its boot chip (the store's fallback region) and on its store flash. Unlike the boards this platform has a flow of its own, build():
no bitstream but the Verilog, the build's own sim_config.js and the sim modules' sources, and with
--compile the Verilator model that litedav-sim (sim/run.py) runs.
"""

import os
import shutil
import subprocess
import sys

from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.build.sim import SimPlatform
from litex.soc.integration.builder import Builder
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import get_mem_data

from litedav.sim.config import (BOARD_MODEL_NICS, BOARD_MODEL_PHYS, DEFAULT_FLASH_FILE, DEFAULT_FLASH_SIZE, DEFAULT_GAP_CYCLES, DEFAULT_PHY,
                                MODEL_DIR, MODULE_SHARED_DIRS, MODULES_DIR, PHY_RATES, check_flash_size,
                                check_phy, model_settings, sim_config)
from litedav.sim import liteeth_slots
from litedav.sim.flash import SimFlash, WINDOW_SIZE
from litedav.sim.phy import SimPHY, SimSerialPads
from litedav.soc.litedav_soc import MAIN_RAM_BASE, LiteDAVSoC
from litedav.soc.main_ram import add_sdram_main_ram
from litedav.soc.sizes import parse_size

from . import colorlight_i5, store_flash

NAME = "sim"

DEFAULT_SYS_CLK_FREQ = 125e6  # GMII's byte rate: the PHY interface moves one byte per cycle.
CPU_VARIANT          = "standard"
DEFAULT_NIC          = "liteeth"
ETH_RX_SLOTS         = 32
ETH_TX_SLOTS         = 4

# SimFlash's window, uncached: in 0xB0000000-0xBFFFFFFF, which no VexRiscv variant caches, beside
# LiteEth's SRAM and the SPI flash (soc/litedav_soc.py).
SIM_FLASH_BASE = 0xB8000000


def _stream_pair(data_width):
    return [
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(data_width)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(data_width)),
    ]

# source_* leave the SoC, sink_* enter it; `last` ends a frame, so the module may leave
# idle cycles between the bytes of one frame.
_eth_stream = [
    *_stream_pair(8),
    Subsignal("source_last", Pins(1)),
    Subsignal("sink_last",   Pins(1)),
    Subsignal("sink_error",  Pins(1)),  # with sink_last: the frame's FCS was bad
]

_flash_bridge = [
    Subsignal("req_valid",  Pins(1)),
    Subsignal("req_we",     Pins(1)),
    Subsignal("req_addr",   Pins(25)),  # byte offset in the 32 MiB window
    Subsignal("req_data",   Pins(32)),
    Subsignal("req_sel",    Pins(4)),
    Subsignal("resp_valid", Pins(1)),
    Subsignal("resp_data",  Pins(32)),
    Subsignal("present",    Pins(1)),   # the host module is attached
]

_spiflash = [
    Subsignal("clk",  Pins(1)),
    Subsignal("cs_n", Pins(1)),
    Subsignal("mosi", Pins(1)),
    Subsignal("miso", Pins(1)),
]

_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0, *_stream_pair(8)),
    ("eth", 0, *_eth_stream),
    ("flash", 0, *_flash_bridge),
    ("spiflash", 0, *_spiflash),
    ("storeflash", 0, *_spiflash),
]


class Platform(SimPlatform):
    name = NAME

    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)


class SimBoard:
    """How LiteDAVSoC is put together on this platform (what add_board() and soc_kwargs() of a
    board module say for a board). main_ram_size: the integrated main RAM (firmware, lwIP heap,
    store index); firmware_words: its initial contents, the firmware image, None for none;
    spi_flash: the boards' flash path (add_spi_flashes) instead of SimFlash."""

    # The offload NIC keeps the MAC's datapath at the PHY's 8 bits and its DMA masters straight on
    # the bus: the sys-clock datapath and the bus register slices are for an FPGA's timing (the PHY
    # here runs in sys_clk, with no clock-domain crossing to relieve).
    NIC_SYS_DATAPATH = False
    NIC_BUS_SLICES   = False

    def __init__(self, main_ram_size, firmware_words=None, spi_flash=False, merged_eth_rx_slots=True):
        self.main_ram_size       = main_ram_size
        self.firmware_words      = firmware_words
        self.spi_flash           = spi_flash
        self.merged_eth_rx_slots = merged_eth_rx_slots

    def soc_kwargs(self):
        return dict(
            cpu_reset_address        = MAIN_RAM_BASE,
            integrated_rom_size      = 0,
            integrated_sram_size     = 0,
            integrated_main_ram_size = self.main_ram_size,
            integrated_main_ram_init = self.firmware_words or [],
            uart_name                = "sim",
        )

    def uart_pads(self, soc, uart_name):
        """The sim UART's pads with their inputs registered (sim/phy.py SimSerialPads)."""
        if uart_name != "sim":
            return None
        soc.sim_serial = SimSerialPads(soc.platform.request("serial"))
        return soc.sim_serial.pads

    def add_board(self, soc, sys_clk_freq):
        """CRG, PHY and flash; returns the Ethernet PHY."""
        soc.crg    = CRG(soc.platform.request("sys_clk"))
        soc.ethphy = SimPHY(soc.platform.request("eth", 0))
        if self.spi_flash:
            add_spi_flashes(soc)
        else:
            add_sim_flash(soc)
        return soc.ethphy

    def add_ethernet(self, soc, phy, nrxslots, ntxslots):
        """LiteEth's MAC as LiteX's add_ethernet() adds it; with merged_eth_rx_slots its RX slots
        are one memory (sim/liteeth_slots.py: the same MAC cycle for cycle, cheaper to simulate)."""
        if self.merged_eth_rx_slots:
            liteeth_slots.add_ethernet(soc, phy, nrxslots=nrxslots, ntxslots=ntxslots)
        else:
            soc.add_ethernet(phy=phy, nrxslots=nrxslots, ntxslots=ntxslots)


class ColorlightI5Model(SimBoard):
    """The Colorlight i5's SoC as platforms/colorlight_i5.py builds it, in the simulator (the
    board model, `--board colorlight_i5`): its CPU variant and sys_clk, its 8 MiB of SDR SDRAM
    (M12L64322A, LiteDRAM's controller with the chip's timings at sys_clk) behind its 8 KiB L2
    (soc/main_ram.py), the offload NIC with the board's sys-clock MAC datapath and DMA register
    slices (and SDRAM DMA ports when the board has them: colorlight_i5.NIC_SDRAM_PORTS), and its
    flash chips: LiteSPI 1x with the GD25Q16 chip model (the boot chip) and with the MT25QL256
    model (the store flash on its Pmod).

    What differs from the board, and why:
    - the SDRAM is LiteDRAM's SDRAMPHYModel (read latency as GENSDRPHY's settings), not the chip
      behind GENSDRPHY's I/O registers; it starts with the firmware in it and LiteDRAM's DFI in
      hardware control (its reset state), so the CPU resets into main RAM: no BIOS, no SDRAM
      initialization, no copy of the firmware from flash (the board spends those before serving);
    - the Ethernet PHY is the simulator's (sim/phy.py), one byte per sys_clk in place of the
      RGMII PHY's 125 MHz domain: at the board's 75 MHz that carries MII (100 Mbit/s), not GMII.
    """

    NIC_SYS_DATAPATH = True
    NIC_BUS_SLICES   = True
    NIC_SDRAM_PORTS  = colorlight_i5.NIC_SDRAM_PORTS
    NAME             = colorlight_i5.NAME
    SYS_CLK_FREQ     = colorlight_i5.DEFAULT_SYS_CLK_FREQ
    CPU_VARIANT      = colorlight_i5.CPU_VARIANT
    DEFAULT_NIC      = BOARD_MODEL_NICS[NAME]
    DEFAULT_PHY      = BOARD_MODEL_PHYS[NAME]

    def __init__(self, firmware_words=None):
        # LiteEth's slots as the bitstream builds them: the board model is the board's SoC.
        SimBoard.__init__(self, 0, firmware_words, spi_flash=True, merged_eth_rx_slots=False)

    def soc_kwargs(self):
        return dict(
            cpu_reset_address        = MAIN_RAM_BASE,
            integrated_rom_size      = 0,
            integrated_sram_size     = 0,
            uart_name                = "sim",
        )

    def add_board(self, soc, sys_clk_freq):
        from litedram.modules import M12L64322A
        from litedram.phy.model import SDRAMPHYModel, get_sdram_phy_settings
        soc.crg    = CRG(soc.platform.request("sys_clk"))
        soc.ethphy = SimPHY(soc.platform.request("eth", 0))
        module = M12L64322A(sys_clk_freq, "1:1")
        settings = get_sdram_phy_settings(memtype=module.memtype, data_width=32, clk_freq=sys_clk_freq)
        soc.sdrphy = SDRAMPHYModel(module, settings, clk_freq=sys_clk_freq, init=self.firmware_words or [])
        add_sdram_main_ram(soc, soc.sdrphy, module, colorlight_i5.L2_CACHE_SIZE)
        add_spi_flashes(soc)
        return soc.ethphy


# The SoCs of boards the simulator models (litedav-soc --platform sim --board NAME).
BOARD_MODELS = {ColorlightI5Model.NAME: ColorlightI5Model}
assert set(BOARD_MODELS) == set(BOARD_MODEL_PHYS)


def add_sim_flash(soc):
    """The host-backed NOR flash (sim/flash.py, docs/sim_flash.md) as region `sim_flash`:
    firmware sees SIM_FLASH_BASE/SIM_FLASH_SIZE in generated/mem.h."""
    soc.sim_flash = SimFlash(soc.platform.request("flash", 0))
    soc.bus.add_slave("sim_flash", soc.sim_flash.bus,
        SoCRegion(origin=SIM_FLASH_BASE, size=WINDOW_SIZE, cached=False))


def add_spi_flash(soc):
    """The boards' flash path in the simulator: LiteSPI (memory-mapped reads, master CSRs
    `spiflash_core_master_*`) with its 1x SDR PHY on the `spiflash` pads, where the
    `spi_nor_flash` sim module plays a GD25Q16 (the Colorlight i5's chip, 2 MiB) from a host
    file. Same flash layout constants as the Colorlight i5 (the store in its last 512 KiB).
    SPI clock sys_clk/4 (PHY divisor 1, as on the Colorlight i5 at 75 MHz)."""
    from litespi.modules import GD25Q16
    from litespi.opcodes import SpiNorFlashOpCodes
    soc.add_spi_flash(mode="1x", module=GD25Q16(SpiNorFlashOpCodes.READ_1_1_1),
                      clk_freq=soc.sys_clk_freq / 4)
    origin = soc.bus.regions["spiflash"].origin
    soc.add_constant("LITEDAV_FLASH_STORE_BASE", origin + colorlight_i5.FLASH_STORE_OFFSET)
    soc.add_constant("LITEDAV_FLASH_STORE_SIZE", colorlight_i5.FLASH_STORE_SIZE)


def add_spi_flashes(soc):
    """The Colorlight i5's two chips: the boot chip (add_spi_flash) and the store flash on the
    `storeflash` pads, where a second `spi_nor_flash` session plays the Pmod's MT25QL256."""
    add_spi_flash(soc)
    store_flash.add_store_flash(soc)


# litedav-soc --platform sim -----------------------------------------------------------------------

def add_arguments(parser):
    """The simulator's own litedav-soc arguments: what goes into the build's sim_config.js (LiteX's
    flow; litedav-sim writes one per run) and which flash the SoC has."""
    parser.add_argument("--host-port", type=int, default=8080,
                        help="sim: default host TCP port on 127.0.0.1 forwarded to the SoC's port 80")
    parser.add_argument("--board", default=None, choices=tuple(BOARD_MODELS),
                        help="sim: that board's SoC (its CPU variant, sys_clk, SDRAM behind its L2, NIC "
                             "and flash) instead of the ideal SoC (125 MHz, single-cycle on-chip RAM); "
                             "the board model, docs/board_model.md")
    parser.add_argument("--phy", default=None, choices=tuple(PHY_RATES),
                        help="sim: Ethernet wire rate of the default sim_config.js: gmii (1000 Mbit/s, the "
                             "default), mii (100 Mbit/s, the default with --board), or model (one byte per "
                             "sys_clk, TX not paced)")
    parser.add_argument("--gap-cycles", type=int, default=DEFAULT_GAP_CYCLES,
                        help="sim, --phy model: idle cycles between frames into the SoC (IFG + preamble)")
    parser.add_argument("--flash-file", default=DEFAULT_FLASH_FILE,
                        help="sim: host file holding the SPI NOR flash (relative: from where Vsim runs); "
                             "created erased when missing")
    parser.add_argument("--flash-size", type=parse_size, default=DEFAULT_FLASH_SIZE,
                        help="sim: flash size (64 KiB multiple, at most 16 MiB)")
    parser.add_argument("--spi-flash", action="store_true",
                        help="sim: the boards' flash path instead of the sim flash: LiteSPI with its 1x "
                             "SDR PHY and SPI NOR chip models (sim module spi_nor_flash) on the pads of "
                             "the Colorlight i5's boot chip (a 2 MiB GD25Q16) and of its store flash (the "
                             "Pmod's 32 MiB MT25QL256, in --flash-file) (docs/sim_flash.md)")
    parser.add_argument("--liteeth-stock-slots", action="store_true",
                        help="sim, ideal SoC, --nic liteeth: LiteEth's RX slots as LiteEth builds them (a "
                             "memory, wishbone SRAM and decoder leg per slot) instead of one memory "
                             "(sim/liteeth_slots.py); the same MAC cycle for cycle, slower to simulate")


def build(args):
    """Generate the SoC (headers, Verilog, sim_config.js, the sim modules' sources) in
    --output-dir; --compile: then compile the Verilator model."""
    if args.build or args.load or args.flash:
        sys.exit("litedav-soc: --build/--load/--flash are for boards; the simulator uses --compile")
    model = BOARD_MODELS[args.board] if args.board else None
    sys_clk_freq = args.sys_clk_freq or (model.SYS_CLK_FREQ if model else DEFAULT_SYS_CLK_FREQ)
    try:
        check_flash_size(args.flash_size)
    except ValueError as e:
        sys.exit(f"litedav-soc: --flash-size {args.flash_size}: {e}")
    output_dir = args.output_dir or os.path.join("build", NAME)
    args.phy = args.phy or (model.DEFAULT_PHY if model else DEFAULT_PHY)
    try:
        check_phy(args.phy, sys_clk_freq)
    except ValueError as e:
        sys.exit(f"litedav-soc: --phy {args.phy}: {e}")
    if model:
        args.spi_flash = True   # the board's flash chips

    firmware_words = None
    if args.firmware:
        if not os.path.isfile(args.firmware):
            sys.exit(f"litedav-soc: firmware image {args.firmware!r} not found (build it with `make firmware`)")
        firmware_words = get_mem_data(args.firmware, endianness="little")
        # the ideal SoC's main RAM is initialized with the image, so check it before building it;
        # a board model's size comes from its SDRAM chip (checked below)
        if not model and len(firmware_words) * 4 > args.main_ram_size:
            sys.exit(f"litedav-soc: firmware ({len(firmware_words) * 4} bytes) does not fit main RAM")

    board = model(firmware_words) if model else SimBoard(args.main_ram_size, firmware_words, args.spi_flash,
                                                                    merged_eth_rx_slots=not args.liteeth_stock_slots)
    soc = LiteDAVSoC(Platform(), board,
        sys_clk_freq   = sys_clk_freq,
        eth_rx_slots   = args.eth_rx_slots or ETH_RX_SLOTS,
        eth_tx_slots   = args.eth_tx_slots or ETH_TX_SLOTS,
        bus_bursting   = args.bus_bursting,
        cpu_variant    = args.cpu_variant or (model.CPU_VARIANT if model else CPU_VARIANT),
        nic            = args.nic or (model.DEFAULT_NIC if model else DEFAULT_NIC),
        cpu_icache     = args.cpu_icache,
        cpu_dcache     = args.cpu_dcache)
    if model and firmware_words and len(firmware_words) * 4 > soc.bus.regions["main_ram"].size:
        sys.exit(f"litedav-soc: firmware ({len(firmware_words) * 4} bytes) does not fit the "
                 f"{args.board}'s main RAM")

    builder = Builder(soc, output_dir=output_dir, compile_software=False, compile_gateware=False)
    modules_dir = os.path.abspath(os.path.join(output_dir, "sim_modules"))
    stage_sim_modules(modules_dir)
    settings = model_settings()
    builder.build(
        # LiteX's sim_init.cpp calls the tracer after each eval only in a tracing build
        trace           = bool(settings.get("TRACE")),
        sim_config      = sim_config(sys_clk_freq, args.host_port, args.gap_cycles,
                                     args.flash_file, args.flash_size, phy=args.phy,
                                     spi_flash=args.spi_flash, spi_flash_args={}, store_flash=args.spi_flash),
        opt_level       = "O3",
        # LiteX's Makefile runs `make -j$(JOBS)`: unset, that is an unbounded -j (dozens of
        # cc1plus at once); one job per core, LITEDAV_SIM_JOBS to choose.
        jobs            = os.environ.get("LITEDAV_SIM_JOBS") or str(os.cpu_count() or 2),
        interactive     = False,
        extra_mods      = ["slirp_ethernet", "spi_nor_flash" if args.spi_flash else "flash_file"],
        extra_mods_path = modules_dir,
        run             = False,
    )
    if args.compile:
        if firmware_words is None:
            sys.exit("litedav-soc: --compile needs --firmware (the image is part of the sim model)")
        print(f"[litedav-soc] compiling the simulator with Verilator in {builder.gateware_dir}", flush=True)
        # LiteX's make does not track module sources outside its tree: rebuild them; and the
        # model from scratch (sim/run.py only asks for it when its inputs changed).
        for name in ("modules", "obj_dir"):
            shutil.rmtree(os.path.join(builder.gateware_dir, name), ignore_errors=True)
        compile_model(builder.gateware_dir, soc.platform, settings)
    print(f"[litedav-soc] {NAME}: headers in {builder.generated_dir}, gateware in {builder.gateware_dir}")


def compile_model(gateware_dir, platform, settings):
    """obj_dir/Vsim and the sim modules, with our makefile (sim/model/model.mk) rather than
    LiteX's build_sim.sh: no tracing unless asked for, the model's C++ optimized for speed and,
    unless LITEDAV_SIM_PGO=0 or the model traces, guided by the profile of a training run
    (sim/pgo.py): built instrumented, booted once, built again. A training run that fails leaves
    the model built without a profile, and says why."""
    import litex.build.sim
    from litedav.sim import pgo
    verilog = [os.path.abspath(os.path.join(gateware_dir, f)) for f, *_ in platform.sources
               if not f.endswith((".hex", ".init"))]
    jobs = os.environ.get("LITEDAV_SIM_JOBS") or str(os.cpu_count() or 2)
    profile_dir = os.path.join(gateware_dir, pgo.PROFILE_DIR)

    def make(target, pgo_pass=""):
        subprocess.run(["make", "-f", os.path.join(MODEL_DIR, "model.mk"), target,
                        f"LITEX_SIM_CORE={os.path.join(os.path.dirname(litex.build.sim.__file__), 'core')}",
                        f"VERILOG={' '.join(verilog)}", f"JOBS={jobs}", f"PGO={pgo_pass}", f"PGO_DIR={profile_dir}",
                        *(f"{k}={v}" for k, v in settings.items())],
                       cwd=gateware_dir, check=True, stdout=None if os.environ.get("V") else subprocess.DEVNULL)

    def clean_objects():
        # the second pass compiles every object again: gcc reads a profile at compile time only
        shutil.rmtree(os.path.join(gateware_dir, "obj_dir"), ignore_errors=True)

    if not pgo.enabled() or settings.get("TRACE"):
        shutil.rmtree(profile_dir, ignore_errors=True)
        make("all")
        return
    make("all", "generate")
    print("[litedav-soc] training the model for its profile: one boot and a few requests", flush=True)
    try:
        seconds = pgo.train(os.path.dirname(os.path.abspath(gateware_dir)), profile_dir)
    except pgo.TrainingError as e:
        print(f"[litedav-soc] warning: {e}; the model is built without a profile", flush=True)
        shutil.rmtree(profile_dir, ignore_errors=True)
        clean_objects()
        make("model")
        return
    print(f"[litedav-soc] trained in {seconds:.0f} s; compiling the model with its profile", flush=True)
    clean_objects()
    make("model", "use")


def stage_sim_modules(dest):
    """Copy sim/modules/* into the build tree (LiteX writes its variables.mak there), and the
    folders of MODULE_SHARED_DIRS beside them."""
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(MODULES_DIR):
        shutil.copytree(os.path.join(MODULES_DIR, name), os.path.join(dest, name), dirs_exist_ok=True)
    for shared in MODULE_SHARED_DIRS:
        shutil.copytree(shared, os.path.join(dest, os.path.basename(shared)), dirs_exist_ok=True)
