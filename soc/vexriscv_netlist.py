"""VexRiscv netlists with caches of other sizes, made by VexRiscv's own generator.

LiteX's VexRiscv variants are prebuilt netlists (pythondata-cpu-vexriscv), each with a 4 KiB
instruction cache and a 4 KiB data cache. pythondata-cpu-vexriscv also carries the sources they
were made from: VexRiscv's Scala (ext/VexRiscv) and LiteX's generator for its variants
(GenCoreDefault). This module runs that generator with a variant's own arguments (as
pythondata's Makefile gives them) plus other cache sizes, and returns the netlist's path:

    netlist("standard", icache=32768, dcache=8192)   # build/vexriscv/standard-i32768-d8192-<key>/

What the generator does with sizes: variants without an MMU (`standard`) get direct-mapped
caches of any power of two; the `linux*` variants (an MMU, virtually indexed) get one 4 KiB way
per 4 KiB of cache. Lines are 32 bytes either way. The CPU's ports, CSRs and uncached ranges are
the variant's: only the caches' RAMs and their index and tag widths change, and the data cache
can invalidate a range of lines (soc/vexriscv-patches/0001: the management instruction LiteX's
flush_cpu_dcache() issues, with the first line's address in rs1 and the number of lines after it
in rs2 instead of x0 and x0). Its prebuilt netlist is what a SoC takes for a LiteX variant with
no size given; a netlist is generated for any size given (even 4096) and for OWN_VARIANTS. A SoC
with a generated netlist tells its firmware so (LITEDAV_DCACHE_LINE_INVALIDATE in
generated/soc.h).

What it needs, fetched once into build/deps/sbt (never committed): a JDK (`java`; Debian's
openjdk-17-jdk-headless), sbt's launcher from Maven Central, and through it sbt, Scala 2.11.12
and SpinalHDL for Scala 2.11 (the only Scala line the Maven mirror serves SpinalHDL for). The
project sbt compiles is written here (build.sbt, project/build.properties) over a copy of
pythondata's Scala sources; scalatest, which VexRiscv's own build.sbt pulls in for its tests, is
left out: Scala 2.11 cannot read its scalactic jar on Java 17. The first netlist takes a few
minutes (downloads and a compile of VexRiscv), later ones about 15 s, and a netlist already made
for the same arguments and sources is reused.
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Changes to VexRiscv's Scala, applied to the copy sbt compiles (patch -p1 in vexriscv/src/main/scala):
# 0001 lets the data cache invalidate a range of lines (rs1 and rs2 of its management instruction).
PATCH_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vexriscv-patches")

SBT_VERSION = "1.4.7"
SCALA_VERSION = "2.11.12"
SPINALHDL_VERSION = "1.7.1"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
LAUNCHER_PATH = f"org/scala-sbt/sbt-launch/{SBT_VERSION}/sbt-launch-{SBT_VERSION}.jar"

# GenCoreDefault's arguments for LiteX's variant names (pythondata-cpu-vexriscv's Makefile).
VARIANT_ARGS = {
    "standard": [],
    "full": ["--csrPluginConfig", "all"],
    "linux": ["--csrPluginConfig", "linux-minimal"],
    "linux+no-dsp": ["--csrPluginConfig", "linux-minimal", "--singleCycleMulDiv=false",
                     "--relaxedPcCalculation=true", "--prediction=none"],
}
# Netlists LiteX has no variant for: the LiteX variant the SoC takes (compiler flags, uncached
# ranges) and the generator's arguments. standard+no-dsp: `standard` without its DSP multiplier
# and with linux+no-dsp's timing relief (iterative multiply and divide, a relaxed PC stage, no
# branch prediction), but no MMU, so its caches are direct-mapped at any size.
OWN_VARIANTS = {
    "standard+no-dsp": ("standard", ["--singleCycleMulDiv=false", "--relaxedPcCalculation=true",
                                     "--prediction=none"]),
}
PREBUILT_CACHE_BYTES = 4096    # both caches of every variant above, as pythondata ships them
MIN_CACHE_BYTES = 1024         # below, GenCoreDefault's line and tag arithmetic is untested here
LINE_BYTES = 32


class NetlistError(Exception):
    """The netlist cannot be made: the message says why and what to do."""


def check_cache_size(name, size, variant):
    """A cache size the generator makes for `variant`, or NetlistError."""
    if size < MIN_CACHE_BYTES or size & (size - 1):
        raise NetlistError(f"{name}: {size} is not a power of two of at least {MIN_CACHE_BYTES} bytes")
    if variant.startswith("linux") and size > 4096 and size % 4096:
        raise NetlistError(f"{name}: {variant} has an MMU, so a cache above 4 KiB is whole 4 KiB ways")


def litex_variant(variant):
    """The LiteX variant name a CPU variant (LiteX's or OWN_VARIANTS') gives the SoC."""
    return OWN_VARIANTS[variant][0] if variant in OWN_VARIANTS else variant


def is_prebuilt(variant, icache, dcache):
    """Whether the SoC takes pythondata's own netlist: a LiteX variant, no size given. A size
    given, even the prebuilt 4096, generates a netlist (which also has the data cache's line
    invalidation)."""
    return variant not in OWN_VARIANTS and icache is None and dcache is None


def generator_args(variant, icache, dcache):
    if variant not in VARIANT_ARGS and variant not in OWN_VARIANTS:
        raise NetlistError(f"VexRiscv variant {variant!r}: caches of other sizes are made for "
                           f"{', '.join([*VARIANT_ARGS, *OWN_VARIANTS])} only")
    icache = icache or PREBUILT_CACHE_BYTES
    dcache = dcache or PREBUILT_CACHE_BYTES
    check_cache_size("the instruction cache", icache, variant)
    check_cache_size("the data cache", dcache, variant)
    base = OWN_VARIANTS[variant][1] if variant in OWN_VARIANTS else VARIANT_ARGS[variant]
    return base + ["--iCacheSize", str(icache), "--dCacheSize", str(dcache)]


def pythondata_dir():
    import pythondata_cpu_vexriscv
    return pythondata_cpu_vexriscv.data_location


def sources_key(source_dir):
    """A digest of the Scala sources, the generator's versions and this module's project text."""
    digest = hashlib.sha256()
    for root in (os.path.join(source_dir, "src", "main", "scala"),
                 os.path.join(source_dir, "ext", "VexRiscv", "src", "main", "scala")):
        for folder, dirs, files in sorted(os.walk(root)):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as f:
                    digest.update(f.read())
    for name in patches():
        with open(os.path.join(PATCH_DIR, name), "rb") as f:
            digest.update(name.encode() + f.read())
    digest.update(f"{SBT_VERSION} {SCALA_VERSION} {SPINALHDL_VERSION}".encode())
    digest.update(build_sbt().encode())
    return digest.hexdigest()[:12]


def patches():
    return sorted(n for n in os.listdir(PATCH_DIR) if n.endswith(".patch"))


def build_sbt():
    return f"""// Written by soc/vexriscv_netlist.py: VexRiscv (vexriscv/) and LiteX's GenCoreDefault (src/),
// two projects as in pythondata-cpu-vexriscv (GenCoreDefault's SpinalConfig would clash with
// VexRiscv's demos in one).
ThisBuild / scalaVersion := "{SCALA_VERSION}"
lazy val spinal = Seq(
  libraryDependencies ++= Seq(
    "com.github.spinalhdl" % "spinalhdl-core_2.11" % "{SPINALHDL_VERSION}",
    "com.github.spinalhdl" % "spinalhdl-lib_2.11" % "{SPINALHDL_VERSION}",
    compilerPlugin("com.github.spinalhdl" % "spinalhdl-idsl-plugin_2.11" % "{SPINALHDL_VERSION}"),
    "org.yaml" % "snakeyaml" % "1.8"
  ),
  scalacOptions += "-Xplugin-require:idsl-plugin",
  fork := true
)
lazy val vexRiscv = (project in file("vexriscv")).settings(spinal)
lazy val root = (project in file(".")).settings(spinal).dependsOn(vexRiscv)
"""


def sbt_home():
    return os.path.join(TOP, "build", "deps", "sbt")


def launcher():
    """sbt's launcher jar, fetched from Maven Central once and checked against its SHA-1."""
    jar = os.path.join(sbt_home(), os.path.basename(LAUNCHER_PATH))
    if os.path.isfile(jar):
        return jar
    os.makedirs(sbt_home(), exist_ok=True)
    url = f"{MAVEN_CENTRAL}/{LAUNCHER_PATH}"
    print(f"[vexriscv] fetching {url}", flush=True)
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            data = r.read()
        with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
            expected = r.read().decode().split()[0].strip()
    except OSError as e:
        raise NetlistError(f"cannot fetch sbt's launcher from {url}: {e}") from e
    if hashlib.sha1(data).hexdigest() != expected:
        raise NetlistError(f"sbt's launcher from {url} does not match its SHA-1 ({expected})")
    with open(jar + ".part", "wb") as f:
        f.write(data)
    os.replace(jar + ".part", jar)
    return jar


def java():
    """LITEDAV_JAVA, else `java` on PATH: a JDK that runs sbt 1.4 and Scala 2.11.12 (17 does)."""
    path = os.environ.get("LITEDAV_JAVA") or shutil.which("java")
    if not path or not os.access(path, os.X_OK):
        raise NetlistError("a VexRiscv with other cache sizes is generated with sbt, which needs a "
                           "JDK: no `java` on PATH and no LITEDAV_JAVA (Debian: apt install "
                           "openjdk-17-jdk-headless; make deps does)")
    return path


def prepare_project(source_dir, project_dir):
    """The sbt project: pythondata's Scala sources (main only, no tests) and our build definition."""
    if os.path.isfile(os.path.join(project_dir, "build.sbt")):
        return
    tmp = project_dir + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    scala = ("src", "main", "scala")
    shutil.copytree(os.path.join(source_dir, *scala), os.path.join(tmp, *scala))
    shutil.copytree(os.path.join(source_dir, "ext", "VexRiscv", *scala), os.path.join(tmp, "vexriscv", *scala))
    for name in patches():
        result = subprocess.run(["patch", "-p1", "--forward", "--batch", "-i", os.path.join(PATCH_DIR, name)],
                                cwd=os.path.join(tmp, "vexriscv", *scala), capture_output=True, text=True)
        if result.returncode != 0:
            raise NetlistError(f"soc/vexriscv-patches/{name} does not apply to pythondata-cpu-vexriscv's "
                               f"VexRiscv (another version?):\n{result.stdout}{result.stderr}")
    os.makedirs(os.path.join(tmp, "project"))
    with open(os.path.join(tmp, "project", "build.properties"), "w") as f:
        f.write(f"sbt.version={SBT_VERSION}\n")
    with open(os.path.join(tmp, "build.sbt"), "w") as f:
        f.write(build_sbt())
    os.replace(tmp, project_dir)


def run_sbt(project_dir, command, log):
    home = sbt_home()
    jar = launcher()
    repositories = os.path.join(home, "repositories")
    with open(repositories, "w") as f:
        f.write(f"[repositories]\n  local\n  maven-central: {MAVEN_CENTRAL}\n")
    env = dict(os.environ, COURSIER_CACHE=os.path.join(home, "coursier"))
    cmd = [java(), "-Xmx2g", "-Dsbt.override.build.repos=true",
           f"-Dsbt.repository.config={repositories}",
           f"-Dsbt.boot.directory={os.path.join(home, 'boot')}",
           f"-Dsbt.global.base={os.path.join(home, 'global')}",
           f"-Dsbt.ivy.home={os.path.join(home, 'ivy')}",
           "-Dsbt.log.noformat=true", "-Dsbt.supershell=false",
           "-jar", jar, command]
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        result = subprocess.run(cmd, cwd=project_dir, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        with open(log) as f:
            tail = f.readlines()[-15:]
        raise NetlistError(f"sbt failed ({command}); the end of {log}:\n" + "".join(tail))


def netlist(variant, icache=None, dcache=None, build_root=None):
    """The path of a VexRiscv netlist of `variant` with these cache sizes in bytes (None: 4 KiB),
    generated into build_root (default build/vexriscv) unless made already; with neither size
    given, pythondata's prebuilt netlist."""
    if is_prebuilt(variant, icache, dcache):
        from litex.soc.cores.cpu.vexriscv.core import CPU_VARIANTS
        return os.path.join(pythondata_dir(), CPU_VARIANTS[variant] + ".v")
    args = generator_args(variant, icache, dcache)
    build_root = build_root or os.path.join(TOP, "build", "vexriscv")
    source_dir = pythondata_dir()
    key = sources_key(source_dir)
    slug = variant.replace("+", "-")
    out_dir = os.path.join(build_root, f"{slug}-i{icache or PREBUILT_CACHE_BYTES}-d{dcache or PREBUILT_CACHE_BYTES}-{key}")
    verilog = os.path.join(out_dir, "VexRiscv.v")
    if os.path.isfile(verilog):
        return verilog
    os.makedirs(build_root, exist_ok=True)
    # One generator at a time: parallel builds share the project and sbt's caches.
    with open(os.path.join(build_root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(verilog):
            return verilog
        project_dir = os.path.join(build_root, f"project-{key}")
        prepare_project(source_dir, project_dir)
        tmp = out_dir + ".part"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        log = os.path.join(build_root, f"sbt-{key}.log")
        print(f"[vexriscv] generating {variant} with a {icache or PREBUILT_CACHE_BYTES}-byte "
              f"instruction cache and a {dcache or PREBUILT_CACHE_BYTES}-byte data cache "
              f"(sbt, log: {log})", flush=True)
        # SpinalHDL writes into the project folder (its working directory); moved from there.
        output = os.path.join(project_dir, "VexRiscv")
        for suffix in (".v", ".yaml"):
            if os.path.exists(output + suffix):
                os.remove(output + suffix)
        run_sbt(project_dir, "runMain vexriscv.GenCoreDefault " + " ".join(args) +
                " --outputFile VexRiscv", log)
        if not os.path.isfile(output + ".v"):
            raise NetlistError(f"the generator wrote no {output}.v (log: {log})")
        for suffix in (".v", ".yaml"):
            if os.path.exists(output + suffix):
                os.replace(output + suffix, os.path.join(tmp, "VexRiscv" + suffix))
        with open(os.path.join(tmp, "arguments"), "w") as f:
            f.write(" ".join(args) + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.replace(tmp, out_dir)
    return verilog


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description="Generate a VexRiscv netlist with other cache sizes "
                                                 "(prints its path).")
    parser.add_argument("--variant", default="standard", choices=sorted([*VARIANT_ARGS, *OWN_VARIANTS]))
    parser.add_argument("--icache", type=int, default=None, help="instruction cache bytes (default 4096)")
    parser.add_argument("--dcache", type=int, default=None, help="data cache bytes (default 4096)")
    parser.add_argument("--build-root", default=None, help="default build/vexriscv")
    args = parser.parse_args(argv)
    try:
        print(netlist(args.variant, args.icache, args.dcache, args.build_root))
    except NetlistError as e:
        sys.exit(f"vexriscv_netlist: {e}")


if __name__ == "__main__":
    main()
