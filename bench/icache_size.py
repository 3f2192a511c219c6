"""What a larger instruction cache would give the ideal SoC: nic_compare's rows on a model whose
VexRiscv has an I-cache of another size, beside today's (issue 29, "the CPU's memory system
chosen by measurement").

The ideal SoC's VexRiscv (LiteX's `standard` variant, pythondata-cpu-vexriscv's VexRiscv.v) has a
4 KiB direct-mapped instruction cache with 32-byte lines. VexRiscv makes other sizes with its
generator (GenCoreDefault --iCacheSize), which needs sbt and a Scala 2.11 compiler; here only
Scala 2.11 builds of SpinalHDL are served and Scala 2.11 does not run on Java 17 (the only JDK:
"object java.lang.Object in compiler mirror not found"). So this experiment derives the Verilog
itself: the InstructionCache module of the installed VexRiscv.v with its line index, word address
and flush counter widened and its tag address narrowed (stored zero-extended in the same tag
width), direct-mapped like the original. Every edit must match as often as it does in the version this was written for, so
another pythondata version stops here with a message instead of building something else.

For each size it copies the ideal SoC's build (build/sim-<nic>, built by `litedav-sim build` or
nic_compare, firmware and all) to build/icache-<size>-<nic>, compiles the Verilator model there
with the derived VexRiscv.v (no profile-guided pass), and runs nic_compare's measurement on it
(bulk GET and PUT, ab -c 8, ab -k -c 10, latency). The 4 KiB row is the copied build unchanged
in Verilog (the installed VexRiscv.v compiled the same way), so the rows differ in the cache alone.

    python3 -m litedav.bench.icache_size [--sizes 4096 16384 32768] [--nic offload] [--phy gmii]
                                         [--out DIR]

Writes DIR/icache_size.json and DIR/icache_size.md (default bench/results); not part of
`make bench`, whose SoC keeps its 4 KiB cache. The board (75 MHz, linux+no-dsp with an MMU) is
not modelled here: a cache there must fit its BRAM and timing (docs/colorlight_i5.md).
"""

import argparse
import json
import os
import re
import shutil
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE_BYTES = 32
ORIGINAL_SIZE = 4096


class ExperimentError(Exception):
    pass


def installed_vexriscv():
    import pythondata_cpu_vexriscv
    return os.path.join(pythondata_cpu_vexriscv.data_location, "VexRiscv.v")


def widen_icache(verilog, size):
    """The VexRiscv.v text with its InstructionCache holding `size` bytes (a power of two from
    4 KiB up, direct-mapped, 32-byte lines)."""
    if size == ORIGINAL_SIZE:
        return verilog
    if size < ORIGINAL_SIZE or size & (size - 1):
        raise ExperimentError(f"--sizes: {size} is not a power of two of at least {ORIGINAL_SIZE}")
    begin = verilog.find("module InstructionCache (")
    end = verilog.find("endmodule", begin)
    if begin < 0 or end < 0:
        raise ExperimentError("no InstructionCache module in the installed VexRiscv.v")
    module = verilog[begin:end]
    top = size.bit_length() - 2             # highest address bit of the index: 11 for 4 KiB
    lines, words = size // LINE_BYTES, size // 4
    index_bits, word_bits = top - 4, top - 1    # line index [top:5], word address [top:2]
    count_bits = index_bits + 1                 # the flush counter: one line per count, msb done
    pad = top - 11                              # tag address bits freed above the old index
    edits = [
        ("reg        [7:0]    lineLoader_flushCounter;",
         f"reg        [{count_bits - 1}:0]    lineLoader_flushCounter;"),
        ("wire       [6:0]    lineLoader_write_tag_0_payload_address;",
         f"wire       [{index_bits - 1}:0]    lineLoader_write_tag_0_payload_address;"),
        ("wire       [9:0]    lineLoader_write_data_0_payload_address;",
         f"wire       [{word_bits - 1}:0]    lineLoader_write_data_0_payload_address;"),
        ("wire       [9:0]    _zz_fetchStage_read_banksValue_0_dataMem;",
         f"wire       [{word_bits - 1}:0]    _zz_fetchStage_read_banksValue_0_dataMem;"),
        ("wire       [6:0]    _zz_fetchStage_read_waysValues_0_tag_valid;",
         f"wire       [{index_bits - 1}:0]    _zz_fetchStage_read_waysValues_0_tag_valid;"),
        ("lineLoader_flushCounter[7] ? lineLoader_address[11 : 5] : lineLoader_flushCounter[6 : 0]",
         f"lineLoader_flushCounter[{count_bits - 1}] ? lineLoader_address[{top} : 5] : "
         f"lineLoader_flushCounter[{index_bits - 1} : 0]"),
        ("lineLoader_write_tag_0_payload_data_address = lineLoader_address[31 : 12];",
         f"lineLoader_write_tag_0_payload_data_address = {{{pad}'d0, lineLoader_address[31 : {top + 1}]}};"),
        ("{lineLoader_address[11 : 5],lineLoader_wordIndex}",
         f"{{lineLoader_address[{top} : 5],lineLoader_wordIndex}}"),
        ("io_cpu_prefetch_pc[11 : 2];", f"io_cpu_prefetch_pc[{top} : 2];"),
        ("io_cpu_prefetch_pc[11 : 5];", f"io_cpu_prefetch_pc[{top} : 5];"),
        ("== io_cpu_fetch_mmuRsp_physicalAddress[31 : 12]",
         f"== {{{pad}'d0, io_cpu_fetch_mmuRsp_physicalAddress[31 : {top + 1}]}}"),
        ("reg [31:0] banks_0 [0:1023];", f"reg [31:0] banks_0 [0:{words - 1}];"),
        ("reg [21:0] ways_0_tags [0:127];", f"reg [21:0] ways_0_tags [0:{lines - 1}];"),
        ("(! lineLoader_flushCounter[7])", f"(! lineLoader_flushCounter[{count_bits - 1}])", 2),
        ("lineLoader_write_tag_0_payload_data_valid = lineLoader_flushCounter[7];",
         f"lineLoader_write_tag_0_payload_data_valid = lineLoader_flushCounter[{count_bits - 1}];"),
        ("lineLoader_flushCounter <= (lineLoader_flushCounter + 8'h01);",
         f"lineLoader_flushCounter <= (lineLoader_flushCounter + {count_bits}'d1);"),
        ("<= lineLoader_flushCounter[7];", f"<= lineLoader_flushCounter[{count_bits - 1}];"),
        ("lineLoader_flushCounter <= 8'h0;", f"lineLoader_flushCounter <= {count_bits}'d0;"),
    ]
    for old, new, *times in edits:
        times = times[0] if times else 1
        if module.count(old) != times:
            raise ExperimentError(f"the installed VexRiscv.v's InstructionCache has {module.count(old)} "
                                  f"of {old!r} ({times} expected): another VexRiscv version, not derived")
        module = module.replace(old, new)
    left = re.findall(r"flushCounter\[7\]|\[11 : [25]\]|\[31 : 12\]", module)
    if left:
        raise ExperimentError(f"the InstructionCache still uses the 4 KiB widths: {left}")
    return verilog[:begin] + module + verilog[end:]


def build_model(size, nic):
    """build/icache-<size>-<nic>: the ideal SoC's build with its model compiled against a
    VexRiscv.v whose I-cache holds `size` bytes."""
    from litedav.sim.run import default_build_dir
    from litedav.platforms import sim as sim_platform
    source = os.path.join(TOP, default_build_dir(nic))
    if not os.path.exists(os.path.join(source, "gateware", "sim.v")):
        raise ExperimentError(f"no ideal SoC build in {source}: run `litedav-sim build --nic {nic}` first")
    build_dir = os.path.join(TOP, "build", f"icache-{size}-{nic}")
    shutil.rmtree(build_dir, ignore_errors=True)
    shutil.copytree(source, build_dir, ignore=shutil.ignore_patterns("run-*", "obj_dir", "modules",
                                                                     "pgo-profile"))
    gateware = os.path.join(build_dir, "gateware")
    with open(installed_vexriscv()) as f:
        verilog = widen_icache(f.read(), size)
    cpu = os.path.join(gateware, "VexRiscv.v")
    with open(cpu, "w") as f:
        f.write(verilog)

    class Platform:
        sources = [(cpu,), (os.path.join(gateware, "sim.v"),)]

    os.environ["LITEDAV_SIM_PGO"] = "0"
    print(f"[icache] {size // 1024} KiB: compiling the model in {gateware}", flush=True)
    sim_platform.compile_model(gateware, Platform, sim_platform.model_settings())
    return build_dir


def measure(build_dir, nic, phy):
    from litedav.bench import nic_compare
    out = os.path.join(build_dir, "bench")
    os.makedirs(out, exist_ok=True)
    return nic_compare.measure(nic, phy, 300, 200, out, build_dir=build_dir)


ROWS = [
    ("small GET, keep-alive (ab -k -c 10): CPU cycles/request",
     lambda r: r["small_get_keep_alive"]["cpu_cycles_per_request"]),
    ("small GET, new connection (ab -c 8): CPU cycles/request",
     lambda r: r["small_get_new_connection"]["cpu_cycles_per_request"]),
    ("small GET latency, last byte in -> first byte out: median cycles",
     lambda r: r["latency"]["median_cycles"]),
    ("bulk GET 1 MiB: CPU cycles/byte", lambda r: r["bulk_get"]["cpu_cycles_per_byte"]),
    ("bulk PUT 1 MiB: CPU cycles/byte", lambda r: r["bulk_put"]["cpu_cycles_per_byte"]),
    ("bulk PUT 1 MiB: MB/s", lambda r: r["bulk_put"]["goodput_MBps"]),
]


def markdown(results, nic, phy):
    sizes = sorted(results, key=int)
    commits = sorted({results[s]["commit"] for s in sizes})
    lines = [f"**Instruction cache size on the ideal SoC (VexRiscv `standard` at 125 MHz, {nic}, "
             f"{phy.upper()}; commit {', '.join(commits)})** (`python3 -m litedav.bench.icache_size`: "
             "the I-cache's Verilog derived from the installed VexRiscv.v, direct-mapped, 32-byte "
             "lines; nothing else changed)", "",
             "| row | " + " | ".join(f"{int(s) // 1024} KiB" for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for label, get in ROWS:
        cells = []
        for s in sizes:
            try:
                cells.append(f"{get(results[s]):,}")
            except (KeyError, TypeError):
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="icache_size", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 16384, 32768],
                        help="I-cache sizes in bytes (powers of two, 4096 and up)")
    parser.add_argument("--nic", default="offload", choices=["liteeth", "offload"])
    parser.add_argument("--phy", default="gmii", choices=["gmii", "mii"])
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"))
    args = parser.parse_args(argv)
    try:
        with open(installed_vexriscv()) as f:
            original = f.read()
        for size in args.sizes:
            widen_icache(original, size)    # every size derives before anything is built
        results = {}
        for size in args.sizes:
            results[str(size)] = measure(build_model(size, args.nic), args.nic, args.phy)
    except ExperimentError as e:
        sys.exit(f"icache_size: {e}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "icache_size.json"), "w") as f:
        json.dump({"nic": args.nic, "phy": args.phy, "results": results}, f, indent=2, default=str)
    table = markdown(results, args.nic, args.phy)
    with open(os.path.join(args.out, "icache_size.md"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
