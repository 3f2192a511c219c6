"""How fast the simulator itself runs: simulated sys_clk cycles per wall second (issue 31).

Unlike the other benchmarks, this one is about wall time: the Verilated SoC, its main loop,
the sim modules and libslirp together, on this host. For each NIC (GMII PHY) it boots the
simulator and measures, between two reads of the firmware's status page (`uptime_cycles`), the
simulated cycles that passed divided by the wall time between the reads, in three situations:

  idle     the booted appliance with nothing connected (--idle-seconds of wall time)
  ab       ApacheBench keep-alive small GETs on /static/task.ics (`ab -k -c 10 -n N`)
  day      one user's day from empty (bench/office_sync.py: PROPFIND Depth 1 + calendar-multiget
           of 200 items, 10 changes, an incremental sync) on its preloaded store image (a board
           model's: its store flash's 32 MiB); it needs litedav-host to write the image once
           (build/office_sync/), so --no-day skips it

Wall-time figures depend on the host: each row names the 1-minute load average (os.getloadavg())
before and after its run, and the git commit of the build measured, so an old build (--build-dir,
--commit) can be measured back to back with a new one on the same host.

    python3 -m litedav.bench.sim_speed [--nic liteeth offload] [--build-dir NIC=DIR ...]
                                       [--label NAME] [--requests N] [--no-day] [--out DIR]

Writes section "sim_speed" of DIR/latest.json and latest.md (default bench/results/); rows of
another label, NIC or situation already there are kept, so `--label before` with an old build
and `--label after` with the new one end up side by side.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

from litedav.bench.lm3s_instructions import merge_section
from litedav.sim.config import BOARD_MODEL_PHYS, IDEAL_SOC
from litedav.sim.run import NICS, SimOptions, Simulator, build, default_build_dir, free_port, read_build_commit

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "sim_speed"
MD_BEGIN = f"<!-- {SECTION} begin (written by litedav.bench.sim_speed) -->"
MD_END = f"<!-- {SECTION} end -->"
SITUATIONS = ("idle", "ab", "day")
SMALL_PATH = "/static/task.ics"
STATUS_TIMEOUT = 600  # wall seconds: a status read waits behind whatever the SoC is doing
from litedav.sim.run import BUILD_COMMIT_FILE as COMMIT_FILE  # litedav-sim build writes it


class BenchError(RuntimeError):
    pass


def read_status(port):
    """The status page's counters, and the wall time (time.monotonic) the answer arrived."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=STATUS_TIMEOUT) as r:
        body = r.read().decode()
    return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", body, re.M)}, time.monotonic()


def cpu_seconds(pid):
    """User + system CPU time of a process so far (Linux /proc), None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class Window:
    """Simulated cycles per wall second between two status reads, with the host's load, and
    per CPU second of the simulator process (what it would reach with a core to itself: less
    sensitive to other work on the host than the wall-time figure)."""

    def __init__(self, sim):
        self.port, self.pid = sim.port, sim.proc.pid

    def __enter__(self):
        self.load_before = os.getloadavg()[0]
        self.before, self.t0 = read_status(self.port)
        self.cpu0 = cpu_seconds(self.pid)
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.after, self.t1 = read_status(self.port)
            self.cpu1 = cpu_seconds(self.pid)
            self.load_after = os.getloadavg()[0]

    def figures(self):
        cycles = self.after["uptime_cycles"] - self.before["uptime_cycles"]
        wall = self.t1 - self.t0
        cpu = self.cpu1 - self.cpu0 if self.cpu0 is not None and self.cpu1 is not None else None
        return {"sim_cycles": cycles, "wall_s": round(wall, 2),
                "mcycles_per_s": round(cycles / wall / 1e6, 3),
                "sim_cpu_s": round(cpu, 2) if cpu else None,
                "mcycles_per_cpu_s": round(cycles / cpu / 1e6, 3) if cpu else None,
                "frames": (self.after.get("frames_in", 0) - self.before.get("frames_in", 0)
                           + self.after.get("frames_out", 0) - self.before.get("frames_out", 0)),
                "load_before": round(self.load_before, 2), "load_after": round(self.load_after, 2)}


def build_commit(build_dir, override=None):
    """The commit the build was made from: --commit, else the build's .git-commit file."""
    return override or read_build_commit(build_dir)


def soc_phy(soc):
    """The PHY a SoC is measured at: GMII on the ideal SoC, the board model's own (MII at 75 MHz)."""
    return "gmii" if soc == IDEAL_SOC else BOARD_MODEL_PHYS[soc]


def measure_idle(build_dir, seconds, log, phy="gmii"):
    with Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True, phy=phy)) as sim:
        sim.wait_ready()
        read_status(sim.port)  # the first answer after boot: connection set-up out of the window
        with Window(sim) as w:
            time.sleep(seconds)
    return w.figures()


def measure_ab(build_dir, requests, concurrency, log, phy="gmii"):
    with Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True, phy=phy)) as sim:
        sim.wait_ready()
        read_status(sim.port)
        with Window(sim) as w:
            out = subprocess.run(["ab", "-q", "-k", "-n", str(requests), "-c", str(concurrency), "-s", "300",
                                  f"http://127.0.0.1:{sim.port}{SMALL_PATH}"], capture_output=True, text=True)
        failed = re.search(r"^Failed requests:\s+(\d+)", out.stdout, re.M)
        if out.returncode != 0 or not failed:
            raise BenchError(f"ab failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return {**w.figures(), "requests": requests, "concurrency": concurrency, "failed": int(failed.group(1))}


def measure_day(build_dir, nic, log, soc=IDEAL_SOC, phy="gmii"):
    """bench/office_sync.py's user's day from empty, then its incremental sync, on a store image
    holding that user (written once by litedav-host into build/office_sync/; a board model's is
    its store flash's size)."""
    from litedav.bench import office_data, office_sync
    user = "user000"
    _, client_s, boot_s = office_sync.timeouts(soc)
    image = office_sync.store_image(1, 200, log=log, size_mib=office_sync.store_size(soc) // office_sync.MIB)
    items = office_data.user_items(user, 200)
    expected = {name: text for name, _, text in items}
    work = os.path.join(office_sync.WORK_DIR, "runs")
    os.makedirs(work, exist_ok=True)
    sim, _ = office_sync.boot(build_dir, image, phy, None,
                              os.path.join(work, f"sim-speed-{soc}-{nic}-{os.getpid()}.flash"), log, boot_s)
    try:
        read_status(sim.port)
        with Window(sim) as w:
            dav = office_sync.Dav(sim.port, user, client_s)
            state = office_sync.initial_sync(dav, user, expected)
            dav.close()
            rewrites, new, deleted = office_sync.changed_items(user, items)
            editor = office_sync.Dav(sim.port, user, client_s)
            office_sync.make_changes(editor, user, state, rewrites, new, deleted)
            editor.close()
            dav = office_sync.Dav(sim.port, user, client_s)
            office_sync.incremental_sync(dav, user, state, rewrites, new, deleted)
            dav.close()
    finally:
        sim.stop()
        os.remove(sim.flash)
    return {**w.figures(), "items": len(items)}


def measure(nic, build_dir, situations, args, log, soc=IDEAL_SOC):
    rows = []
    commit = build_commit(build_dir, args.commit)
    phy = soc_phy(soc)
    for situation in situations:
        log(f"{soc} {nic} ({args.label}, {commit}): {situation} ...")
        if situation == "idle":
            f = measure_idle(build_dir, args.idle_seconds, log, phy)
        elif situation == "ab":
            f = measure_ab(build_dir, args.requests, args.concurrency, log, phy)
        else:
            f = measure_day(build_dir, nic, log, soc, phy)
        row = {"label": args.label, "soc": soc, "nic": nic, "phy": phy, "situation": situation, "commit": commit,
               "build_dir": os.path.relpath(build_dir, TOP) if build_dir.startswith(TOP + os.sep) else
               os.path.basename(build_dir), **f}
        log(f"  {f['mcycles_per_s']:.3f} M cycles/s ({f['sim_cycles']:,} cycles in {f['wall_s']} s, "
            f"load {f['load_before']} -> {f['load_after']}; {f['mcycles_per_cpu_s']} M cycles per CPU s "
            f"of the simulator)")
        rows.append(row)
    return rows


SITUATION_TEXT = {"idle": "idle (booted, nothing connected)", "ab": "`ab -k -c 10` small GETs",
                  "day": "one user's day (office_sync)"}


def markdown(rows):
    lines = [MD_BEGIN, "\n**Simulator speed: simulated sys_clk cycles per wall second** (ideal SoC at "
             "125 MHz and GMII, board models at their own sys_clk and PHY: docs/board_model.md; wall time "
             "of this host, so compare rows measured back to back; load = 1-minute load average "
             "before -> after)\n",
             "| label | SoC | NIC | PHY | situation | M cycles/s | simulated cycles | wall s | frames | host load | "
             "M cycles per simulator CPU s | commit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        extra = f", {r['failed']} failed" if r.get("failed") else ""
        lines.append(f"| {r['label']} | {r.get('soc', IDEAL_SOC)} | {r['nic']} | {r.get('phy', 'gmii')} | "
                     f"{SITUATION_TEXT.get(r['situation'], r['situation'])}{extra} | "
                     f"{r['mcycles_per_s']:.3f} | {r['sim_cycles']:,} | {r['wall_s']} | {r['frames']:,} | "
                     f"{r['load_before']} -> {r['load_after']} | {r.get('mcycles_per_cpu_s') or '-'} | "
                     f"{r['commit']} |")
    lines.append(MD_END)
    return "\n".join(lines) + "\n"


def merge_reports(rows, out):
    """This run's rows replace those of the same label, NIC and situation in latest.json's
    section; the others are kept."""
    import json
    old = []
    path = os.path.join(out, "latest.json")
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict):
            old = data.get(SECTION, {}).get("rows", [])
    key = lambda r: (r["label"], r.get("soc", IDEAL_SOC), r["nic"], r["situation"])  # noqa: E731
    fresh = {key(r) for r in rows}
    merged = [r for r in old if key(r) not in fresh] + rows
    order = {s: i for i, s in enumerate(SITUATIONS)}
    merged.sort(key=lambda r: (r["label"], r.get("soc", IDEAL_SOC) != IDEAL_SOC, r.get("soc", IDEAL_SOC),
                               r["nic"], order.get(r["situation"], 99)))
    return merge_section(out, SECTION, {"rows": merged}, markdown(merged), MD_BEGIN, MD_END)


def parse_build_dirs(values, nics, parser):
    """--build-dir DIR (one NIC) or NIC=DIR ... -> {nic: absolute folder}."""
    dirs = {}
    for v in values or ():
        nic, sep, path = v.partition("=")
        if sep and nic in NICS:
            dirs[nic] = os.path.abspath(path)
        elif len(nics) == 1:
            dirs[nics[0]] = os.path.abspath(v)
        else:
            parser.error(f"--build-dir {v}: with several NICs, give NIC=DIR")
    return dirs


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sim_speed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nic", nargs="+", default=list(NICS), choices=NICS)
    parser.add_argument("--soc", nargs="+", default=[IDEAL_SOC], choices=[IDEAL_SOC, *BOARD_MODEL_PHYS],
                        help="SoCs to measure: the ideal SoC (default) and the board models (docs/board_model.md; "
                             "at their own PHY)")
    parser.add_argument("--build-dir", nargs="+", default=None, metavar="[NIC=]DIR",
                        help="simulator builds to measure, as is (no build step): NIC=DIR per NIC, or DIR "
                             "with one --nic; default: build/sim, build/sim-offload, built first")
    parser.add_argument("--label", default="current", help="names this run's rows (e.g. before, after)")
    parser.add_argument("--commit", default=None,
                        help="the commit the measured builds were made from (default: the build folder's "
                             f"{COMMIT_FILE}, written by litedav-sim build)")
    parser.add_argument("--situations", nargs="+", default=list(SITUATIONS), choices=SITUATIONS)
    parser.add_argument("--no-day", action="store_true",
                        help="skip the user's day (it writes a store image with litedav-host first)")
    parser.add_argument("--idle-seconds", type=float, default=15.0, help="wall seconds of the idle window")
    parser.add_argument("--requests", type=int, default=1000, help="ab -n (default 1000)")
    parser.add_argument("--concurrency", type=int, default=10, help="ab -c (default 10)")
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"),
                        help="folder of latest.json / latest.md to merge into (default bench/results)")
    args = parser.parse_args(argv)
    situations = [s for s in args.situations if not (args.no_day and s == "day")]
    if "ab" in situations and not shutil.which("ab"):
        parser.error("ab (ApacheBench) missing: run `make deps`")
    dirs = parse_build_dirs(args.build_dir, args.nic, parser)

    def log(msg):
        print(f"[sim_speed] {msg}", flush=True)

    if dirs and len(args.soc) > 1:
        parser.error("--build-dir names the builds of one SoC: give one --soc")
    rows = []
    try:
        for soc in args.soc:
            board = None if soc == IDEAL_SOC else soc
            for nic in args.nic:
                build_dir = dirs.get(nic)
                if build_dir is None:
                    build_dir = build(default_build_dir(nic, board=board), nic=nic, board=board)
                rows += measure(nic, build_dir, situations, args, log, soc)
    except BenchError as e:
        sys.exit(f"sim_speed: {e}")
    print(merge_reports(rows, args.out))
    return rows


if __name__ == "__main__":
    main()
