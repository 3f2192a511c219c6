"""litedav-soc: build the LiteDAV SoC for a platform.

Typical sim flow (what `make sim` does):
  litedav-soc --platform sim                      # headers only, for the firmware build
  litedav-soc --platform sim --firmware FW.bin --compile
"""

import argparse
import os
import shutil
import subprocess
import sys

from litex.build.sim.config import SimConfig
from litex.soc.integration.builder import Builder
from litex.soc.integration.soc_core import get_mem_data

from litedav.soc.litedav_soc import LiteDAVSoC

PLATFORMS = ("sim",)


def parse_size(text):
    units = {"k": 1024, "K": 1024, "m": 1024**2, "M": 1024**2}
    text = text.strip().rstrip("iB").rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text, 0)


DEFAULT_FLASH_FILE = "flash.bin"
DEFAULT_FLASH_SIZE = 16 * 1024 * 1024


# The sim PHY's wire rates in bit/s (sim/modules/slirp_ethernet): None = LiteEth's model
# behaviour, one byte per sys_clk into the SoC and TX never throttled.
PHY_RATES = {"model": None, "mii": 100_000_000, "gmii": 1_000_000_000}
DEFAULT_PHY = "gmii"


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


def sim_config(sys_clk_freq, host_port, gap_cycles, flash_file=DEFAULT_FLASH_FILE,
               flash_size=DEFAULT_FLASH_SIZE, flash_timing=None, phy=DEFAULT_PHY, pcap=None):
    """flash_file: the NOR image (relative paths: from the simulator's run directory),
    created erased when missing; flash_timing: optional busy cycles for the flash_file
    module ({"program_cycles", "sector_erase_cycles", "block_erase_cycles"});
    phy: the Ethernet wire rate (PHY_RATES; gap_cycles applies to `model` only);
    pcap: file for a trace of every frame (relative: from the run directory), None for none."""
    check_phy(phy, sys_clk_freq)
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=int(sys_clk_freq))
    config.add_module("serial2console", "serial")
    config.add_module("slirp_ethernet", "eth", args={
        "host_port": host_port, "guest_port": 80, "guest_ip": "10.0.2.15",
        "gap_cycles": gap_cycles, "phy": phy, "sys_clk_hz": int(sys_clk_freq), "pcap": pcap or "",
    })
    config.add_module("flash_file", "flash", args={
        "path": flash_file, "size": flash_size, **(flash_timing or {}),
    })
    return config


def build_parser():
    parser = argparse.ArgumentParser(
        prog="litedav-soc",
        description="Build the LiteDAV SoC (VexRiscv + LiteEth + timer/cycle counter + UART).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--platform", default="sim", choices=PLATFORMS,
                        help="target platform")
    parser.add_argument("--output-dir", default=None,
                        help="build directory (default: build/<platform>)")
    parser.add_argument("--sys-clk-freq", type=float, default=125e6,
                        help="system clock in Hz (the sim labels its cycles with it; 125 MHz carries "
                             "GMII at one byte per cycle)")
    parser.add_argument("--main-ram-size", type=parse_size, default=parse_size("16MiB"),
                        help="main RAM size (firmware, lwIP heap, calendar store)")
    parser.add_argument("--eth-rx-slots", type=int, default=32,
                        help="LiteEth MAC RX buffer slots (2 KiB each): frames the CPU may fall behind by")
    parser.add_argument("--eth-tx-slots", type=int, default=4, help="LiteEth MAC TX buffer slots")
    parser.add_argument("--nic", default="liteeth", choices=("liteeth", "offload"),
                        help="Ethernet: LiteEth's MAC with CPU-copied SRAM slots, or the offload NIC "
                             "(DMA rings, checksum offload, TSO; docs/nic.md)")
    parser.add_argument("--no-bus-bursting", dest="bus_bursting", action="store_false",
                        help="disable wishbone burst cycles (cache refills word by word)")
    parser.add_argument("--firmware", default=None,
                        help="firmware image preloaded into main RAM (the CPU boots it directly)")
    parser.add_argument("--compile", action="store_true",
                        help="compile the gateware (sim: Verilator) after generating it")
    parser.add_argument("--host-port", type=int, default=8080,
                        help="sim: default host TCP port on 127.0.0.1 forwarded to the SoC's port 80")
    parser.add_argument("--phy", default=DEFAULT_PHY, choices=tuple(PHY_RATES),
                        help="sim: Ethernet wire rate of the default sim_config.js: gmii (1000 Mbit/s), "
                             "mii (100 Mbit/s), or model (one byte per sys_clk, TX not paced)")
    parser.add_argument("--gap-cycles", type=int, default=20,
                        help="sim, --phy model: idle cycles between frames into the SoC (IFG + preamble)")
    parser.add_argument("--flash-file", default=DEFAULT_FLASH_FILE,
                        help="sim: host file holding the SPI NOR flash (relative: from where Vsim runs); "
                             "created erased when missing")
    parser.add_argument("--flash-size", type=parse_size, default=DEFAULT_FLASH_SIZE,
                        help="sim: flash size (64 KiB multiple, at most 16 MiB)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.flash_size <= 0 or args.flash_size % (64 * 1024) or args.flash_size > 16 * 1024 * 1024:
        sys.exit(f"litedav-soc: --flash-size {args.flash_size}: must be a multiple of 64 KiB, at most 16 MiB")
    output_dir = args.output_dir or os.path.join("build", args.platform)
    try:
        check_phy(args.phy, args.sys_clk_freq)
    except ValueError as e:
        sys.exit(f"litedav-soc: --phy {args.phy}: {e}")

    firmware_words = None
    if args.firmware:
        if not os.path.isfile(args.firmware):
            sys.exit(f"litedav-soc: firmware image {args.firmware!r} not found (build it with `make firmware`)")
        firmware_words = get_mem_data(args.firmware, endianness="little")
        if len(firmware_words) * 4 > args.main_ram_size:
            sys.exit(f"litedav-soc: firmware ({len(firmware_words) * 4} bytes) does not fit main RAM")

    if args.platform == "sim":
        from litedav.platforms.sim import Platform
        platform = Platform()

    soc = LiteDAVSoC(platform,
        sys_clk_freq   = args.sys_clk_freq,
        main_ram_size  = args.main_ram_size,
        firmware_words = firmware_words,
        eth_rx_slots   = args.eth_rx_slots,
        eth_tx_slots   = args.eth_tx_slots,
        bus_bursting   = args.bus_bursting,
        nic            = args.nic)

    builder = Builder(soc, output_dir=output_dir, compile_software=False, compile_gateware=False)
    extra_mods_path = os.path.abspath(os.path.join(output_dir, "sim_modules"))
    if args.platform == "sim":
        _stage_sim_modules(extra_mods_path)
        builder.build(
            sim_config      = sim_config(args.sys_clk_freq, args.host_port, args.gap_cycles,
                                         args.flash_file, args.flash_size, phy=args.phy),
            opt_level       = "O3",
            interactive     = False,
            extra_mods      = ["slirp_ethernet", "flash_file"],
            extra_mods_path = extra_mods_path,
            run             = False,
        )
        if args.compile:
            if firmware_words is None:
                sys.exit("litedav-soc: --compile needs --firmware (the image is part of the sim model)")
            print(f"[litedav-soc] compiling the simulator with Verilator in {builder.gateware_dir}", flush=True)
            # LiteX's make does not track module sources outside its tree: rebuild them.
            shutil.rmtree(os.path.join(builder.gateware_dir, "modules"), ignore_errors=True)
            subprocess.run(["bash", "build_sim.sh"], cwd=builder.gateware_dir, check=True,
                           stdout=None if os.environ.get("V") else subprocess.DEVNULL)
    print(f"[litedav-soc] {args.platform}: headers in {builder.generated_dir}, gateware in {builder.gateware_dir}")


def _stage_sim_modules(dest):
    """Copy sim/modules/* into the build tree: LiteX writes its variables.mak there."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sim", "modules")
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(src):
        shutil.copytree(os.path.join(src, name), os.path.join(dest, name), dirs_exist_ok=True)


if __name__ == "__main__":
    main()
