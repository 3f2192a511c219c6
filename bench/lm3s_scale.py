"""Issue 9's scale scenarios on the LM3S9B95 port (Cortex-M3) in QEMU's lm3s6965evb.

The LiteX SoC's figures come from bench/idle_conns.py and bench/office_sync.py; this runs the
same client logic (imported from them) against the LM3S QEMU image and reports guest
instructions, counted as bench/lm3s_instructions.py does (busy cycles under -icount, and every
instruction by the TCG plugin):

  idle connections  the largest number of idle keep-alive connections the port sustains in its
                    RAM, found by measurement: connections are opened one at a time, each
                    makes one keep-alive GET and stays open, until a new one is not answered
                    within --answer-timeout; then two idle ones are closed and a new connection
                    must be served again. Then, with 0, 10, ... up to that limit less the two
                    the measurement needs (its keep-alive connection and the status read),
                    instructions per keep-alive GET of /static/task.ics (--requests of them).
  user's day        the calendar of bench/office_data.py's user000 (~740-byte meetings and
                    tasks) PUT into the demo user's /dav/demo/cal/ from empty, as many as the
                    store takes: a first boot PUTs until the store refuses, a second loads that
                    many less --day-margin (room for the changes) and runs office_sync's
                    initial sync (PROPFIND Depth 1, then calendar-multiget, in as many REPORTs as
                    the build's 1.5 KiB XML body limit needs) and, after another client's 10
                    changes, its incremental sync (sync-collection + multiget of the changes).

The image is the QEMU build with LM3S_QEMU_SEMIHOST_STORE (built into --build-dir): the store
is a host file with the real chip's internal-flash geometry (128 KiB, 1 KiB erase blocks,
firmware/ports/lm3s9b95/semihost_flash.c), so what fits is what fits on the chip. Times are
derived, not measured: CPU time at the real chip's 80 MHz at one instruction per cycle (a
lower bound: flash wait states and stalls come on top), wire time of the frames at 100 Mbit/s.

    python3 -m litedav.bench.lm3s_scale [--out DIR] [--requests N] [--counts ...] [--items N]

Merges section "lm3s9b95_scale" into DIR/latest.json and latest.md (default bench/results).
tests/test_bench_lm3s_scale.py runs it on a small size.
"""

import argparse
import base64
import json
import os
import shutil
import socket
import sys
import tempfile
import time

from litedav.bench import idle_conns, lm3s_instructions as li, office_data, office_sync

SECTION = "lm3s9b95_scale"
MD_BEGIN = f"<!-- {SECTION} begin (written by litedav.bench.lm3s_scale) -->"
MD_END = f"<!-- {SECTION} end -->"
QEMU_DEFS = "-DLM3S_QEMU_SEMIHOST_STORE -DLM3S_TCP_PCBS=40"
SEMIHOSTING = ["-semihosting-config", "enable=on,target=native"]
CHIP_STORE_KIB = 128    # the chip's store: the upper half of its internal flash (lm3s9b95.ld)
CHIP_HZ = 80_000_000     # the LM3S9B95's clock (firmware/ports/lm3s9b95/lm3s_port.h)
LINK_BPS = 100_000_000   # its built-in 10/100 PHY
WIRE_OVERHEAD = 24       # preamble + SFD, FCS, inter-frame gap, per frame
DATA_USER = "user000"    # whose office_data items are loaded
USER = "demo"            # the LM3S build's compiled-in user (firmware/users.conf)
DEMO_AUTH = "Basic " + base64.b64encode(b"demo:demo").decode()
CAL = office_sync.calendar_path(USER)
XML_BODY_ROOM = 1536 - 300   # DAV_XML_MAX (app_port_config.h) less the multiget's own XML
HTTP_TIMEOUT = 60
BOOT_TIMEOUT = 60


class BenchError(Exception):
    pass


def log(msg):
    print(f"[lm3s-scale] {msg}", flush=True)


class Board:
    """One QEMU boot of the semihosted-store image with a fresh store, and what the
    measurement needs from it: clock, the status read's own cost, idle instructions per tick."""

    def __init__(self, elf, plugin, shift):
        self.store_dir = tempfile.mkdtemp(prefix="litedav-lm3s-store-")
        self.guest = li.Guest(elf, plugin, shift, extra_args=SEMIHOSTING, cwd=self.store_dir)
        try:
            self.guest.wait_ready()
            store = next((line for line in self.guest.console if line.startswith("store:")), "")
            if "host file" not in store or "objects" not in store:
                raise BenchError(f"the store did not mount on the host file: {store!r}\n"
                                 + "\n".join(self.guest.console))
            self.store_line = store
            st = self.guest.status()
            self.hz = st["sys_clk_hz"]
            self.insns_per_cycle = 1e9 / self.hz / 2 ** shift
            self.port = self.guest.port
        except BaseException:
            self.stop()
            raise

    def calibrate(self):
        self.cost = li.status_cost(self.guest)
        self.idle_per_tick = li.idle_rate(self.guest)

    def stop(self):
        self.guest.stop()
        shutil.rmtree(self.store_dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def measured(self, fn):
        """Status page and plugin counters around fn(): busy and all instructions, frames and
        bytes (the status read's own share taken off), and fn's result."""
        time.sleep(li.SETTLE_S)
        s0 = self.guest.status()
        time.sleep(li.SETTLE_S)
        p0 = self.guest.counters()
        value = fn()
        time.sleep(li.SETTLE_S)
        p1 = self.guest.counters()
        s1 = self.guest.status()
        s, p = li.diff(s1, s0), li.diff(p1, p0)
        busy = s["busy_cycles"] - self.cost
        row = {"busy_instructions": round(busy * self.insns_per_cycle),
               "all_instructions": p["total"],
               "all_instructions_net": round(p["total"] - p["systick_irqs"] * self.idle_per_tick),
               "requests": s["requests"] - 1,   # the second status read is a request too
               "frames_in": s["frames_in"], "frames_out": s["frames_out"],
               "bytes_in": s["bytes_in"], "bytes_out": s["bytes_out"],
               "rx_dropped": s["rx_dropped"],
               # the plugin's split by the linker map (lm3s_instructions.code_part) and the leaders
               "by_part": {part: sum(v for k, v in p.items() if k.startswith(part + ":")) for part in li.PARTS},
               "top_functions": dict(sorted(((k, v) for k, v in p.items() if ":" in k and v > 0),
                                            key=lambda kv: -kv[1])[:li.TOP_FUNCTIONS])}
        row["cpu_ms_at_80mhz"] = round(row["busy_instructions"] / CHIP_HZ * 1e3, 3)
        wire = max(s["bytes_in"] + WIRE_OVERHEAD * s["frames_in"],
                   s["bytes_out"] + WIRE_OVERHEAD * s["frames_out"])
        row["wire_ms_at_100mbps"] = round(wire * 8 / LINK_BPS * 1e3, 3)
        return row, value


def agree(row, tolerance=0.02):
    """Busy instructions (icount) against the plugin's net count, as a fraction apart."""
    net = row["all_instructions_net"]
    return round(row["busy_instructions"] / net - 1, 4) if net else None


# --- idle connections ------------------------------------------------------------------------

def served(port):
    """A new connection's GET of the small file is answered correctly."""
    with socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT) as s:
        status, body = idle_conns.get(s)
    return status == 200 and b"BEGIN:VTODO" in body


def find_limit(board, max_conns, answer_timeout):
    """Open idle keep-alive connections one at a time until one is not answered within
    answer_timeout (or max_conns are open): how many were, what the status page said once two
    had been closed again, and whether a new request was then served."""
    socks, stopped = [], None
    try:
        while len(socks) < max_conns:
            try:
                socks += idle_conns.open_idle(board.port, 1, timeout=answer_timeout, wave=1)
            except (OSError, ConnectionError) as e:   # open_idle closed the unanswered one
                stopped = f"{type(e).__name__}: {e}"
                break
        limit = len(socks)
        open_before = sum(idle_conns.still_open(s) for s in socks)
        log(f"limit: {limit} idle connections open, the next one {'not answered' if stopped else 'not tried'}"
            f" ({stopped or f'--max-conns {max_conns}'})")
        closed = idle_conns.close_in_waves(socks[:2], wave=2, timeout=HTTP_TIMEOUT)
        socks = socks[2:]
        time.sleep(0.5)
        ok = served(board.port)
        st = board.guest.status()
        result = {"idle_connections_max": limit, "next_connection": stopped or "not tried",
                   "still_open_at_limit": open_before, "closes_failed": closed,
                   "new_request_served_after_two_closed": ok,
                   "status_after": {k: st.get(k) for k in (
                       "tcp_pcbs_limit", "tcp_pcbs_used", "tcp_established", "conns_idle", "conns_open",
                       "syn_held", "syn_held_total", "syn_expired", "heap_used", "heap_max", "heap_err",
                       "conns_timed_out")}}
    finally:
        idle_conns.close_in_waves(socks, timeout=HTTP_TIMEOUT)
    pcbs = result["status_after"]["tcp_pcbs_limit"]
    if stopped and limit == pcbs:
        result["limited_by"] = (f"MEMP_NUM_TCP_PCB ({pcbs} PCBs, lwipopts.h): the next SYN waits in the "
                                "SYN queue until a PCB frees (syn_held_total counts it)")
    elif stopped:
        result["limited_by"] = f"not the PCB pool ({limit} of {pcbs} PCBs): see status_after"
    else:
        result["limited_by"] = "not reached"
    return result


def idle_step(board, count, requests):
    """count idle keep-alive connections (freshly opened: the server closes idle ones after
    IDLE_TIMEOUT_POLLS), then instructions per keep-alive GET on another connection."""
    socks = idle_conns.open_idle(board.port, count, timeout=HTTP_TIMEOUT, wave=1)
    try:
        # idle clients give their HTTP state back after two quiet polls (httpd.c on_poll)
        idle_conns.wait_status(board.port, lambda s: s["conns_open"] <= 1, 60, poll_s=0.2)
        row = li.checked_window(board.guest, "get_keep_alive", requests, board.cost, board.idle_per_tick,
                                board.insns_per_cycle, board.hz, log)
        st = board.guest.status()
        row = {"idle_connections": count, **row, "conns_idle": st["conns_idle"],
               "tcp_pcbs_used": st["tcp_pcbs_used"], "heap_used": st["heap_used"],
               "idle_closed_by_server": sum(not idle_conns.still_open(s) for s in socks)}
    finally:
        idle_conns.close_in_waves(socks, timeout=HTTP_TIMEOUT)
    log(f"{count} idle: {row['busy_instructions']} busy / {row['all_instructions_net']} net instructions per "
        f"keep-alive GET ({row['idle_closed_by_server']} idle closed by the server)")
    return row


def measure_idle(elf, plugin, shift, counts, requests, max_conns, answer_timeout):
    with Board(elf, plugin, shift) as board:
        board.calibrate()
        li.run_requests(board.guest, "get_keep_alive", li.WARMUP, board.guest.connect())
        limit = find_limit(board, max_conns, answer_timeout)
        room = limit["idle_connections_max"] - 2   # the measuring connection and the status read
        if counts is None:
            counts = sorted({c for c in (0, 10, 100, 1000) if c <= room} | {room})
        if max(counts) > room:
            raise BenchError(f"--counts {max(counts)}: at most {room} idle connections leave room to measure")
        rows = [idle_step(board, c, requests) for c in sorted(counts)]
    base = rows[0]["busy_instructions"] if rows[0]["idle_connections"] == 0 else None
    for r in rows:
        r["vs_no_idle"] = round(r["busy_instructions"] / base, 4) if base else None
    return {"sys_clk_hz": board.hz, "requests": requests, "limit": limit, "rows": rows}


# --- one user's day --------------------------------------------------------------------------

def dav_client(port):
    """office_sync's client as the LM3S build's demo user."""
    dav = office_sync.Dav(port, USER, timeout=HTTP_TIMEOUT)
    dav.auth = DEMO_AUTH
    return dav


def make_calendar(dav):
    status, _, body = dav("MKCALENDAR", CAL)
    if status != 201:
        raise BenchError(f"MKCALENDAR {CAL}: {status} {body[:200]!r}")


def put_items(dav, items, stop_on_refusal=False):
    """PUT the items in order; returns how many were stored and, if one was refused, its answer."""
    for i, (name, _, text) in enumerate(items):
        status, _, body = dav("PUT", CAL + name, text, {"Content-Type": "text/calendar", "If-None-Match": "*"})
        if status != 201:
            refusal = f"PUT #{i + 1}: {status} {body[:120].decode(errors='replace')!r}"
            if stop_on_refusal:
                return i, refusal
            raise BenchError(refusal)
    return len(items), None


def capacity(elf, plugin, shift, most):
    """How many of the user's items the store takes before it refuses a PUT."""
    items = office_data.user_items(DATA_USER, most)
    with Board(elf, plugin, shift) as board:
        dav = dav_client(board.port)
        make_calendar(dav)
        stored, refusal = put_items(dav, items, stop_on_refusal=True)
        dav.close()
        st = board.guest.status()
    log(f"store capacity: {stored} items ({sum(len(t) for _, _, t in items[:stored]):,} bytes of iCalendar); "
        f"then {refusal or f'--items-max {most} reached'}")
    return stored, refusal, {k: st.get(k) for k in ("heap_used", "heap_max", "heap_err")}


def chunked_initial_sync(dav, expected):
    """office_sync.initial_sync, with the calendar-multiget split into REPORTs that fit the
    build's XML body limit (DAV_XML_MAX): the client state and the number of REPORTs."""
    token, members = office_sync.propfind_members(dav, CAL)
    want = {CAL + name for name in expected}
    if set(members) != want:
        raise BenchError(f"PROPFIND {CAL}: {len(members)} members, expected {len(want)}")
    hrefs = sorted(members)
    per_report = max(1, XML_BODY_ROOM // (len(hrefs[0]) + len("<D:href></D:href>")))
    items, reports = {}, 0
    for i in range(0, len(hrefs), per_report):
        items.update(office_sync.multiget(dav, CAL, hrefs[i:i + per_report]))
        reports += 1
    for href, (etag, data) in items.items():
        if etag != members[href] or data != expected[href[len(CAL):]]:
            raise BenchError(f"{href}: multiget answer differs from PROPFIND's ETag or the stored item")
    return {"token": token, "items": items}, reports, per_report


def measure_day(elf, plugin, shift, n_items):
    items = office_data.user_items(DATA_USER, n_items)
    expected = {name: text for name, _, text in items}
    with Board(elf, plugin, shift) as board:
        dav = dav_client(board.port)
        make_calendar(dav)
        put_items(dav, items)
        dav.close()
        board.calibrate()

        def initial():
            d = dav_client(board.port)
            try:
                return chunked_initial_sync(d, expected)
            finally:
                d.close()
        day, (state, reports, per_report) = board.measured(initial)
        rewrites, new, deleted = office_sync.changed_items(DATA_USER, items)
        editor = dav_client(board.port)
        office_sync.make_changes(editor, USER, state, rewrites, new, deleted)
        editor.close()

        def incremental():
            d = dav_client(board.port)
            try:
                return office_sync.incremental_sync(d, USER, state, rewrites, new, deleted)
            finally:
                d.close()
        incr, reported = board.measured(incremental)
        st = board.guest.status()
    day.update(items=n_items, ical_bytes=sum(len(t) for t in expected.values()), multiget_reports=reports,
               hrefs_per_report=per_report, agreement=agree(day))
    incr.update(changes=office_sync.CHANGES, hrefs_reported=reported, agreement=agree(incr))
    log(f"user's day of {n_items} items: {day['busy_instructions']:,} busy instructions "
        f"({day['cpu_ms_at_80mhz']} ms at 80 MHz), incremental {incr['busy_instructions']:,}")
    return {"sys_clk_hz": board.hz, "store": board.store_line, "initial": day, "incremental": incr,
            "heap_max": st.get("heap_max")}


# --- report ----------------------------------------------------------------------------------

def markdown(result):
    lines = [MD_BEGIN, "", "**LM3S9B95 port in QEMU lm3s6965evb: issue 9's scale scenarios** "
             f"(guest instructions, {result['method']}; CPU time derived at the chip's 80 MHz and one "
             "instruction per cycle, a lower bound; bench/README.md)", ""]
    idle = result.get("idle_connections")
    if idle:
        lim = idle["limit"]
        lines += [f"Idle keep-alive connections sustained: **{lim['idle_connections_max']}** "
                  f"({lim['limited_by']}); a new request served after two closed: "
                  f"{'yes' if lim['new_request_served_after_two_closed'] else 'NO'}.", "",
                  "| idle connections | busy instructions / keep-alive GET | all (net of idle ticks) | vs 0 idle "
                  "| idle ones the server closed |", "|---|---|---|---|---|"]
        for r in idle["rows"]:
            vs = f"{(r['vs_no_idle'] - 1) * 100:+.1f}%" if r["vs_no_idle"] else "-"
            lines.append(f"| {r['idle_connections']} | {r['busy_instructions']:,} | {r['all_instructions']:,} "
                         f"({r['all_instructions_net']:,}) | {vs} | {r['idle_closed_by_server']} |")
        lines.append("")
    for key in sorted(k for k in result if k.startswith("users_day")):
        day = result[key]
        cap = day.get("capacity")
        kib = day.get("store_kib", 128)
        i, n = day["initial"], day["incremental"]
        if kib == 128:
            note = (f"**not 200 items**: the 128 KiB internal-flash store took {cap['items']} of them "
                    f"({cap['refusal']}); the day is {i['items']} items, leaving room for the changes"
                    if cap and cap["items"] < 200 else f"{i['items']} items")
        else:
            note = (f"{i['items']} items on a {kib} KiB store: more than the chip's 128 KiB of internal "
                    "flash, as an external SPI flash would give (its SPI transfers are not counted: the "
                    "store is a host file here)")
        lines += [f"One user's day ({note}; {i['ical_bytes']:,} bytes of iCalendar):", "",
                  "| scenario | busy instructions | all (net) | CPU ms at 80 MHz | wire ms at 100 Mbit/s "
                  "| requests | bytes in / out |", "|---|---|---|---|---|---|---|"]
        for name, r in ((f"user's day from empty: PROPFIND Depth 1 + calendar-multiget of {i['items']} "
                         f"items in {i['multiget_reports']} REPORTs", i),
                        (f"incremental sync after {n['changes']} changes (sync-collection, "
                         f"{n['hrefs_reported']} hrefs, + multiget)", n)):
            lines.append(f"| {name} | {r['busy_instructions']:,} | {r['all_instructions_net']:,} | "
                         f"{r['cpu_ms_at_80mhz']} | {r['wire_ms_at_100mbps']} | {r['requests']} | "
                         f"{r['bytes_in']:,} / {r['bytes_out']:,} |")
        parts = " / ".join(f"{100 * i['by_part'][p] / max(1, i['all_instructions']):.0f}%" for p in li.PARTS[:-1])
        top = ", ".join(f"{k.split(':', 1)[1]} {v / i['all_instructions']:.0%}" for k, v in
                        list(i["top_functions"].items())[:5])
        lines += ["", f"The day's instructions by part (lwIP / app / driver / port / libc): {parts}; "
                  f"leading functions: {top}.", ""]
    lines.append(MD_END)
    return "\n".join(lines) + "\n"


def previous(out):
    """This section's parts from an earlier run in out/latest.json, if any."""
    try:
        with open(os.path.join(out, "latest.json")) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    old = data.get(SECTION) if isinstance(data, dict) else None
    return {k: v for k, v in (old or {}).items()
            if k in ("idle_connections", "target") or k.startswith("users_day")}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="lm3s_scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(li.TOP, "bench", "results"))
    parser.add_argument("--build-dir",
                        help="where the semihosted-store QEMU image and the plugin are built (default "
                             "build/lm3s-scale, build/lm3s-scale-<KIB>k with --store-kib)")
    parser.add_argument("--store-kib", type=int, default=CHIP_STORE_KIB,
                        help="the store's size (default 128, the chip's internal-flash store); another size "
                             "is reported as its own day (section key users_day_store_<KIB>k), as an "
                             "external flash would give")
    parser.add_argument("--shift", type=int, default=2, choices=range(0, 11), metavar="N")
    parser.add_argument("--requests", type=int, default=100, help="keep-alive GETs per idle step")
    parser.add_argument("--counts", type=int, nargs="+",
                        help="idle connections to measure at (default 0, 10, 100, 1000 up to the limit "
                             "found, and the limit less two)")
    parser.add_argument("--max-conns", type=int, default=400,
                        help="stop the limit search here if the server still answers")
    parser.add_argument("--answer-timeout", type=float, default=10.0,
                        help="wall seconds a new idle connection's GET may take before the limit is reached")
    parser.add_argument("--items", type=int,
                        help="the day's items (default: what the store takes less --day-margin)")
    parser.add_argument("--items-max", type=int, default=200, help="the capacity search stops here")
    parser.add_argument("--day-margin", type=int, default=office_sync.CHANGES,
                        help="items left out of the day below the store's capacity, room for the changes")
    parser.add_argument("--no-idle", action="store_true")
    parser.add_argument("--no-day", action="store_true")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.max_conns < 3 or (args.counts and min(args.counts) < 0):
        parser.error("--requests >= 1, --max-conns >= 3, --counts >= 0")
    if args.store_kib < 16 or args.no_day and args.store_kib != CHIP_STORE_KIB:
        parser.error("--store-kib: at least 16, and for the day only")
    if args.items is not None and args.items < office_sync.CHANGES:
        parser.error(f"--items: at least {office_sync.CHANGES} (the incremental sync's changes)")
    try:
        for tool in ("qemu-system-arm", "arm-none-eabi-nm", "arm-none-eabi-objdump"):
            if not shutil.which(tool):
                raise BenchError(f"{tool} missing: run `make deps`")
        defs = QEMU_DEFS
        if args.store_kib != CHIP_STORE_KIB:
            defs += f" -DSEMIHOST_STORE_BYTES={args.store_kib * 1024}u"
        build_dir = os.path.abspath(args.build_dir or os.path.join(
            li.TOP, "build", "lm3s-scale" + ("" if args.store_kib == CHIP_STORE_KIB else f"-{args.store_kib}k")))
        log(f"building the semihosted-store QEMU image in {build_dir}")
        elf = li.build_image(build_dir, defs)
        plugin = li.build_plugin(build_dir)
        result = {"target": "LM3S9B95 port, QEMU lm3s6965evb (Cortex-M3), LM3S_QEMU build with "
                            "LM3S_QEMU_SEMIHOST_STORE (128 KiB store, the chip's flash geometry)",
                  "method": f"qemu-system-arm -icount shift={args.shift} + TCG instruction-counting plugin",
                  "icount_shift": args.shift, "chip_hz": CHIP_HZ, "link_bps": LINK_BPS}
        if not args.no_idle:
            log("idle connections")
            result["idle_connections"] = measure_idle(elf, plugin, args.shift, args.counts, args.requests,
                                                      args.max_conns, args.answer_timeout)
        if not args.no_day:
            cap = None
            n = args.items
            if n is None:
                stored, refusal, heap = capacity(elf, plugin, args.shift, args.items_max)
                cap = {"items": stored, "refusal": refusal, "heap": heap}
                n = stored - args.day_margin if refusal else stored
                if n < office_sync.CHANGES:
                    raise BenchError(f"the store took only {stored} items")
            key = "users_day" if args.store_kib == CHIP_STORE_KIB else f"users_day_store_{args.store_kib}k"
            result[key] = {"capacity": cap, "store_kib": args.store_kib,
                           **measure_day(elf, plugin, args.shift, n)}
        if args.store_kib != CHIP_STORE_KIB:
            result.pop("target")   # the section's header stays the chip-sized run's
        result = {**previous(args.out), **result}   # a run of one part keeps the other's figures
        table = li.merge_section(args.out, SECTION, result, markdown(result), MD_BEGIN, MD_END)
    except (BenchError, li.BenchError, office_sync.BenchError) as e:
        sys.exit(f"lm3s_scale: {e}")
    print(table)
    return result


if __name__ == "__main__":
    main()
