"""litedav-sim: build and run the simulated LiteDAV appliance.

  litedav-sim build            SoC headers, firmware, Verilator model (incremental)
  litedav-sim run [--port N]   boot it; http://127.0.0.1:N/ reaches the SoC's port 80
                               (the calendar flash is build/sim/run-N/flash.bin, kept
                               across runs: --flash FILE, --fresh-flash)
  litedav-sim demo [--port N]  build, then run

  --nic offload                the SoC with the offload NIC (DMA rings, checksum
                               offload; docs/nic.md) instead of LiteEth's MAC, built
                               in build/sim-offload so both can exist side by side
  --spi-flash                  the boards' flash path: LiteSPI with SPI NOR chip models (the
                               store flash, a 32 MiB MT25QL256 in the flash image file, and
                               the 2 MiB GD25Q16 boot chip in --boot-flash) in place of the
                               sim flash, built in build/sim-spiflash (docs/spi_flash.md)
  --board colorlight_i5        the board model: that board's SoC (CPU variant, 75 MHz,
                               SDRAM behind its L2, offload NIC, SPI flash) instead of the
                               ideal SoC, built in build/sim-colorlight_i5[-offload]
                               (docs/board_model.md); MII unless --phy says otherwise
  --phy gmii|mii|model         Ethernet wire rate: 1000 Mbit/s (default), 100 Mbit/s,
                               or one byte per sys_clk with TX not paced
  --pcap FILE                  trace every frame both ways, timestamped in simulated
                               time (nanosecond pcap: wireshark, tcpdump -r)
  --faults drop=R,...          a lossy link between slirp and the PHY, both directions
                               (--faults-to-soc / --faults-from-soc: one direction):
                               drop, duplicate, reorder, bad_fcs, bad_checksum,
                               truncate, each a probability per frame; seeded and
                               deterministic (--fault-seed, --fault-mode); counters
                               printed at exit and kept in --fault-stats FILE (JSON)

  --slirp-clock-scale N        libslirp's clock = simulated time x N (default 32)
  --malformed-every CYCLES     malformed frames into the SoC among the good ones (random
                               bytes, runts, jumbo frames, crafted headers; seeded)
  --lwip-clock-scale N         the firmware's lwIP clock = simulated time x N (default 1;
                               with N as slirp's, lost frames cost 1/N of their timeouts)
  --peer-pid PID               simulated time waits, before each poll of the host sockets,
                               until process PID and its descendants are blocked, so the
                               clients' wall-time speed does not move any simulated figure
                               (bench/README.md, "The peer in simulated time")
  --progress SECONDS           print the simulated cycles per wall second this often
                               (default 30; 0: only at exit)

No root is needed: the SoC's Ethernet is bridged to libslirp (user-mode
networking), which forwards a TCP port on 127.0.0.1 to the appliance. Its clock
follows the simulated cycle count, never wall time.
"""

import argparse
import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Optional

from litedav.sim.config import (DEFAULT_BOOT_FLASH_FILE, BOARD_MODEL_NICS, BOARD_MODEL_PHYS, DEFAULT_FLASH_SIZE, DEFAULT_GAP_CYCLES, DEFAULT_PHY, MODEL_DIR, MODULE_SHARED_DIRS,
                                MODULES_DIR, PHY_RATES, check_flash_size, describe_phy, model_settings,
                                sim_config)
from litedav.sim import pgo
from litedav.soc.sizes import parse_size

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BUILD = os.path.join(TOP, "build", "sim")
NICS = ("liteeth", "offload")


def default_build_dir(nic="liteeth", spi_flash=False, board=None):
    """build/sim for LiteEth's MAC, build/sim-<nic> for another NIC; -spiflash appended for the
    SoC with the boards' flash path (--spi-flash). A board model (board: a BOARD_MODEL_PHYS name,
    which has the boards' flash path anyway): build/sim-<board>, -<nic> appended likewise."""
    if board:
        check_board(board)
        folder = f"{DEFAULT_BUILD}-{board}"
        return folder if nic == "liteeth" else f"{folder}-{nic}"
    folder = DEFAULT_BUILD if nic == "liteeth" else f"{DEFAULT_BUILD}-{nic}"
    return f"{folder}-spiflash" if spi_flash else folder


def check_board(board):
    if board not in BOARD_MODEL_PHYS:
        raise ValueError(f"no board model {board!r}: one of {', '.join(BOARD_MODEL_PHYS)}")
    return board
READY_MARK = "listening on http://"


# libslirp's clock (its TCP timers toward the SoC) = simulated time x this. Its BSD timers tick
# every 500 ms with a 1 s minimum and a 6 s initial retransmission timeout: in simulated time
# itself (1) every frame the SoC drops in a burst costs 125-750 M cycles, minutes to hours of wall
# time, and wall-time clients give up; x32 brings them to 31-190 ms (bench/README.md, waves).
SLIRP_CLOCK_SCALE = 32

FLOOD_CONTROL = "flood.sock"  # the slirp module's control socket for spoofed peers, in the run dir
FAULT_KINDS = ("drop", "duplicate", "reorder", "bad_fcs", "bad_checksum", "truncate")
FAULT_DIRECTIONS = ("to_soc", "from_soc")
FAULT_MODES = ("random", "spread")


def parse_faults(spec):
    """'drop=0.05,reorder=0.01' -> {"drop": 0.05, "reorder": 0.01}; ValueError on bad input."""
    rates = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in FAULT_KINDS:
            raise ValueError(f"{item!r}: expected KIND=RATE with KIND one of {', '.join(FAULT_KINDS)}")
        try:
            rate = float(value)
        except ValueError:
            raise ValueError(f"{item!r}: the rate must be a number (a probability per frame)") from None
        if not 0 <= rate <= 1:
            raise ValueError(f"{item!r}: the rate must be between 0 and 1")
        rates[name] = rate
    return rates


def fault_config(faults, seed=1, mode="random", stats=None, spare_syn=False):
    """The slirp_ethernet module's `faults` argument. faults: rates for both directions
    ({"drop": 0.05, ...}) or per direction ({"to_soc": {...}, "from_soc": {...}});
    spare_syn: TCP segments with SYN pass untouched (connection setup off the faults)."""
    if mode not in FAULT_MODES:
        raise ValueError(f"unknown fault mode {mode!r}: one of {', '.join(FAULT_MODES)}")
    if set(faults) <= set(FAULT_DIRECTIONS):
        per_direction = {d: dict(faults.get(d) or {}) for d in FAULT_DIRECTIONS}
    else:
        per_direction = {d: dict(faults) for d in FAULT_DIRECTIONS}
    for rates in per_direction.values():
        for name, rate in rates.items():
            if name not in FAULT_KINDS:
                raise ValueError(f"unknown fault {name!r}: one of {', '.join(FAULT_KINDS)}")
            if not 0 <= float(rate) <= 1:
                raise ValueError(f"fault rate {name}={rate}: expected 0..1")
            rates[name] = float(rate)
    return {"seed": int(seed), "mode": mode, "spare_syn": bool(spare_syn), **per_direction,
            "stats": stats or ""}


MAIN_RAM_INIT = "sim_main_ram.init"  # the firmware image, one 32-bit hex word a line ($readmemh)
LWIP_CLOCK_SCALE_SYMBOL = "port_lwip_clock_scale"  # firmware/ports/litex/main.c


def patch_lwip_clock_scale(build_dir, image, out, scale):
    """Writes to out a copy of the main RAM image with the firmware's lwIP clock scale set to
    scale. The word is found at its symbol's address in the build's litedav.elf; it must hold 1
    in the image (else the image is not that ELF's, or not the firmware's)."""
    elf = os.path.join(build_dir, "firmware", "litedav.elf")

    def tool(name, *args):
        cmd = [f"riscv64-unknown-elf-{name}", *args, elf]
        try:
            return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise RuntimeError(f"cannot read {elf} with {cmd[0]}: {e}") from None

    vma = next((int(line.split()[0], 16) for line in tool("nm").splitlines()
                if line.split()[-1:] == [LWIP_CLOCK_SCALE_SYMBOL]), None)
    if vma is None:
        raise RuntimeError(f"{elf} has no {LWIP_CLOCK_SCALE_SYMBOL}: rebuild the firmware")
    # the image holds a variable's initial value at its load address (crt0 copies .data)
    address = None
    for line in tool("objdump", "-h").splitlines():
        f = line.split()
        if len(f) >= 6 and f[0].isdigit():
            size, start, load = int(f[2], 16), int(f[3], 16), int(f[4], 16)
            if start <= vma < start + size:
                address = vma - start + load
    if address is None:
        raise RuntimeError(f"{elf}: no section holds {LWIP_CLOCK_SCALE_SYMBOL} at 0x{vma:x}")
    import json
    with open(os.path.join(build_dir, "csr.json")) as f:
        base = json.load(f)["memories"]["main_ram"]["base"]
    with open(image) as f:
        words = f.read().split()
    # little-endian words; the value's load address need not be word-aligned (.data's initial
    # values follow .text in the image wherever it ends)
    data = bytearray(b"".join(int(w, 16).to_bytes(4, "little") for w in words))
    offset = address - base
    if not 0 <= offset <= len(data) - 4 or int.from_bytes(data[offset:offset + 4], "little") != 1:
        raise RuntimeError(f"{image} does not hold {LWIP_CLOCK_SCALE_SYMBOL} = 1 at 0x{address:x}: "
                           f"the image is not {elf}'s (run `litedav-sim build` again)")
    data[offset:offset + 4] = scale.to_bytes(4, "little")
    with open(out, "w") as f:
        f.write("\n".join(f"{int.from_bytes(data[i:i + 4], 'little'):08x}" for i in range(0, len(data), 4)) + "\n")


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now (for a simulator's host forward)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(msg):
    print(f"[litedav-sim] {msg}", flush=True)


def _run(cmd, quiet_log=None, **kw):
    """Run a build step; keep its output in a log file and show it only on failure."""
    if quiet_log is None:
        subprocess.run(cmd, check=True, **kw)
        return
    os.makedirs(os.path.dirname(quiet_log), exist_ok=True)
    with open(quiet_log, "w") as out:
        r = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, **kw)
    if r.returncode != 0:
        with open(quiet_log) as f:
            sys.stderr.write(f.read()[-6000:])
        sys.exit(f"litedav-sim: step failed: {' '.join(cmd)} (full log: {quiet_log})")


def link_model_files(gateware, run_dir):
    """Link what the model reads from its working directory into run_dir: the build's memory
    images (*.init) and its sim modules (modules/), replacing older links."""
    for name in os.listdir(gateware):
        if name.endswith(".init") or name == "modules":
            link = os.path.join(run_dir, name)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.join(gateware, name), link)


def _model_verilog(gateware_dir):
    """The Verilog beside sim.v that LiteX's build script names (the CPU's netlist: pythondata's,
    or one generated with other caches, soc/vexriscv_netlist.py)."""
    try:
        with open(os.path.join(gateware_dir, "build_sim.sh")) as f:
            script = f.read()
    except FileNotFoundError:
        return []
    paths = re.findall(r"--cc (\S+\.v)\b", script)
    return [p for p in paths if os.path.basename(p) != "sim.v"]


def _model_fingerprint(gateware_dir):
    """What the Verilator model depends on: the generated Verilog and C++ glue
    (minus LiteX's timestamp comments), the sim module sources, with the
    shared C they build from, and the model's own build (sim/model/, its
    settings and the Verilator that compiles it). Firmware changes do not
    count: main RAM is loaded from its .init file at start, and a profile-guided model's
    training (sim/pgo.py) only makes it faster."""
    h = hashlib.sha256()
    settings = model_settings()
    h.update(repr(sorted(settings.items())).encode())
    h.update(f"pgo={pgo.enabled()}".encode())
    try:
        version = subprocess.run([settings["VERILATOR"], "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True).stdout
    except OSError:
        version = "no verilator"
    h.update(version.encode())
    for name in ("sim.v", "sim_init.cpp", "sim_header.h", *_model_verilog(gateware_dir)):
        with open(os.path.join(gateware_dir, name)) as f:
            for line in f:
                if not line.lstrip().startswith("//"):
                    h.update(line.encode())
    for top in (MODULES_DIR, MODEL_DIR, *MODULE_SHARED_DIRS):
        for root, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                with open(os.path.join(root, name), "rb") as f:
                    h.update(name.encode() + f.read())
    return h.hexdigest()


BUILD_COMMIT_FILE = ".git-commit"


def source_commit():
    """The source tree's short commit, with -dirty for uncommitted changes; None outside git.
    bench/results is not source: the benchmarks write it while they run."""
    try:
        src = os.path.dirname(os.path.realpath(__file__))
        commit = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], check=True,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no", "--",
                                ":(top)", ":(top,exclude)bench/results"], check=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("-dirty" if dirty else "")


def _record_commit(build_dir):
    """Names the source a build was made from in build_dir/.git-commit (source_commit()): the
    benchmarks report it."""
    commit = source_commit()
    if commit is None:
        return
    with open(os.path.join(build_dir, BUILD_COMMIT_FILE), "w") as f:
        f.write(commit + "\n")


def read_build_commit(build_dir):
    """The commit a build was made from (its .git-commit, written by build()), "unknown" without one."""
    try:
        with open(os.path.join(build_dir, BUILD_COMMIT_FILE)) as f:
            return f.read().strip() or "unknown"
    except FileNotFoundError:
        return "unknown"


def build(build_dir=DEFAULT_BUILD, soc_args=(), nic="liteeth", phy=None, fw_defs=(), board=None, fw_vars=()):
    """nic: liteeth or offload (litedav-soc --nic); the firmware is built against that SoC's
    headers in build_dir, so it gets the matching netif driver. phy: the wire rate of the
    build's own sim_config.js (litedav-soc --phy); `Simulator` chooses its own at run time.
    fw_defs: compiler options for the firmware (firmware/Makefile's LITEDAV_FW_DEFS, e.g.
    "-DMEMP_NUM_TCP_PCB=64"); such a build needs a folder of its own. board: that board's SoC
    (a BOARD_MODEL_PHYS name, litedav-soc --board) instead of the ideal SoC. fw_vars: more
    firmware/Makefile variables, e.g. "PROFILE=1" (a folder of its own too)."""
    if board:
        soc_args = ("--board", check_board(board), *soc_args)
    if nic not in NICS:
        raise ValueError(f"unknown NIC {nic!r}: one of {', '.join(NICS)}")
    # The steps run from different folders (LiteX from the top, make in firmware/), so a
    # relative folder would name two places: resolve it against the caller's folder once.
    build_dir = os.path.abspath(build_dir)
    logs = os.path.join(build_dir, "logs")
    soc = [sys.executable, "-m", "litedav.soc.build", "--platform", "sim", "--output-dir", build_dir,
           "--nic", nic, *(("--phy", phy) if phy else ()), *soc_args]
    log("[1/3] generating SoC headers (LiteX)")
    _run(soc, os.path.join(logs, "soc-headers.log"), cwd=TOP)
    log("[2/3] building firmware (lwIP + HTTP server, riscv64-unknown-elf-gcc)")
    fw = os.path.join(build_dir, "firmware", "litedav.bin")
    _run(["make", "-C", os.path.join(TOP, "firmware"), f"SOC_BUILD={build_dir}", f"-j{os.cpu_count() or 2}",
          *([f"LITEDAV_FW_DEFS={' '.join(fw_defs)}"] if fw_defs else []), *fw_vars],
         os.path.join(logs, "firmware.log"))
    _record_commit(build_dir)
    gateware = os.path.join(build_dir, "gateware")
    stamp = os.path.join(gateware, ".model-fingerprint")
    _run([*soc, "--firmware", fw], os.path.join(logs, "soc-gateware.log"), cwd=TOP)
    fingerprint = _model_fingerprint(gateware)
    vsim = os.path.join(gateware, "obj_dir", "Vsim")
    if os.path.exists(vsim) and os.path.exists(stamp) and open(stamp).read() == fingerprint:
        log("[3/3] simulator up to date (firmware image refreshed)")
    else:
        log("[3/3] compiling the simulator with Verilator (about two minutes on 2 cores with its training run)")
        t0 = time.time()
        _run([*soc, "--firmware", fw, "--compile"], os.path.join(logs, "verilator.log"), cwd=TOP)
        with open(stamp, "w") as f:
            f.write(fingerprint)
        log(f"      done in {time.time() - t0:.0f} s")
        # the compile's own output stays in its log: say here whether the model got its profile
        if pgo.enabled() and not model_settings().get("TRACE"):
            record = pgo.training_record(build_dir)
            log(f"      profile-guided (trained in {record['seconds']:.0f} s)" if record else
                f"      warning: the model was built without a profile, its training run failed "
                f"({os.path.join(logs, 'verilator.log')} says why)")
    return build_dir


def die_with_parent():
    """preexec_fn for a child (the simulator, and the tests' host server or QEMU):
    Linux sends it SIGTERM if this Python process dies, so a killed test run or
    runner never leaves one spinning."""
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass
class SimOptions:
    """How a Simulator runs the built SoC. The defaults are `litedav-sim run`'s."""

    # TCP port on 127.0.0.1 forwarded to the SoC's port 80; the run directory is build_dir/run-PORT.
    port: int = 8080
    # Print the firmware's console as it comes (Simulator.console keeps it either way).
    echo: bool = True

    # Ethernet wire rate, both directions (PHY_RATES): gmii (1000 Mbit/s), mii (100 Mbit/s) or
    # model (one byte per sys_clk into the SoC, gap_cycles between frames, TX not paced).
    phy: str = DEFAULT_PHY
    gap_cycles: int = DEFAULT_GAP_CYCLES
    # File to trace every frame to (nanosecond pcap, simulated-time timestamps), None for none.
    pcap: Optional[str] = None

    # The NOR image file (default: flash.bin in the run directory, kept across runs of the same
    # port); fresh_flash: erase it before booting.
    flash: Optional[str] = None
    fresh_flash: bool = False
    # The sim flash's size for a new image (a 64 KiB multiple, at most 16 MiB) and more arguments
    # of its flash_file module: busy cycles, power_cut_file (sim/modules/flash_file/flash_file.c).
    flash_size: int = DEFAULT_FLASH_SIZE
    flash_timing: Optional[dict] = None
    # A build with LiteSPI (litedav-soc --spi-flash, the board models) runs spi_nor_flash chip
    # models instead (flash_size and flash_timing do not apply): `flash` is the store flash's
    # image (the Pmod's 32 MiB MT25QL256), `boot_flash` the boot chip's (a 2 MiB GD25Q16; default
    # boot-flash.bin in the run directory, erased with fresh_flash too). store_flash_attached=False:
    # no chip on the store flash's pads (a board without the Pmod): the firmware keeps the store
    # in the boot chip's last 512 KiB, and `flash` is the boot chip's image. spi_flash_args: more
    # arguments of the chip that holds the calendars (program_cycles, sector_erase_cycles,
    # stuck_busy, power_cut_file: sim/modules/spi_nor_flash); spi_flash_attached=False: no chip
    # on its pads.
    boot_flash: Optional[str] = None
    store_flash_attached: bool = True
    spi_flash_args: Optional[dict] = None
    spi_flash_attached: bool = True

    # A lossy link: FAULT_KINDS -> probability per frame for both directions, or {"to_soc": {...},
    # "from_soc": {...}}; None for a clean one. fault_mode (FAULT_MODES) random: independent per
    # frame; spread: one fault of a kind in every 1/rate frames. fault_spare_syn: SYN segments pass
    # untouched (a lost SYN costs seconds of simulated time). fault_stats: JSON file of the
    # counters (default faults.json in the run directory; rewritten as they change and at exit:
    # Simulator.fault_counters()).
    faults: Optional[dict] = None
    fault_seed: int = 1
    fault_mode: str = "random"
    fault_spare_syn: bool = False
    fault_stats: Optional[str] = None

    # libslirp's clock runs this many times faster than simulated time (1: simulated time itself).
    slirp_clock_scale: int = SLIRP_CLOCK_SCALE
    # The firmware's lwIP clock (sys_now) runs this many times faster than simulated time (1, as on
    # a board; patched into the run's copy of the image: patch_lwip_clock_scale()). Given
    # slirp_clock_scale's value, both TCP ends keep their timers' ratio while each lost frame costs
    # 1/N of its simulated time.
    lwip_clock_scale: int = 1

    # A host process (and its descendants) that simulated time waits for: before each poll of
    # the host sockets, until all its threads are blocked (sim/modules/slirp_ethernet/peer_wait.h).
    # A benchmark passes its own pid (os.getpid()) so its clients' speed moves no simulated figure.
    # None: clients run in wall time beside the simulation. peer_wait_ms: how long a runnable
    # peer is waited for before simulated time goes on without it (reported at exit).
    peer_pid: Optional[int] = None
    peer_wait_ms: int = 60000
    # Wall seconds between the simulator's speed reports (simulated cycles per wall second) on
    # its console; 0: only at exit.
    progress_s: int = 30

    # The slirp module plays spoofed TCP peers on command (SYN floods, half-open connections:
    # Simulator.flood_command(), sim/modules/slirp_ethernet/flood.h).
    flood: bool = False
    # Malformed frames into the SoC among the good ones ({"interval_cycles": N, "seed": N,
    # "kinds": [...]}: sim/modules/slirp_ethernet/malformed.h), None for none; counters in
    # inject.json in the run directory (Simulator.inject_counters()).
    inject: Optional[dict] = None

    def __post_init__(self):
        if self.phy not in PHY_RATES:
            raise ValueError(f"unknown PHY {self.phy!r}: one of {', '.join(PHY_RATES)}")
        for name in ("slirp_clock_scale", "lwip_clock_scale"):
            value = getattr(self, name)
            if not 1 <= int(value) <= 1000:
                raise ValueError(f"{name} {value}: expected 1..1000")
            setattr(self, name, int(value))
        if self.inject:
            unknown = set(self.inject) - {"interval_cycles", "seed", "kinds"}
            if unknown or int(self.inject.get("interval_cycles", 0)) < 1:
                raise ValueError(f"inject {self.inject}: expected interval_cycles >= 1, seed, kinds")


class Simulator:
    """One running simulated appliance, in its own run directory."""

    def __init__(self, build_dir=DEFAULT_BUILD, options=None):
        """build_dir: a `build()`'s folder (a relative one from the current folder: the simulator
        itself runs in its run directory); options: SimOptions (None: the defaults)."""
        self.build_dir = build_dir = os.path.abspath(build_dir)
        self.options = options = options or SimOptions()
        self.port = options.port
        self.pcap = os.path.abspath(options.pcap) if options.pcap else None
        self.flash = os.path.abspath(options.flash) if options.flash else os.path.join(self.run_dir, "flash.bin")
        self.fresh_flash = options.fresh_flash
        self.spi_flash = self.has_spi_flash(build_dir)
        # the calendars are on the store flash: the SoC has one and the run attaches its chip
        self.store_flash = self.has_store_flash(build_dir) and options.store_flash_attached
        self.boot_flash = (os.path.abspath(options.boot_flash) if options.boot_flash else
                           os.path.join(self.run_dir, DEFAULT_BOOT_FLASH_FILE))
        self.spi_flash_args = dict(options.spi_flash_args or {}) if options.spi_flash_attached else None
        self.faults = None
        if options.faults:
            self.fault_stats = os.path.abspath(options.fault_stats) if options.fault_stats else os.path.join(
                self.run_dir, "faults.json")
            self.faults = fault_config(options.faults, options.fault_seed, options.fault_mode, self.fault_stats,
                                       options.fault_spare_syn)
        self.inject = None
        if options.inject:
            self.inject = {**options.inject, "stats": os.path.join(self.run_dir, "inject.json")}
        self.proc = None
        self.console = []
        self.ready = threading.Event()
        self.exited = threading.Event()

    @property
    def run_dir(self):
        return os.path.join(self.build_dir, f"run-{self.port}")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"

    def _prepare_run_dir(self):
        gateware = os.path.join(self.build_dir, "gateware")
        vsim = os.path.join(gateware, "obj_dir", "Vsim")
        if not os.path.exists(vsim):
            sys.exit(f"litedav-sim: no simulator at {vsim}: run `litedav-sim build` (same --nic) first")
        run_dir = self.run_dir
        os.makedirs(run_dir, exist_ok=True)
        if self.fresh_flash:
            for image in (self.flash, self.boot_flash) if self.store_flash else (self.flash,):
                if os.path.exists(image):
                    os.remove(image)  # the flash modules create it erased
        self.fresh_flash = False   # a restart of this Simulator keeps what was written
        link_model_files(gateware, run_dir)
        options = self.options
        if options.lwip_clock_scale != 1:
            if not os.path.exists(os.path.join(gateware, MAIN_RAM_INIT)):
                raise ValueError("lwip_clock_scale (--lwip-clock-scale) patches the firmware in the ideal "
                                 f"SoC's main RAM image ({MAIN_RAM_INIT}); this build keeps it elsewhere "
                                 "(a board model's SDRAM banks)")
            main_ram = os.path.join(run_dir, MAIN_RAM_INIT)
            os.remove(main_ram)
            patch_lwip_clock_scale(self.build_dir, os.path.join(gateware, MAIN_RAM_INIT), main_ram,
                                   options.lwip_clock_scale)
        config = sim_config(self._sys_clk_hz(gateware), self.port, options.gap_cycles,
                            flash_file=self.flash, flash_size=options.flash_size,
                            flash_timing=options.flash_timing, phy=options.phy, pcap=self.pcap,
                            spi_flash=self.spi_flash, spi_flash_args=self.spi_flash_args,
                            store_flash=self.store_flash, boot_flash_file=self.boot_flash)
        if self.faults and os.path.exists(self.fault_stats):
            os.remove(self.fault_stats)  # counters of this run only
        if self.inject and os.path.exists(self.inject["stats"]):
            os.remove(self.inject["stats"])
        for module in config.modules:
            if module["module"] == "slirp_ethernet":
                module["args"]["clock_scale"] = options.slirp_clock_scale
                module["args"]["progress_s"] = int(options.progress_s)
                if options.peer_pid:
                    module["args"]["peer_pid"] = int(options.peer_pid)
                    module["args"]["peer_wait_ms"] = int(options.peer_wait_ms)
                if options.flood:  # relative to the run directory, the simulator's cwd
                    module["args"]["flood_control"] = FLOOD_CONTROL
                if self.faults:
                    module["args"]["faults"] = self.faults
                if self.inject:
                    module["args"]["inject"] = self.inject
        with open(os.path.join(run_dir, "sim_config.js"), "w") as f:
            f.write(config.get_json())
        return run_dir, vsim

    @staticmethod
    def _csr_names(build_dir, core):
        """The build's csr.h names LiteSPI core `core` (CSR_<CORE>_CORE_BASE)."""
        csr_h = os.path.join(build_dir, "software", "include", "generated", "csr.h")
        try:
            with open(csr_h) as f:
                return f"CSR_{core.upper()}_CORE_BASE" in f.read()
        except FileNotFoundError:
            return False

    @staticmethod
    def has_spi_flash(build_dir):
        """The build's SoC has LiteSPI (litedav-soc --spi-flash)."""
        return Simulator._csr_names(build_dir, "spiflash")

    @staticmethod
    def has_store_flash(build_dir):
        """The build's SoC has the store flash (platforms/store_flash.py), its core named as LiteSPI's."""
        return Simulator._csr_names(build_dir, "storeflash")

    @staticmethod
    def _sys_clk_hz(gateware):
        soc_h = os.path.join(os.path.dirname(gateware), "software", "include", "generated", "soc.h")
        with open(soc_h) as f:
            for line in f:
                if line.startswith("#define CONFIG_CLOCK_FREQUENCY"):
                    return int(line.split()[2])
        raise RuntimeError(f"no CONFIG_CLOCK_FREQUENCY in {soc_h}")

    def start(self, stdin=subprocess.DEVNULL):
        """Boot (or boot again, e.g. after a power cut: the flash image is kept)."""
        run_dir, vsim = self._prepare_run_dir()
        self.ready.clear()
        self.exited.clear()
        self.proc = subprocess.Popen([vsim], cwd=run_dir, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, bufsize=0,
                                     start_new_session=(stdin == subprocess.DEVNULL),
                                     preexec_fn=die_with_parent)
        threading.Thread(target=self._reader, daemon=True).start()
        return self

    def _reader(self):
        line = b""
        while True:
            ch = self.proc.stdout.read(1)
            if not ch:
                break
            if ch in (b"\n", b"\r"):
                text = line.decode(errors="replace")
                line = b""
                if not text:
                    continue
                self.console.append(text)
                if self.options.echo:
                    print(f"  | {text}", flush=True)
                if READY_MARK in text:
                    self.ready.set()
                continue
            line += ch
        self.exited.set()

    def wait_ready(self, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.ready.wait(0.2):
                return True
            if self.proc.poll() is not None:
                raise RuntimeError("simulator exited during boot:\n" + "\n".join(self.console[-20:]))
        raise TimeoutError(f"firmware did not report '{READY_MARK}' within {timeout} s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def flood_command(self, command, timeout=60):
        """Send one command to the spoofed peers ('syn|half_open|idle|stale_fin COUNT
        INTERVAL_CYCLES', 'stop', 'stats'; flood.h) and return their counters (a dict)."""
        import json
        if not self.options.flood:
            raise RuntimeError("this Simulator was started without SimOptions(flood=True)")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.bind(f"\0litedav-flood-{os.getpid()}-{id(s)}")  # abstract: an address to answer to
            s.settimeout(timeout)
            s.sendto(command.encode(), os.path.join(self.run_dir, FLOOD_CONTROL))
            answer = json.loads(s.recv(4096))
        if "error" in answer:
            raise ValueError(f"flood command {command!r}: {answer['error']}")
        return answer

    def fault_counters(self):
        """The fault injector's counters ({"to_soc": {"frames": N, "drop": N, ...}, "from_soc":
        ...}) as last written by the module (as they change, and at exit), or None."""
        import json
        if not self.faults or not os.path.exists(self.fault_stats):
            return None
        with open(self.fault_stats) as f:
            return json.load(f)

    def inject_counters(self):
        """The malformed-frame injector's counters ({"frames": N, "bytes": N, "kinds": {kind: N}})
        as last written by the module, or None."""
        import json
        if not self.inject or not os.path.exists(self.inject["stats"]):
            return None
        with open(self.inject["stats"]) as f:
            return json.load(f)

    def peer_counters(self, timeout=10):
        """After stop(): the slirp module's report on waiting for SimOptions.peer_pid, as a dict
        (checks, waits, waited_s, unsynchronized, overruns), or None when it did not wait for a
        peer. unsynchronized > 0: some simulated time went on without the peer."""
        self.exited.wait(timeout)  # the report is printed at exit
        for line in reversed(self.console):
            m = re.search(r"peer process \d+: checked (\d+) times, waited (\d+) times \(([\d.]+) s of wall "
                          r"time\), (\d+) checks unsynchronized \((\d+) overruns", line)
            if m:
                return {"checks": int(m[1]), "waits": int(m[2]), "waited_s": float(m[3]),
                        "unsynchronized": int(m[4]), "overruns": int(m[5])}
        return None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def run(build_dir, options):
    """litedav-sim run: boot the simulator on this terminal until it exits or Ctrl-C."""
    if not os.path.exists(os.path.join(build_dir, "gateware", "obj_dir", "Vsim")):
        sys.exit(f"litedav-sim: no simulator in {build_dir}: run `litedav-sim build` (same --nic) first")
    sys_clk_hz = Simulator._sys_clk_hz(os.path.join(build_dir, "gateware"))
    try:
        phy_text = describe_phy(options.phy, sys_clk_hz)
    except ValueError as e:
        sys.exit(f"litedav-sim: --phy {options.phy}: {e}")
    saved_tty = None
    if sys.stdin.isatty():
        import termios
        saved_tty = termios.tcgetattr(sys.stdin.fileno())
    sim = Simulator(build_dir, options)
    erased = ' (erased first)' if options.fresh_flash else ''
    if sim.store_flash:
        log(f"store flash image (the Pmod's MT25QL256, 32 MiB): {sim.flash}{erased}; boot chip: {sim.boot_flash}")
    else:
        log(f"flash image: {sim.flash}{erased}")
    if sim.pcap:
        log(f"pcap trace: {sim.pcap} (timestamps in simulated time)")
    if sim.faults:
        log(f"fault injection on, counters in {sim.fault_stats}")
    log(f"booting the simulated appliance (sys_clk {sys_clk_hz / 1e6:g} MHz, PHY {phy_text})")
    try:
        sim.start(stdin=sys.stdin if saved_tty else subprocess.DEVNULL)
        sim.wait_ready()
        log(f"LiteDAV is serving at {sim.url}  (try: curl {sim.url})  Ctrl-C stops it")
        while sim.proc.poll() is None:
            time.sleep(0.5)
        log(f"simulator exited with code {sim.proc.returncode}")
        return sim.proc.returncode
    except KeyboardInterrupt:
        log("stopping")
        return 0
    finally:
        sim.stop()
        if saved_tty:
            import termios
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSAFLUSH, saved_tty)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="litedav-sim", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("build", "run", "demo"), help="what to do")
    parser.add_argument("--board", default=None, choices=tuple(BOARD_MODEL_PHYS),
                        help="simulate that board's SoC (the board model: its CPU variant, sys_clk, SDRAM "
                             "behind its L2, NIC and flash; docs/board_model.md) instead of the ideal SoC "
                             "(125 MHz, single-cycle RAM)")
    parser.add_argument("--nic", default=None, choices=NICS,
                        help="Ethernet of the SoC: LiteEth's MAC (CPU copies, software checksums) or the "
                             "offload NIC (DMA rings, checksum offload); default: liteeth, with --board "
                             "the board's (offload)")
    parser.add_argument("--spi-flash", action="store_true",
                        help="the SoC with the boards' flash path: LiteSPI and its 1x PHY with a SPI NOR "
                             "chip model on the pads (2 MiB GD25Q16 in the --flash image; the store where "
                             "the Colorlight i5 keeps it) instead of the sim flash (docs/spi_flash.md)")
    parser.add_argument("--cpu-icache", type=int, default=None, metavar="BYTES",
                        help="VexRiscv's instruction cache (default: the variant's prebuilt 4 KiB); with "
                             "either cache size given, the CPU is generated (soc/vexriscv_netlist.py, needs "
                             "a JDK) and the build folder gets -i<I>-d<D> appended")
    parser.add_argument("--cpu-dcache", type=int, default=None, metavar="BYTES",
                        help="VexRiscv's data cache, as --cpu-icache")
    parser.add_argument("--build-dir", default=None,
                        help="build directory (default: build/sim, build/sim-offload with --nic offload, "
                             "-spiflash appended with --spi-flash)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("LITEDAV_PORT", 8080)),
                        help="TCP port on 127.0.0.1 forwarded to the appliance's port 80 (env LITEDAV_PORT)")
    parser.add_argument("--phy", default=None, choices=tuple(PHY_RATES),
                        help="Ethernet wire rate, both directions, with preamble, FCS and inter-frame "
                             "gap: gmii 1000 Mbit/s (default), mii 100 Mbit/s (default with --board: the "
                             "simulated PHY's byte per sys_clk is short of GMII below 125 MHz); model: one "
                             "byte per sys_clk into the SoC (--gap-cycles between frames), TX not paced")
    parser.add_argument("--pcap", default=None, metavar="FILE",
                        help="write every frame, both directions, to a nanosecond pcap timestamped in "
                             "simulated time (cycles / sys_clk)")
    parser.add_argument("--faults", default=None, metavar="KIND=RATE,...",
                        help="fault-injecting link between slirp and the PHY, both directions: "
                             f"{', '.join(FAULT_KINDS)}, each a probability per frame (e.g. "
                             "drop=0.05,reorder=0.01,duplicate=0.01,bad_fcs=0.0025,bad_checksum=0.0025); "
                             "bad_fcs: the SoC's MAC (or, out of the SoC, the receiving end) drops the "
                             "frame; bad_checksum: the FCS is good, the IP/TCP checksum check must drop it")
    parser.add_argument("--faults-to-soc", default=None, metavar="KIND=RATE,...",
                        help="faults on frames into the SoC only (replaces --faults for that direction)")
    parser.add_argument("--faults-from-soc", default=None, metavar="KIND=RATE,...",
                        help="faults on frames out of the SoC only (replaces --faults for that direction)")
    parser.add_argument("--fault-seed", type=int, default=1,
                        help="seed of the fault injector (the same frames get the same faults)")
    parser.add_argument("--fault-mode", default="random", choices=FAULT_MODES,
                        help="random: each frame drawn independently; spread: exactly one fault of a kind "
                             "at a random place in every block of 1/rate frames")
    parser.add_argument("--fault-spare-syn", action="store_true",
                        help="TCP segments with SYN pass untouched: faults hit the data path, not "
                             "connection setup (a lost SYN-ACK costs lwIP's 3 s initial timeout in simulated time)")
    parser.add_argument("--fault-stats", default=None, metavar="FILE",
                        help="JSON file of the fault counters (default: faults.json in the run directory)")
    parser.add_argument("--slirp-clock-scale", type=int, default=SLIRP_CLOCK_SCALE, metavar="N",
                        help="libslirp's clock (its TCP retransmission timers toward the SoC) runs N times "
                             f"faster than simulated time (default {SLIRP_CLOCK_SCALE}; 1: simulated time "
                             "itself, where each frame the SoC drops costs slirp's 1-6 s timeouts, minutes "
                             "to hours of wall time)")
    parser.add_argument("--lwip-clock-scale", type=int, default=1, metavar="N",
                        help="the firmware's lwIP clock runs N times faster than simulated time (default 1, "
                             "as on a board). With --slirp-clock-scale's value, both TCP ends' timers keep "
                             "their ratio and a frame lost out of the SoC costs 1/N of lwIP's 1-3 s "
                             "retransmission timeout: for long runs over a lossy link (--faults)")
    parser.add_argument("--malformed-every", type=int, default=None, metavar="CYCLES",
                        help="insert a malformed frame into the SoC every CYCLES sys_clk cycles on average "
                             "(random bytes, runts, jumbo frames, bad ethertypes and IP headers, IP options, "
                             "fragments, bad TCP offsets and flags, odd UDP/ICMP; malformed.h), seeded by "
                             "--malformed-seed; counters printed at exit and kept in inject.json")
    parser.add_argument("--malformed-seed", type=int, default=1, help="seed of the malformed frames")
    parser.add_argument("--peer-pid", type=int, default=None, metavar="PID",
                        help="wait, before each poll of the host sockets, until process PID and its "
                             "descendants are blocked: simulated figures then do not depend on the "
                             "clients' or the host's speed (bench/README.md)")
    parser.add_argument("--progress", type=int, default=30, metavar="SECONDS",
                        help="print simulated cycles per wall second this often (default 30; 0: at exit only)")
    parser.add_argument("--gap-cycles", type=int, default=DEFAULT_GAP_CYCLES,
                        help="--phy model: idle sys_clk cycles between frames into the SoC")
    parser.add_argument("--flash", default=None, metavar="FILE",
                        help="flash image holding the calendars (default: flash.bin in the run "
                             "directory build/sim/run-PORT, kept across runs); created erased if missing")
    parser.add_argument("--fresh-flash", action="store_true",
                        help="erase the flash image before booting (a factory-new appliance)")
    parser.add_argument("--boot-flash", default=None, metavar="FILE",
                        help="--spi-flash and the board models: the boot chip's image (default: "
                             "boot-flash.bin in the run directory); --flash is the store flash's")
    parser.add_argument("--no-store-flash", dest="store_flash", action="store_false",
                        help="--spi-flash and the board models: no chip on the store flash's Pmod; "
                             "the firmware keeps the store in the boot chip's last 512 KiB, and "
                             "--flash is the boot chip's image")
    parser.add_argument("--flash-size", default=None,
                        help="flash size for a new image (64 KiB multiple, at most 16 MiB; default 16MiB)")
    args = parser.parse_args(argv)
    flash_size = DEFAULT_FLASH_SIZE
    if args.flash_size:
        try:
            flash_size = check_flash_size(parse_size(args.flash_size))
        except ValueError as e:
            parser.error(f"--flash-size {e}")
    faults = None
    try:
        both = parse_faults(args.faults) if args.faults else {}
        to_soc = parse_faults(args.faults_to_soc) if args.faults_to_soc is not None else both
        from_soc = parse_faults(args.faults_from_soc) if args.faults_from_soc is not None else both
    except ValueError as e:
        parser.error(f"faults: {e}")
    if to_soc or from_soc:
        faults = {"to_soc": to_soc, "from_soc": from_soc}
    if args.board and args.spi_flash:
        parser.error("--spi-flash: a board model has its board's flash already")
    args.nic = args.nic or (BOARD_MODEL_NICS[args.board] if args.board else "liteeth")
    args.phy = args.phy or (BOARD_MODEL_PHYS[args.board] if args.board else DEFAULT_PHY)
    cpu_args = ()
    default_dir = default_build_dir(args.nic, args.spi_flash, args.board)
    if args.cpu_icache or args.cpu_dcache:
        icache, dcache = args.cpu_icache or 4096, args.cpu_dcache or 4096
        cpu_args = ("--cpu-icache", str(icache), "--cpu-dcache", str(dcache))
        default_dir += f"-i{icache}-d{dcache}"
    build_dir = os.path.abspath(args.build_dir or default_dir)
    if args.command in ("build", "demo"):
        build(build_dir, nic=args.nic, phy=args.phy,
              soc_args=(*(("--spi-flash",) if args.spi_flash else ()), *cpu_args), board=args.board)
    if not 1 <= args.slirp_clock_scale <= 1000:
        parser.error("--slirp-clock-scale must be 1..1000")
    if not 1 <= args.lwip_clock_scale <= 1000:
        parser.error("--lwip-clock-scale must be 1..1000")
    if args.progress < 0:
        parser.error("--progress must be 0 or more seconds")
    if args.peer_pid is not None and not os.path.isdir(f"/proc/{args.peer_pid}"):
        parser.error(f"--peer-pid {args.peer_pid}: no such process")
    if args.malformed_every is not None and args.malformed_every < 1:
        parser.error("--malformed-every must be at least 1 cycle")
    inject = ({"interval_cycles": args.malformed_every, "seed": args.malformed_seed}
              if args.malformed_every else None)
    if args.command in ("run", "demo"):
        sys.exit(run(build_dir, SimOptions(
            port=args.port, echo=True, phy=args.phy, gap_cycles=args.gap_cycles, pcap=args.pcap,
            flash=args.flash, fresh_flash=args.fresh_flash, flash_size=flash_size,
            boot_flash=args.boot_flash, store_flash_attached=args.store_flash, faults=faults, fault_seed=args.fault_seed, fault_mode=args.fault_mode,
            fault_spare_syn=args.fault_spare_syn, fault_stats=args.fault_stats,
            slirp_clock_scale=args.slirp_clock_scale, lwip_clock_scale=args.lwip_clock_scale,
            inject=inject, peer_pid=args.peer_pid, progress_s=args.progress)))


if __name__ == "__main__":
    main()
