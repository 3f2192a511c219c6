"""litedav-soc: build the LiteDAV SoC for a platform (platforms/<name>.py).

The simulator (platforms/sim.py, what `make sim` does through litedav-sim):
  litedav-soc --platform sim                      # headers only, for the firmware build
  litedav-soc --platform sim --firmware FW.bin --compile

Boards:
  litedav-soc --platform colorlight_i5 --build    # bitstream, timing checked, build/<board>/
  litedav-soc --platform colorlight_i5 --load     # into the FPGA's SRAM (openFPGALoader)
  litedav-soc --platform colorlight_i5 --flash --firmware FW.bin
"""

import argparse
import contextlib
import os
import shutil
import importlib
import json
import re
import subprocess
import sys
import time

from litex.soc.integration.builder import Builder

from litedav.soc.sizes import parse_size

PLATFORMS = ("sim", "colorlight_i5", "arty_a7", "tang_nano_4k")

LOAD_HELP = """\
Loading a board (--load, --flash): litedav-soc runs openFPGALoader (Debian package openfpgaloader)
with the board's JTAG cable (colorlight_i5: `-c cmsisdap`, the extension board's CMSIS-DAP USB
probe). It first asks the cable for the JTAG chain and stops with an error naming the cable when no
probe or no FPGA answers. --load writes the bitstream (build/<board>/gateware/<board>.bit, from
--build) into the FPGA's configuration SRAM: it runs at once and is lost at power-off. --flash
writes it to the SPI flash at offset 0 instead (the FPGA loads it at every power-up) and, with
--firmware FW.bin, the firmware as a LiteX flash boot image (length, CRC32, image) at the board's
firmware offset, where the BIOS in ROM finds it, copies it to SDRAM and jumps to it. The calendar
store's flash region is never written by --flash; --erase-store (alone) erases it: every calendar
on the board is gone, the firmware starts an empty store at its next boot.

tang_nano_4k: cable `-c ft2232` (the board's BL702 USB-JTAG probe). --load writes the .fs into SRAM;
--flash writes it into the GW1NSR's internal configuration flash and, with --firmware FW.bin (the
EMCU firmware: make -C firmware/ports/gowin_emcu), that image into the EMCU's user flash through
openFPGALoader's --mcufw (which erases the whole user flash first)."""


def build_parser(platform=None):
    """litedav-soc's arguments, with those of the platform module's add_arguments() when it has
    one (the simulator's)."""
    parser = argparse.ArgumentParser(
        prog="litedav-soc",
        description="Build the LiteDAV SoC (VexRiscv + LiteEth + timer/cycle counter + UART).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=LOAD_HELP)
    parser.add_argument("--platform", default="sim", choices=PLATFORMS,
                        help="target platform (default: sim)")
    parser.add_argument("--output-dir", default=None,
                        help="build directory (default: build/<platform>)")
    parser.add_argument("--sys-clk-freq", type=float, default=None,
                        help="system clock in Hz (sim: 125 MHz, the sim labels its cycles with it and "
                             "GMII moves one byte per cycle; boards: the board's default, "
                             "colorlight_i5 75 MHz)")
    parser.add_argument("--main-ram-size", type=parse_size, default=parse_size("16MiB"),
                        help="main RAM size (firmware, lwIP heap, calendar store)")
    parser.add_argument("--eth-rx-slots", type=int, default=None,
                        help="LiteEth MAC RX buffer slots (2 KiB each): frames the CPU may fall behind by "
                             "(default 32; tang_nano_4k: 2)")
    parser.add_argument("--eth-tx-slots", type=int, default=None,
                        help="LiteEth MAC TX buffer slots (default 4; tang_nano_4k: 1)")
    parser.add_argument("--nic", default=None, choices=("liteeth", "offload"),
                        help="Ethernet: LiteEth's MAC with CPU-copied SRAM slots, or the offload NIC "
                             "(DMA rings, checksum offload, TSO; docs/nic.md). Default: liteeth on sim "
                             "and tang_nano_4k (the offload NIC does not fit it), offload on other boards")
    parser.add_argument("--no-bus-bursting", dest="bus_bursting", action="store_false",
                        help="disable wishbone burst cycles (cache refills word by word)")
    parser.add_argument("--firmware", default=None,
                        help="firmware image preloaded into main RAM (the CPU boots it directly)")
    parser.add_argument("--compile", action="store_true",
                        help="compile the gateware (sim: Verilator) after generating it")
    board = parser.add_argument_group("boards")
    board.add_argument("--build", action="store_true",
                       help="synthesize, place and route, write the bitstream; fails when a clock "
                            "misses its constraint (nextpnr's report: <board>_report.json)")
    board.add_argument("--load", action="store_true",
                       help="load the bitstream into the FPGA's SRAM with openFPGALoader (see below)")
    board.add_argument("--flash", action="store_true",
                       help="write the bitstream (and --firmware as a boot image) to the SPI flash")
    board.add_argument("--erase-store", action="store_true",
                       help="erase the calendar store's region of the board's SPI flash (every "
                            "calendar, user record and sync history on it; the bitstream and firmware "
                            "stay) with openFPGALoader; nothing is built")
    board.add_argument("--seed", type=int, default=None,
                       help="nextpnr placement seed (default: the board's NEXTPNR_SEED, else 1)")
    board.add_argument("--yosys-flow", default=None, choices=("default", "flow3"),
                       help="Yosys technology mapping: default (synth_ecp5's ABC9), or flow3 (ABC9 with "
                            "LiteX's flow3 script: fewer LUTs, slower synthesis). Default: the board's "
                            "choice (colorlight_i5: see platforms/colorlight_i5.py YOSYS_FLOW)")
    board.add_argument("--nic-sdram-ports", action="store_true", default=None,
                       help="the offload NIC's DMA masters on their own LiteDRAM ports, coherent with "
                            "LiteDAV's L2 (gateware/sdram_dma.py; boards with main RAM behind it). "
                            "Default: the board's NIC_SDRAM_PORTS")
    board.add_argument("--cpu-variant", default=None,
                       help="VexRiscv variant (default: standard on sim, the board's choice on boards): "
                            "LiteX's, or standard+no-dsp (no MMU, no DSP multiplier, no branch prediction: "
                            "generated, soc/vexriscv_netlist.py)")
    board.add_argument("--cpu-icache", type=int, default=None, metavar="BYTES",
                       help="VexRiscv's instruction cache size. Default: the variant's prebuilt netlist "
                            "(4 KiB caches). With either size given, the netlist is generated with VexRiscv's "
                            "generator (soc/vexriscv_netlist.py: needs a JDK; linux variants: whole 4 KiB "
                            "ways) and its data cache can invalidate single lines")
    board.add_argument("--cpu-dcache", type=int, default=None, metavar="BYTES",
                       help="VexRiscv's data cache size (default 4096), as --cpu-icache")
    board.add_argument("--cpu", default=None, choices=("vexriscv", "cortex_m1", "cortex_m3"),
                       help="boards: the soft CPU (default: the board's, vexriscv; tang_nano_4k has the "
                            "hard gowin_emcu). cortex_m1/cortex_m3 need Arm's DesignStart RTL, which the "
                            "user supplies (soc/designstart.py)")
    board.add_argument("--designstart-dir", default=None,
                       help="folder holding Arm's DesignStart archives (default: $LITEDAV_DESIGNSTART or "
                            "third_party/arm-designstart)")
    target = board_module(platform) if platform else None
    if hasattr(target, "add_arguments"):
        target.add_arguments(parser.add_argument_group(f"--platform {platform}"))
    return parser


def parse_args(argv=None):
    """--platform first: its module may add arguments of its own."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--platform", default="sim")
    platform = first.parse_known_args(argv)[0].platform
    return build_parser(platform if platform in PLATFORMS else None).parse_args(argv)


def main(argv=None):
    from litedav.soc.vexriscv_netlist import NetlistError
    args = parse_args(argv)
    board = board_module(args.platform)
    try:
        if hasattr(board, "build"):   # A flow of its own: the simulator's Verilator model.
            return board.build(args)
        return board_main(args, board)
    except NetlistError as e:
        sys.exit(f"litedav-soc: --cpu-icache/--cpu-dcache: {e}")


# Boards -------------------------------------------------------------------------------------------

def board_module(name):
    return importlib.import_module(f"litedav.platforms.{name}")


def board_main(args, board):
    """--platform <board>: generate (always), --build, --load, --flash."""
    sys_clk_freq = args.sys_clk_freq or board.DEFAULT_SYS_CLK_FREQ
    output_dir = os.path.abspath(args.output_dir or os.path.join("build", args.platform))
    if args.load and args.flash:
        sys.exit("litedav-soc: --load and --flash exclude each other (SRAM or SPI flash)")
    vendor_tool = getattr(board, "VENDOR_TOOL", None)
    if args.build and vendor_tool and shutil.which(vendor_tool) is None:
        sys.exit(f"litedav-soc: {args.platform} needs {vendor_tool} on PATH for --build (not a registry "
                 f"package, not installed here); without --build litedav-soc writes the project "
                 f"for it into {output_dir}/gateware")
    cpu_type = args.cpu or getattr(board, "CPU_TYPE", "vexriscv")
    if args.cpu and getattr(board, "CPU_TYPE", "vexriscv") == "gowin_emcu":
        sys.exit(f"litedav-soc: {args.platform} runs its hard Cortex-M3 (gowin_emcu); --cpu does not apply")
    rtl_cwd = None
    if cpu_type in ("cortex_m1", "cortex_m3"):
        from litedav.soc import designstart
        rtl_cwd = designstart.check(cpu_type, designstart.designstart_dir(args.designstart_dir))
    if args.erase_store:
        return erase_store(board, output_dir, args.load or args.flash or args.build)
    if args.load or args.flash:
        # Ask the cable first: without a board there is nothing to build for.
        check_cable(board)

    platform = board.Platform()
    if args.seed is None:
        args.seed = getattr(board, "NEXTPNR_SEED", 1)
    nic = args.nic or getattr(board, "DEFAULT_NIC", "offload")
    from litedav.soc.litedav_soc import LiteDAVSoC
    # LiteX's DesignStart wrappers add the RTL by a path relative to the working directory.
    with contextlib.chdir(rtl_cwd or os.getcwd()):
        soc = LiteDAVSoC(platform, board,
            sys_clk_freq   = sys_clk_freq,
            eth_rx_slots   = args.eth_rx_slots or getattr(board, "ETH_RX_SLOTS", 32),
            eth_tx_slots   = args.eth_tx_slots or getattr(board, "ETH_TX_SLOTS", 4),
            bus_bursting   = args.bus_bursting,
            cpu_type       = cpu_type,
            cpu_variant    = args.cpu_variant or (board.CPU_VARIANT if cpu_type == "vexriscv" else "standard"),
            nic            = nic,
            nic_sdram_ports = args.nic_sdram_ports,
            cpu_icache     = args.cpu_icache,
            cpu_dcache     = args.cpu_dcache)
    # A vendor tool's project (Vivado) is the deliverable here: it gets the BIOS in its ROM. A hard
    # CPU with its own flash (Tang Nano 4K's EMCU) runs the firmware port instead: no BIOS.
    with_bios = cpu_type != "gowin_emcu"
    builder = Builder(soc, output_dir=output_dir,
                      compile_software=with_bios and (args.build or bool(vendor_tool)),
                      compile_gateware=args.build, bios_lto=True, bios_console="lite")
    gateware_dir = builder.gateware_dir
    bitstream = os.path.join(gateware_dir, platform.name + board.BITSTREAM_EXT)
    if args.build and vendor_tool:
        start = time.monotonic()
        builder.build()
        print(f"[litedav-soc] bitstream {bitstream} ({time.monotonic() - start:.0f} s; timing: "
              f"see {vendor_tool}'s reports in {gateware_dir})")
    elif args.build:
        from litedav.soc.toolchain import install_wrappers
        install_wrappers(board.TOOLS)
        report = os.path.join(gateware_dir, f"{platform.name}_report.json")
        # LiteX's Gowin (Apycula) flow asks nextpnr for its JSON report itself, as <name>.report.
        pnr_report = (os.path.join(gateware_dir, f"{platform.name}.report")
                      if getattr(platform.toolchain, "pnr_fmt", None) == "report" else report)
        log = os.path.join(gateware_dir, "nextpnr.log")
        for stale in (report, pnr_report, log, bitstream):
            if os.path.exists(stale):
                os.remove(stale)
        # Relative names: the tools run in the gateware folder (YoWASP cannot see /tmp).
        if pnr_report == report:
            platform.toolchain._pnr_opts += f" --report {platform.name}_report.json"
        platform.toolchain._pnr_opts += " --log nextpnr.log "
        start = time.monotonic()
        print(f"[litedav-soc] building {args.platform} in {output_dir} (sys_clk "
              f"{sys_clk_freq / 1e6:g} MHz, seed {args.seed})", flush=True)
        try:
            # timingstrict: nextpnr without --timing-allow-fail, so a failing clock is an error.
            flow = args.yosys_flow or getattr(board, "YOSYS_FLOW", "default")
            builder.build(timingstrict=True, seed=args.seed, **({"flow3": True} if flow == "flow3" else {}))
        except OSError as e:
            failed = timing_failures_from_log(log)
            if failed:
                sys.exit("litedav-soc: TIMING FAILED, no bitstream: " + "; ".join(failed) +
                         f" (nextpnr log: {log})")
            sys.exit(f"litedav-soc: build failed: {e} (logs in {gateware_dir})")
        seconds = time.monotonic() - start
        if pnr_report != report and os.path.isfile(pnr_report):
            shutil.copyfile(pnr_report, report)
        clocks = check_timing(report)
        summary = {"platform": args.platform, "sys_clk_freq": sys_clk_freq, "seed": args.seed,
                   "cpu_type": cpu_type,
                   "cpu_variant": args.cpu_variant or board.CPU_VARIANT, "nic": nic,
                   "cpu_icache": args.cpu_icache or 4096, "cpu_dcache": args.cpu_dcache or 4096,
                   "yosys_flow": flow,
                   "build_seconds": round(seconds, 1), "clocks": clocks}
        with open(os.path.join(output_dir, "build_summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
        for name, c in clocks.items():
            print(f"[litedav-soc] clock {name}: {c['achieved_mhz']:.1f} MHz achieved, "
                  f"{c['constraint_mhz']:.1f} MHz constraint", flush=True)
        print(f"[litedav-soc] bitstream {bitstream} ({seconds:.0f} s)")
    else:
        builder.build()
        print(f"[litedav-soc] {args.platform}: headers in {builder.generated_dir}, "
              f"gateware sources in {gateware_dir}")
    if args.load or args.flash:
        if not os.path.isfile(bitstream):
            sys.exit(f"litedav-soc: no bitstream at {bitstream}: build it first (--build)")
        if args.load:
            run_loader(board, [bitstream])
        elif getattr(board, "FIRMWARE_LOADER_ARG", None):
            # Internal flash (Gowin): bitstream and CPU firmware in one openFPGALoader run.
            extra = list(board.FLASH_ARGS)
            if args.firmware:
                check_firmware_size(args.firmware, board.EMCU_FIRMWARE_MAX)
                extra += [board.FIRMWARE_LOADER_ARG, args.firmware]
            else:
                print("[litedav-soc] no --firmware: only the bitstream was written to flash")
            run_loader(board, extra + [bitstream])
        else:
            run_loader(board, ["-f", "--offset", "0", bitstream])
            if args.firmware:
                image = flash_boot_image(args.firmware, board, output_dir)
                run_loader(board, ["-f", "--offset", hex(board.FLASH_FIRMWARE_OFFSET),
                                   "--file-type", "bin", image])
            else:
                print("[litedav-soc] no --firmware: only the bitstream was written to flash")


def erase_store(board, output_dir, other_actions):
    """--erase-store: the store's flash region back to 0xFF. openFPGALoader writes an image of
    that many 0xFF bytes at the region's offset (openFPGALoader -f --offset); the
    firmware then finds an empty store at its next boot."""
    if other_actions:
        sys.exit("litedav-soc: --erase-store runs alone (no --build, --load or --flash)")
    if not hasattr(board, "FLASH_STORE_OFFSET"):
        sys.exit(f"litedav-soc: {board.NAME} keeps no calendar store in SPI flash")
    check_cable(board)
    os.makedirs(output_dir, exist_ok=True)
    image = os.path.join(output_dir, "store-erased.bin")
    with open(image, "wb") as f:
        f.write(b"\xff" * board.FLASH_STORE_SIZE)
    print(f"[litedav-soc] erasing the store: {board.FLASH_STORE_SIZE // 1024} KiB at flash offset "
          f"0x{board.FLASH_STORE_OFFSET:06x}", flush=True)
    run_loader(board, ["-f", "--offset", hex(board.FLASH_STORE_OFFSET), "--file-type", "bin", image])


def timing_failures_from_log(log):
    """nextpnr's "Max frequency for clock ... (FAIL at ... MHz)" lines of the last pass."""
    if not os.path.isfile(log):
        return []
    lines = re.findall(r"Max frequency for clock\s+'([^']+)':\s*([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)",
                       open(log, errors="replace").read())
    last = {}   # nextpnr prints the table after placement and again after routing.
    for clock, achieved, verdict, target in lines:
        last[clock] = f"{clock} reaches {achieved} MHz, needs {target} MHz" if verdict == "FAIL" else None
    return [text for text in last.values() if text]


def check_timing(report):
    """Clocks of nextpnr's --report JSON as {name: achieved/constraint MHz}; SystemExit when one
    misses its constraint or the report lacks clocks (no constraints would mean no check)."""
    if not os.path.isfile(report):
        sys.exit(f"litedav-soc: nextpnr wrote no report {report}: cannot check timing")
    fmax = json.load(open(report)).get("fmax", {})
    if not fmax:
        sys.exit(f"litedav-soc: {report} lists no constrained clock: timing unchecked")
    clocks, failed = {}, []
    for name, c in sorted(fmax.items()):
        clocks[name] = {"achieved_mhz": round(c["achieved"], 2), "constraint_mhz": round(c["constraint"], 2)}
        if c["achieved"] < c["constraint"]:
            failed.append(f"{name} reaches {c['achieved']:.1f} MHz, needs {c['constraint']:.1f} MHz")
    if failed:
        sys.exit("litedav-soc: TIMING FAILED: " + "; ".join(failed))
    return clocks


def loader():
    exe = shutil.which("openFPGALoader")
    if exe is None:
        sys.exit("litedav-soc: openFPGALoader not found (Debian package openfpgaloader; `make deps`)")
    return exe


def check_cable(board):
    """SystemExit naming the cable when openFPGALoader finds no probe or no FPGA behind it."""
    cmd = [loader(), "-c", board.LOADER_CABLE, "--detect"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0 or "idcode" not in proc.stdout.lower():
        detail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else f"exit {proc.returncode}"
        sys.exit(f"litedav-soc: no board found on cable `{board.LOADER_CABLE}` "
                 f"({' '.join(cmd[1:])}: {detail}). Expected: {board.LOADER_NOTE}.")


def run_loader(board, extra):
    cmd = [loader(), "-c", board.LOADER_CABLE, *extra]
    print("[litedav-soc] " + " ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode != 0:
        sys.exit(f"litedav-soc: openFPGALoader failed on cable `{board.LOADER_CABLE}`")


def check_firmware_size(firmware, limit):
    if not os.path.isfile(firmware):
        sys.exit(f"litedav-soc: firmware image {firmware!r} not found")
    if os.path.getsize(firmware) > limit:
        sys.exit(f"litedav-soc: firmware ({os.path.getsize(firmware)} bytes) exceeds the CPU's flash "
                 f"({limit} bytes)")


def flash_boot_image(firmware, board, output_dir):
    """The firmware as LiteX's flash boot image (length, CRC32, data; little-endian)."""
    from litex.soc.software.crcfbigen import insert_crc
    if not os.path.isfile(firmware):
        sys.exit(f"litedav-soc: firmware image {firmware!r} not found")
    size = os.path.getsize(firmware)
    if size + 8 > board.FLASH_FIRMWARE_MAX:
        sys.exit(f"litedav-soc: firmware ({size} bytes) exceeds the flash slot "
                 f"({board.FLASH_FIRMWARE_MAX} bytes)")
    image = os.path.join(output_dir, "firmware.fbi")
    insert_crc(firmware, fbi_mode=True, o_filename=image, little_endian=True)
    return image


if __name__ == "__main__":
    main()
