"""For comparison with the LM3S figures: the same requests against the host build
(firmware/ports/host, litedav-host: the same app and lwIP, x86-64, gcc -O2, libslirp in-process)
under valgrind's callgrind, which counts every executed x86-64 instruction (Ir) per function.

For each request kind: `callgrind_control --zero`, N requests, `callgrind_control --dump`, and the
dump's self costs summed by source: firmware/app (the application layer), lwIP, the host port,
libc, libslirp (standing in for the wire) and other. Only the app and lwIP columns are
comparable with the Cortex-M3 build, and only roughly (another instruction set, -O2 against -Os,
glibc's string functions against newlib-nano's).

Run by `python3 -m litedav.bench.lm3s_instructions` (unless --no-host): written into its section
of latest.json under "host_callgrind" and as a second table in latest.md.
"""

import http.client
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

from litedav.bench.lm3s_instructions import (KINDS, SETTLE_S, TOP, WARMUP, BenchError, run_requests,
                                             set_up_calendar)
from litedav.sim.run import die_with_parent, free_port

HOST_DIR = os.path.join(TOP, "firmware", "ports", "host")
READY = re.compile(r"LiteDAV is serving at http://127\.0\.0\.1:\d+/")
BOOT_TIMEOUT = 120   # valgrind's start-up and translation are slow
HOST_PARTS = ("app", "lwip", "port", "libc", "slirp", "other")
TOP_FUNCTIONS = 8


def build_host(build_dir):
    out_dir = os.path.join(build_dir, "host")
    out = subprocess.run(["make", "-C", HOST_DIR, "-j2", "server", "SANITIZE=0", f"OUT={out_dir}"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BenchError(f"building litedav-host failed:\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return os.path.join(out_dir, "litedav-host")


def host_part(path, obj):
    if "/firmware/app/" in path:
        return "app"
    if "/lwip/" in path:
        return "lwip"
    if "/firmware/ports/" in path or "/gen/static_data" in path:
        return "port"
    if "/libc.so" in obj or "/libm.so" in obj or "/ld-linux" in obj:
        return "libc"
    if "libslirp" in obj or "libglib" in obj:
        return "slirp"
    return "other"


def self_costs(dump):
    """Self instruction counts (Ir) by part, and by PART:FUNCTION, from a callgrind dump: cost
    lines belong to the current fn= (in the file of the last fl=, fi= or fe=) unless they follow
    a calls= line (then they are the callee's inclusive cost)."""
    # callgrind's name compression: "(id) name" the first time, "(id)" after; one table for
    # objects (ob=, cob=), one for files (fl=, fi=, fe=, cfi=, cfl=), one for functions (fn=, cfn=)
    tables = {"ob": {}, "cob": "ob", "fl": {}, "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
              "fn": {}, "cfn": "fn"}
    totals = dict.fromkeys(HOST_PARTS, 0)
    functions = {}
    obj = file = function = ""
    part = "other"
    after_call = False

    def name(key, spec):
        names = tables[key] if isinstance(tables[key], dict) else tables[tables[key]]
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "")

    with open(dump) as f:
        for line in f:
            if line[0].isdigit() or line[0] in "+-*":
                if after_call:
                    after_call = False
                else:
                    cost = int(line.split()[-1])
                    totals[part] += cost
                    key = f"{part}:{function}"
                    functions[key] = functions.get(key, 0) + cost
            elif line.startswith("calls="):
                after_call = True
            elif "=" in line and line.split("=", 1)[0] in tables:
                key, spec = line.rstrip("\n").split("=", 1)
                value = name(key, spec.strip())
                if key == "ob":
                    obj = value
                elif key == "fl":
                    file = value
                elif key in ("fi", "fe"):
                    part = host_part(value, obj)
                elif key == "fn":
                    function = value
                    part = host_part(file, obj)
    return totals, functions


class HostServer:
    """litedav-host under callgrind, collecting from the start."""

    def __init__(self, binary):
        self.port = free_port()
        self.tmp = tempfile.mkdtemp(prefix="litedav-cg-")
        self.out = os.path.join(self.tmp, "callgrind.out")
        self.console = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.out}", binary,
             "--port", str(self.port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            errors="replace", preexec_fn=die_with_parent)
        threading.Thread(target=self._read_console, daemon=True).start()

    def _read_console(self):
        for line in self.proc.stdout:
            self.console.append(line.rstrip("\n"))
            if READY.search(line):
                self.ready.set()
        self.ready.set()

    def __enter__(self):
        if not self.ready.wait(BOOT_TIMEOUT) or self.proc.poll() is not None:
            self.stop()
            raise BenchError("litedav-host did not come up under callgrind:\n" + "\n".join(self.console))
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def control(self, *args):
        out = subprocess.run(["callgrind_control", *args, str(self.proc.pid)], capture_output=True, text=True)
        if out.returncode != 0 or "OK" not in out.stdout:
            raise BenchError(f"callgrind_control {' '.join(args)} failed: {out.stdout}{out.stderr}")

    def window(self, kind, n):
        """Self costs by part over n requests of one kind."""
        conn = None if KINDS[kind][2] else self.connect()
        try:
            if conn:
                conn.connect()
            time.sleep(SETTLE_S)
            self.control("--zero")
            run_requests(self, kind, n, conn)
            time.sleep(SETTLE_S)
            before = set(os.listdir(self.tmp))
            self.control("--dump")
        finally:
            if conn:
                conn.close()
        dumps = sorted(set(os.listdir(self.tmp)) - before)
        if not dumps:
            raise BenchError("callgrind wrote no dump")
        return self_costs(os.path.join(self.tmp, dumps[-1]))


def measure(build_dir, n, kinds, log):
    """Instructions per request on the host build, by part, over n requests of each kind."""
    for tool in ("valgrind", "callgrind_control"):
        if not shutil.which(tool):
            raise BenchError(f"{tool} missing (Debian package valgrind): run `make deps`, or pass --no-host")
    binary = build_host(build_dir)
    rows = {}
    with HostServer(binary) as host:
        set_up_calendar(host)
        for kind in kinds:
            conn = host.connect()
            try:
                run_requests(host, kind, WARMUP, conn)
            finally:
                conn.close()
        for kind in kinds:
            costs, functions = host.window(kind, n)
            top = sorted(functions.items(), key=lambda kv: -kv[1])[:TOP_FUNCTIONS]
            rows[kind] = {"what": KINDS[kind][0], "requests": n,
                          **{part: round(costs[part] / n) for part in HOST_PARTS},
                          "all": round(sum(costs.values()) / n),
                          "top_functions": {k: round(v / n) for k, v in top}}
            log(f"  host {kind}: {rows[kind]['app']} app, {rows[kind]['lwip']} lwIP, "
                f"{rows[kind]['all']} all x86-64 instructions/request")
    return {"target": "litedav-host (x86-64, gcc -O2, libslirp in-process) under valgrind callgrind",
            "kinds": rows}
