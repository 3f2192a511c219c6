"""Guest instructions per request on the LM3S9B95 port (Cortex-M3) in QEMU's lm3s6965evb.

Boots the QEMU image (firmware/ports/lm3s9b95, the LM3S_QEMU build at 50 MHz) with
`-icount shift=N` and a TCG plugin (bench/qemu_insn_plugin.c, built here with the host's cc),
sets up a calendar with a few events, warms up, then measures per request:

  get_keep_alive       GET /static/task.ics (709 bytes) on one kept-alive connection
  get_new_connection   the same, a new TCP connection per request (handshake and close included)
  propfind_home        PROPFIND Depth 1 /dav/demo/ (Basic auth demo:demo): the home and its calendar
  propfind_calendar    PROPFIND Depth 1 on that calendar: the collection and its events
  report_query         REPORT calendar-query (VEVENT in a time range) on that calendar

Two counts for each (bench/README.md defines them):

  busy instructions    the firmware's own busy cycles (main-loop turns that handled a frame:
                       driver, lwIP, app) from the status page. Under -icount, QEMU's virtual
                       clock advances exactly 2^N ns per executed instruction, so SysTick-based
                       cycles convert to instructions: insns = cycles * (10^9 / sys_clk_hz) / 2^N
                       (5 per cycle at 50 MHz and N=2). The time asleep in WFI is idle.
  all instructions     every instruction the CPU executed in the measured window, counted by
                       the plugin (split into lwIP / app / driver / port / libc by the linker
                       map), including the idle loop's turns on SysTick wake-ups; "net" takes
                       those wake-ups off at the rate measured on the idle guest.

For comparison it then runs the same requests against the host build under valgrind's
callgrind (bench/host_callgrind.py; --no-host skips it).

Checks of the method, written beside the figures: every request is measured N and 2N times in
the same boot (the counts should double), and --runs boots QEMU more than once (guest time is
deterministic, network arrival is not: the counts should agree within a few per cent).

    python3 -m litedav.bench.lm3s_instructions [--out DIR] [--requests N] [--runs R]
                                               [--build-dir DIR | --elf FILE] [--shift N] [--no-host]

Merges into DIR/latest.json (section "lm3s9b95_qemu") and DIR/latest.md (a section between
marker comments), leaving the rest of both files as they were; `make bench` runs it after the
SoC comparison. Without --elf it builds the QEMU image into --build-dir (default
build/lm3s-bench) with `make -C firmware/ports/lm3s9b95 OUT=...`; the plugin goes there too.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from litedav.sim.run import die_with_parent, free_port

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT_DIR = os.path.join(TOP, "firmware", "ports", "lm3s9b95")
PLUGIN_SRC = os.path.join(TOP, "bench", "qemu_insn_plugin.c")
SECTION = "lm3s9b95_qemu"
MD_BEGIN = f"<!-- {SECTION} begin (written by litedav.bench.lm3s_instructions) -->"
MD_END = f"<!-- {SECTION} end -->"
READY = re.compile(r"^listening on http://10\.0\.2\.15:80/")
BOOT_TIMEOUT = 60
HTTP_TIMEOUT = 30
# Wall time left for trailing frames (the peer's ACKs, a closing handshake) before a counter
# read, so each window holds all of its requests' work and nothing of the next.
SETTLE_S = 0.05
IDLE_SAMPLE_S = 0.5
WARMUP = 5
WINDOW_ATTEMPTS = 3

SMALL_PATH = "/static/task.ics"
AUTH = {"Authorization": "Basic ZGVtbzpkZW1v"}  # demo:demo, the demo user (README)
HOME = "/dav/demo/"
CALENDAR = "/dav/demo/bench/"
EVENTS = 3

MKCALENDAR_BODY = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
    '<D:displayname>Bench</D:displayname></D:prop></D:set></C:mkcalendar>')
PROPFIND_BODY = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
    '<D:resourcetype/><D:displayname/><D:getetag/></D:prop></D:propfind>')
REPORT_BODY = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
    '<D:prop><D:getetag/></D:prop><C:filter><C:comp-filter name="VCALENDAR">'
    '<C:comp-filter name="VEVENT"><C:time-range start="20261123T000000Z" end="20261130T000000Z"/>'
    '</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>')


def event(i):
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//bench//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:bench-{i}@litedav\r\nDTSTAMP:20261122T090000Z\r\nDTSTART:2026112{3 + i}T090000Z\r\n"
            f"DTEND:2026112{3 + i}T100000Z\r\nSUMMARY:Bench event {i}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


class BenchError(Exception):
    pass


# --- building -------------------------------------------------------------------------------

def build_image(build_dir, qemu_defs=""):
    """The QEMU variant of the port into build_dir (make is incremental; qemu_defs: extra -D
    flags, kept to a build_dir of their own: make does not rebuild on changed flags)."""
    target = os.path.join(build_dir, "qemu", "litedav.bin")
    out = subprocess.run(["make", "-C", PORT_DIR, "-j2", f"OUT={build_dir}", f"QEMU_DEFS={qemu_defs}", target],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BenchError(f"building the LM3S QEMU image failed:\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return os.path.join(build_dir, "qemu", "litedav.elf")


def build_plugin(build_dir):
    plugin = os.path.join(build_dir, "insn_plugin.so")
    if os.path.exists(plugin) and os.path.getmtime(plugin) >= os.path.getmtime(PLUGIN_SRC):
        return plugin
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BenchError("no host C compiler (cc) to build the QEMU plugin")
    os.makedirs(build_dir, exist_ok=True)
    out = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-shared", "-fPIC",
                          "-o", plugin, PLUGIN_SRC, "-lpthread"], capture_output=True, text=True)
    if out.returncode != 0:
        raise BenchError(f"building the QEMU plugin failed:\n{out.stderr}")
    return plugin


# Object files of the image, by the part of the firmware they belong to.
def code_part(obj):
    if "/lwip/" in obj:
        return "lwip"
    if "/app/" in obj:
        return "app"
    if obj.endswith("stellaris_eth.o"):
        return "driver"
    if "/port/" in obj or "/cortex_m/" in obj:   # The port's own code and the shared Cortex-M3 code.
        return "port"
    if ".a(" in obj:
        return "libc"   # newlib-nano and libgcc
    return "other"


PARTS = ("lwip", "app", "driver", "port", "libc", "other")
TEXT_SECTION = re.compile(r"^ \.text(?:\.(\S+))?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$", re.M)
TOP_FUNCTIONS = int(os.environ.get("LITEDAV_TOP_FUNCTIONS", "8"))


def plugin_regions(elf):
    """The plugin's region/mark lines: every code section of the linker map as PART:FUNCTION
    (-ffunction-sections: a section per function; libgcc's assembly is named after its object),
    the SysTick and Ethernet interrupt entries, and the idle loop's WFI."""
    map_path = os.path.splitext(elf)[0] + ".map"
    with open(map_path) as f:
        text = f.read()
    lines = []
    for function, start, size, obj in TEXT_SECTION.findall(text):
        start, size = int(start, 16), int(size, 16)
        if size and start < 0x20000000:
            name = function or re.sub(r"^.*[(/]|\)$", "", obj)
            lines.append(f"region {code_part(obj)}:{name[:40]} {start:x} {start + size:x}")
    if not lines:
        raise BenchError(f"no code sections found in {map_path}")
    nm = subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True, check=True).stdout
    symbols = {name: int(addr, 16) & ~1 for addr, name in re.findall(r"^([0-9a-f]+) [Tt] (\w+)$", nm, re.M)}
    for mark, symbol in (("systick_irqs", "SysTick_Handler"), ("ethernet_irqs", "Ethernet_Handler")):
        if symbol not in symbols:
            raise BenchError(f"{symbol} not in {elf}")
        lines.append(f"mark {mark} {symbols[symbol]:x}")
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", "--disassemble=cortex_m_idle", elf],
                         capture_output=True, text=True, check=True).stdout
    wfi = re.search(r"^\s*([0-9a-f]+):\s+bf30\s+wfi", dis, re.M)
    if not wfi:
        raise BenchError(f"no WFI found in cortex_m_idle of {elf}")
    lines.append(f"mark wfi_sleeps {wfi.group(1)}")
    return "\n".join(lines) + "\n"


# --- the guest ------------------------------------------------------------------------------

class Guest:
    """qemu-system-arm running the image with -icount and the counting plugin."""

    def __init__(self, elf, plugin, shift, qemu="qemu-system-arm", extra_args=(), cwd=None):
        """extra_args: more QEMU options (bench/lm3s_scale.py: semihosting); cwd: QEMU's
        working directory (where a semihosted store file lives)."""
        self.shift = shift
        self.port = free_port()
        self.tmp = tempfile.mkdtemp(prefix="litedav-insn-")   # short: unix socket paths are limited
        self.sock = os.path.join(self.tmp, "counters.sock")
        regions = os.path.join(self.tmp, "regions.txt")
        with open(regions, "w") as f:
            f.write(plugin_regions(elf))
        cmd = [qemu, "-M", "lm3s6965evb", "-nographic", "-monitor", "none", "-serial", "stdio",
               "-icount", f"shift={shift}", "-kernel", elf,
               "-plugin", f"{plugin},regions={regions},socket={self.sock}",
               "-nic", f"user,id=n0,model=stellaris,hostfwd=tcp:127.0.0.1:{self.port}-10.0.2.15:80",
               *extra_args]
        self.console = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     preexec_fn=die_with_parent, cwd=cwd)
        threading.Thread(target=self._read_console, daemon=True).start()

    def _read_console(self):
        for line in self.proc.stdout:
            self.console.append(line.rstrip("\r\n"))
            if READY.match(self.console[-1]):
                self.ready.set()
        self.ready.set()

    def wait_ready(self):
        if not self.ready.wait(BOOT_TIMEOUT) or self.proc.poll() is not None:
            raise BenchError("the LM3S image did not come up in QEMU:\n" + "\n".join(self.console))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def counters(self):
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.sock)
            data = b""
            while chunk := s.recv(4096):
                data += chunk
        return {name: int(value) for name, value in re.findall(r"^(\S+) (\d+)$", data.decode(), re.M)}

    def connect(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=HTTP_TIMEOUT)

    def status(self):
        conn = self.connect()
        try:
            body = request(conn, "GET", "/", expect=200)
        finally:
            conn.close()
        return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", body.decode(), re.M)}


def request(conn, method, path, body=None, headers=None, expect=200):
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    if r.status != expect:
        raise BenchError(f"{method} {path} answered {r.status} (expected {expect}): {data[:300]!r}")
    return data


def set_up_calendar(guest):
    conn = guest.connect()
    try:
        request(conn, "MKCALENDAR", CALENDAR, MKCALENDAR_BODY,
                {**AUTH, "Content-Type": "application/xml"}, expect=201)
        for i in range(EVENTS):
            request(conn, "PUT", f"{CALENDAR}e{i}.ics", event(i),
                    {**AUTH, "Content-Type": "text/calendar", "If-None-Match": "*"}, expect=201)
    finally:
        conn.close()


# --- the requests ---------------------------------------------------------------------------

def get_small(conn):
    body = request(conn, "GET", SMALL_PATH)
    if b"BEGIN:VTODO" not in body:
        raise BenchError(f"GET {SMALL_PATH}: not the task: {body[:200]!r}")


def propfind_home(conn):
    body = request(conn, "PROPFIND", HOME, PROPFIND_BODY,
                   {**AUTH, "Depth": "1", "Content-Type": "application/xml"}, expect=207)
    if CALENDAR.encode() not in body:
        raise BenchError(f"PROPFIND {HOME} does not list {CALENDAR}: {body[:500]!r}")


def propfind_calendar(conn):
    body = request(conn, "PROPFIND", CALENDAR, PROPFIND_BODY,
                   {**AUTH, "Depth": "1", "Content-Type": "application/xml"}, expect=207)
    if body.count(b".ics</") < EVENTS:
        raise BenchError(f"PROPFIND {CALENDAR} lists fewer than {EVENTS} events: {body[:800]!r}")


def report_query(conn):
    body = request(conn, "REPORT", CALENDAR, REPORT_BODY,
                   {**AUTH, "Depth": "1", "Content-Type": "application/xml"}, expect=207)
    if body.count(b".ics</") < EVENTS:
        raise BenchError(f"REPORT calendar-query on {CALENDAR} matched fewer than {EVENTS} events: "
                         f"{body[:800]!r}")


# name: (what, the request, a new connection per request)
KINDS = {
    "get_keep_alive": (f"small GET {SMALL_PATH}, keep-alive", get_small, False),
    "get_new_connection": (f"small GET {SMALL_PATH}, new connection", get_small, True),
    "propfind_home": (f"PROPFIND Depth 1 {HOME}", propfind_home, False),
    "propfind_calendar": (f"PROPFIND Depth 1 {CALENDAR} ({EVENTS} events)", propfind_calendar, False),
    "report_query": (f"REPORT calendar-query {CALENDAR} ({EVENTS} events)", report_query, False),
}


def run_requests(guest, kind, n, conn):
    _, fn, new_connection = KINDS[kind]
    for _ in range(n):
        if new_connection:
            c = guest.connect()
            try:
                fn(c)
            finally:
                c.close()
        else:
            fn(conn)


def diff(after, before):
    # a function first run inside the window is not in `before` yet: it counted 0 there
    return {k: after[k] - before.get(k, 0) for k in after}


def status_cost(guest):
    """Busy cycles a status read adds to a before/after difference (the end of the first read
    and the start of the second fall inside it), measured as in window() with nothing between."""
    costs = []
    for _ in range(3):
        a = guest.status()
        time.sleep(2 * SETTLE_S)
        b = guest.status()
        costs.append(b["busy_cycles"] - a["busy_cycles"])
    return min(costs)


def idle_rate(guest):
    """Instructions per SysTick wake-up of the idle guest (the interrupt and one main-loop turn)."""
    time.sleep(SETTLE_S)
    a = guest.counters()
    time.sleep(IDLE_SAMPLE_S)
    d = diff(guest.counters(), a)
    if d["systick_irqs"] <= 0:
        raise BenchError("no SysTick interrupt while idle: is the guest running?")
    return d["total"] / d["systick_irqs"]


def window(guest, kind, n):
    """Status page and plugin counters around n requests of one kind."""
    conn = None if KINDS[kind][2] else guest.connect()
    try:
        if conn:
            conn.connect()
        time.sleep(SETTLE_S)
        s0 = guest.status()
        time.sleep(SETTLE_S)
        p0 = guest.counters()
        run_requests(guest, kind, n, conn)
        time.sleep(SETTLE_S)
        p1 = guest.counters()
        s1 = guest.status()
    finally:
        if conn:
            conn.close()
    return diff(s1, s0), diff(p1, p0)


def per_request(status_d, plugin_d, n, cost, idle_per_tick, insns_per_cycle):
    requests = status_d["requests"] - 1   # the second status read is itself a request
    if requests != n:
        raise BenchError(f"the guest counted {requests} requests, {n} were sent")
    busy = status_d["busy_cycles"] - cost
    idle_share = plugin_d["systick_irqs"] * idle_per_tick
    row = {
        "requests": n,
        "busy_instructions": round(busy * insns_per_cycle / n),
        "all_instructions": round(plugin_d["total"] / n),
        "all_instructions_net": round((plugin_d["total"] - idle_share) / n),
        "by_part": {part: round(sum(v for k, v in plugin_d.items() if k.startswith(part + ":")
                                    or (part == "other" and k == "unmapped")) / n)
                    for part in PARTS},
        "top_functions": {k: round(v / n) for k, v in sorted(
            ((k, v) for k, v in plugin_d.items() if ":" in k and v > 0),
            key=lambda kv: -kv[1])[:TOP_FUNCTIONS]},
        "systick_irqs": round(plugin_d["systick_irqs"] / n, 2),
        "ethernet_irqs": round(plugin_d["ethernet_irqs"] / n, 2),
        "wfi_sleeps": round(plugin_d["wfi_sleeps"] / n, 2),
        "frames_in": round(status_d["frames_in"] / n, 2),
        "frames_out": round(status_d["frames_out"] / n, 2),
        "busy_cycles": round(busy / n),
    }
    return row


def checked_window(guest, kind, n, cost, idle_per_tick, insns_per_cycle, hz, log):
    """A window whose two counts agree. The firmware's port_cycles() can read a whole SysTick
    period (1 ms) off when the counter wraps just before it is read and the tick's interrupt
    has not run yet (QEMU raises it a little later); one such read in a main-loop turn moves a
    millisecond between busy and idle. The plugin's count has no such step, so a busy count
    that differs from it by most of a tick, and by more than a few per cent, is measured again."""
    tick_insns = hz / 1000 * insns_per_cycle
    for attempt in range(1, WINDOW_ATTEMPTS + 1):
        row = per_request(*window(guest, kind, n), n, cost, idle_per_tick, insns_per_cycle)
        gap = (row["busy_instructions"] - row["all_instructions_net"]) * n
        if abs(gap) < 0.4 * tick_insns or abs(gap) < 0.02 * row["all_instructions_net"] * n:
            row["attempts"] = attempt
            return row
        log(f"  {kind} x{n}: busy count {gap / tick_insns:+.2f} SysTick periods off the plugin's, "
            "measuring again")
    raise BenchError(f"{kind}: busy cycles and the plugin's count disagreed in {WINDOW_ATTEMPTS} windows")


def measure_run(elf, plugin, shift, n, kinds, log):
    with Guest(elf, plugin, shift) as guest:
        guest.wait_ready()
        set_up_calendar(guest)
        first = guest.status()
        hz = first["sys_clk_hz"]
        insns_per_cycle = 1e9 / hz / 2 ** shift
        for kind in kinds:
            conn = guest.connect()
            try:
                run_requests(guest, kind, WARMUP, conn)
            finally:
                conn.close()
        cost = status_cost(guest)
        idle_per_tick = idle_rate(guest)
        rows = {}
        for kind in kinds:
            single, double = (checked_window(guest, kind, count, cost, idle_per_tick, insns_per_cycle,
                                             hz, log) for count in (n, 2 * n))
            rows[kind] = {
                "what": KINDS[kind][0],
                "n": single,
                "2n": double,
                # totals over 2N requests / over N: 2.0 when the count is per request
                "scaling_busy": round(2 * double["busy_instructions"] / single["busy_instructions"], 3),
                "scaling_all_net": round(2 * double["all_instructions_net"] / single["all_instructions_net"], 3),
            }
            log(f"  {kind}: {double['busy_instructions']} busy, {double['all_instructions']} all "
                f"({double['all_instructions_net']} net of idle ticks) instructions/request")
        if guest.proc.poll() is not None:
            raise BenchError("QEMU exited during the run:\n" + "\n".join(guest.console))
    return {"sys_clk_hz": hz, "insns_per_cycle": insns_per_cycle, "status_read_cycles": cost,
            "idle_instructions_per_tick": round(idle_per_tick, 1), "kinds": rows}


def summarize(runs, shift, n):
    """One figure per request kind: the 2N windows' counts, averaged over the runs, and how
    far the runs were apart."""
    kinds = {}
    for kind in runs[0]["kinds"]:
        per_run = [r["kinds"][kind] for r in runs]
        figures = {}
        for key in ("busy_instructions", "all_instructions", "all_instructions_net"):
            values = [k["2n"][key] for k in per_run]
            figures[key] = round(statistics.mean(values))
            figures[f"{key}_runs"] = values
            figures[f"{key}_spread"] = round(max(values) / min(values) - 1, 4) if min(values) > 0 else None
        figures["by_part"] = {part: round(statistics.mean(k["2n"]["by_part"][part] for k in per_run))
                              for part in PARTS}
        figures["top_functions"] = per_run[0]["2n"]["top_functions"]
        for key in ("frames_in", "frames_out", "systick_irqs", "ethernet_irqs", "wfi_sleeps"):
            figures[key] = round(statistics.mean(k["2n"][key] for k in per_run), 2)
        # windows measured again because port_cycles() read a SysTick period off (checked_window)
        figures["windows_repeated"] = sum(k[w]["attempts"] - 1 for k in per_run for w in ("n", "2n"))
        figures["scaling_busy"] = [k["scaling_busy"] for k in per_run]
        figures["scaling_all_net"] = [k["scaling_all_net"] for k in per_run]
        kinds[kind] = {"what": per_run[0]["what"], **figures}
    return {
        "target": "LM3S9B95 port, QEMU lm3s6965evb (Cortex-M3), LM3S_QEMU build",
        "method": f"qemu-system-arm -icount shift={shift} + TCG instruction-counting plugin",
        "sys_clk_hz": runs[0]["sys_clk_hz"],
        "icount_shift": shift,
        "instructions_per_cycle": runs[0]["insns_per_cycle"],
        "requests": {"n": n, "2n": 2 * n},
        "runs": len(runs),
        "idle_instructions_per_tick": [r["idle_instructions_per_tick"] for r in runs],
        "status_read_cycles": [r["status_read_cycles"] for r in runs],
        "kinds": kinds,
        "raw": runs,
    }


# --- reports --------------------------------------------------------------------------------

def markdown(result):
    lines = [MD_BEGIN, "",
             f"**LM3S9B95 port in QEMU lm3s6965evb (Cortex-M3, {result['sys_clk_hz'] / 1e6:g} MHz "
             f"SysTick clock): guest instructions per request** ({result['method']}; "
             f"{result['requests']['2n']} requests per figure, mean of {result['runs']} run(s); "
             "bench/README.md defines the columns)", "",
             "| request | busy instructions | all instructions (net of idle ticks) | lwIP / app / driver / port / libc "
             "| frames in / out | N→2N scaling (busy) | run spread (busy, all) |",
             "|---|---|---|---|---|---|---|"]
    for k in result["kinds"].values():
        parts = " / ".join(str(k["by_part"][p]) for p in PARTS[:-1])
        spread = ", ".join("-" if k[f"{key}_spread"] is None else f"{100 * k[f'{key}_spread']:.1f} %"
                           for key in ("busy_instructions", "all_instructions_net"))
        lines.append(f"| {k['what']} | {k['busy_instructions']} | {k['all_instructions']} "
                     f"({k['all_instructions_net']}) | {parts} | {k['frames_in']} / {k['frames_out']} "
                     f"| {', '.join(f'{s:.2f}' for s in k['scaling_busy'])} | {spread} |")
    host = result.get("host_callgrind")
    if host:
        lines += ["", f"For comparison, the same requests on the host build ({host['target']}), "
                  "x86-64 instructions per request by source:", "",
                  "| request | app (firmware/app) | lwIP | libc | host port, libslirp, other | all |",
                  "|---|---|---|---|---|---|"]
        for k in host["kinds"].values():
            lines.append(f"| {k['what']} | {k['app']} | {k['lwip']} | {k['libc']} "
                         f"| {k['port']}, {k['slirp']}, {k['other']} | {k['all']} |")
    lines += ["", MD_END]
    return "\n".join(lines) + "\n"


def merge_reports(result, out):
    """Puts the section into out/latest.json and out/latest.md, keeping what else is there
    (the SoC comparison's rows: a list in files older than the "soc" section)."""
    return merge_section(out, SECTION, result, markdown(result), MD_BEGIN, MD_END)


def merge_section(out, section, result, table, md_begin, md_end):
    """result as section `section` of out/latest.json, table (between md_begin and md_end)
    into out/latest.md in place of the old one; other sections are kept."""
    os.makedirs(out, exist_ok=True)
    json_path, md_path = os.path.join(out, "latest.json"), os.path.join(out, "latest.md")
    data = {}
    if os.path.exists(json_path):
        with open(json_path) as f:
            data = json.load(f)
        if isinstance(data, list):
            data = {"soc": data}
    data[section] = result
    with open(json_path + ".tmp", "w") as f:
        json.dump(data, f, indent=2)
    os.replace(json_path + ".tmp", json_path)
    md = ""
    if os.path.exists(md_path):
        with open(md_path) as f:
            md = f.read()
    pattern = re.compile(re.escape(md_begin) + r".*?" + re.escape(md_end) + r"\n?", re.S)
    md = pattern.sub(lambda _: table, md) if pattern.search(md) else md + ("\n" if md else "") + table
    with open(md_path, "w") as f:
        f.write(md)
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(prog="lm3s_instructions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"),
                        help="folder of latest.json / latest.md to merge into (default bench/results)")
    parser.add_argument("--requests", type=int, default=50,
                        help="N: each request kind is measured over N and over 2N requests (default 50)")
    parser.add_argument("--runs", type=int, default=2,
                        help="QEMU boots, to see how far apart runs are (default 2)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS),
                        help="request kinds to measure (default all)")
    parser.add_argument("--build-dir", default=os.path.join(TOP, "build", "lm3s-bench"),
                        help="where the QEMU image is built with make and the plugin is compiled "
                             "(default build/lm3s-bench)")
    parser.add_argument("--elf", help="an already built QEMU image (.elf with its .map beside it): no make")
    parser.add_argument("--shift", type=int, default=2, choices=range(0, 11), metavar="N",
                        help="-icount shift: 2^N ns of guest time per instruction (default 2: 5 "
                             "instructions per 50 MHz cycle)")
    parser.add_argument("--no-host", action="store_true",
                        help="skip the comparison with the host build under valgrind's callgrind "
                             "(bench/host_callgrind.py; builds litedav-host into BUILD_DIR/host)")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.runs < 1:
        parser.error("--requests and --runs must be at least 1")

    def log(msg):
        print(f"[lm3s-bench] {msg}", flush=True)

    try:
        for tool in ("qemu-system-arm", "arm-none-eabi-nm", "arm-none-eabi-objdump"):
            if not shutil.which(tool):
                raise BenchError(f"{tool} missing: run `make deps`")
        build_dir = os.path.abspath(args.build_dir)
        if args.elf:
            elf = os.path.abspath(args.elf)
            if not os.path.exists(elf) or not os.path.exists(os.path.splitext(elf)[0] + ".map"):
                raise BenchError(f"{elf} or its .map file does not exist")
        else:
            log(f"building the QEMU image in {build_dir}")
            elf = build_image(build_dir)
        plugin = build_plugin(build_dir)
        runs = []
        for i in range(args.runs):
            log(f"run {i + 1}/{args.runs}: {args.requests} and {2 * args.requests} requests of each kind")
            runs.append(measure_run(elf, plugin, args.shift, args.requests, args.kinds, log))
        result = summarize(runs, args.shift, args.requests)
        if not args.no_host:
            from litedav.bench import host_callgrind
            log(f"host build under callgrind: {args.requests} requests of each kind")
            result["host_callgrind"] = host_callgrind.measure(build_dir, args.requests, args.kinds, log)
        table = merge_reports(result, args.out)
    except BenchError as e:
        sys.exit(f"lm3s_instructions: {e}")
    print(table)
    log(f"wrote section {SECTION} of latest.json and latest.md in {args.out}")
    return result


if __name__ == "__main__":
    main()
