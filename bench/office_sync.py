"""Office calendar sync on the simulated SoC (issue 9): one user's day and the whole office.

The data are bench/office_data.py's: users user000.. with 200 items each (about 60 % meetings,
40 % tasks, ~740 bytes of iCalendar apiece). The store is preloaded on the host, not through
PUTs in the simulator: litedav-host (firmware/ports/host, the same app and store code), built
with the LiteX port's index size, writes them into a store file of the SoC's store device (4 KiB
erase blocks, 256-byte pages; `--store-size`): the ideal SoC's sim flash, 16 MiB, or a board
model's store flash, the Pmod's 32 MiB MT25QL256 (docs/board_model.md). The simulated SoC boots
with a copy of that file as that device's image (`litedav-sim run --flash FILE`); its console's
`store: on flash` and `store check: ok` cover it. Images are kept in build/office_sync/ and
written again only when their parameters (size included) or the store's code change.

Scenarios, each a client with an empty cache, as a CalDAV client syncs:

  user's day     a new connection; PROPFIND Depth 1 on the user's calendar (DAV:getetag of every
                 member, the collection's DAV:sync-token), then one calendar-multiget REPORT of
                 every href with getetag and calendar-data; every body is compared with the data.
                 Then another client makes 10 changes (7 rewrites, 2 new items, 1 delete) and
                 the first syncs incrementally on a new connection: sync-collection (RFC 6578)
                 with its token, then calendar-multiget of what changed.
  office         N clients at once (default 100, one per user, each on its own connection,
                 opened beforehand in waves the SoC absorbs): each syncs its user's calendar
                 from empty as above; every body is compared with the data.

Figures, all simulated: time from the pcap (stamps in simulated time: cycles / sys_clk), from
the scenario's first frame into the SoC (the SYN; for the office's connections, opened
and warmed up with OPTIONS beforehand, their PROPFIND) to the last frame of its last response out of it; `client gaps` is the time the
host client took between a response's end and its next request (Python parsing the answer,
no work of the SoC); bytes on the wire count every frame of the scenario's connections both
ways with preamble, padding to 60, FCS and inter-frame gap; CPU busy cycles from the status
page (busy = main-loop turns that did work), a status read's own cost subtracted.

    python3 -m litedav.bench.office_sync [--users 100] [--clients 100] [--nic liteeth] [--out DIR]
                                         [--soc ideal|colorlight_i5]

Writes section "office_sync" of DIR/latest.json and latest.md (default bench/results/); a board
model (--soc colorlight_i5: its own NIC, the offload NIC, and PHY, MII, unless --phy; figures at
its own sys_clk, 75 MHz) has its own section, "office_sync_colorlight_i5". A run of one scenario
keeps the other scenario's figures of the same SoC, NIC and PHY, and every other SoC's section.
tests/test_office_sync.py runs the scenarios' client logic and the board model's 32 MiB image
against litedav-host.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from litedav.bench import idle_conns, office_data
from litedav.bench.lm3s_instructions import merge_section
from litedav.bench.pcap_flows import METHODS, Flow, Segment, server_frames
from litedav.sim.config import BOARD_MODEL_NICS, BOARD_MODEL_PHYS, DEFAULT_FLASH_SIZE, IDEAL_SOC, STORE_FLASH_SIZE

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SECTION = "office_sync"
MD_BEGIN = f"<!-- {SECTION} begin (written by litedav.bench.office_sync) -->"
MD_END = f"<!-- {SECTION} end -->"
HOST_DIR = os.path.join(TOP, "firmware", "ports", "host")
WORK_DIR = os.path.join(TOP, "build", "office_sync")
PHY_MBPS = {"gmii": 1000, "mii": 100}
# The LiteX port's store index (firmware/ports/litex/app_port_config.h): the host build that
# writes the images holds as many objects as the SoC that reads them.
LITEX_INDEX_SLOTS = 32768
# Frames on the wire: preamble + SFD (8), FCS (4), inter-frame gap (12); padded to 60 bytes.
WIRE_OVERHEAD = 24
MIN_FRAME = 60
CALENDAR = "cal"
CHANGES = 10
NS = {"D": "DAV:", "C": "urn:ietf:params:xml:ns:caldav"}
READY = re.compile(r"LiteDAV is serving at")
MIB = 1024 * 1024
# The device each SoC keeps the calendars on, whose size a store image must have exactly (an
# image of another size is refused, never resized): the ideal SoC's sim flash and the board
# models' store flash, the MT25QL256 on the Pmod (platforms/store_flash.py).
SIM_FLASH_SIZE = DEFAULT_FLASH_SIZE        # 16 MiB
BOARD_STORE_FLASH_SIZE = STORE_FLASH_SIZE  # 32 MiB
STORE_DEVICES = {IDEAL_SOC: "the sim flash (16 MiB)"}
BOARD_STORE_DEVICE = "the store flash (the Pmod's MT25QL256, 32 MiB, a 1x SPI master at sys_clk/4)"
STATUS_TIMEOUT = 600  # wall seconds for one status read: the simulator is slow under load
CLIENT_TIMEOUT = 14400  # wall seconds a client waits for a response (Dav)
BOOT_TIMEOUT = 3600     # wall seconds for the boot of the office's store (~15-35 min seen)
# A board model takes ~3x the ideal SoC's wall time for the same work (more cycles per request:
# SDRAM behind the L2, the CPU variant; about as many cycles a wall second: docs/board_model.md),
# and its boot reads the store through LiteSPI 1x instead of a bus window: its waits are that many
# times the ideal SoC's.
BOARD_SLOWDOWN = 3
BOARD_BOOT_SLOWDOWN = 6
BOOT_PROGRESS_S = 300   # a line this often while a boot goes on
# Connections opened at once before the office run: a wave the SoC's receive side absorbs
# (bench/README.md, waves of new connections).
WAVE = 8


def is_board(soc):
    return soc != IDEAL_SOC


def store_size(soc):
    """Bytes of the SoC's store device: a store image for it is exactly that size."""
    return BOARD_STORE_FLASH_SIZE if is_board(soc) else SIM_FLASH_SIZE


def store_device(soc):
    return STORE_DEVICES.get(soc, BOARD_STORE_DEVICE)


def timeouts(soc):
    """Wall seconds: (status read, client response, boot) on that SoC."""
    if not is_board(soc):
        return STATUS_TIMEOUT, CLIENT_TIMEOUT, BOOT_TIMEOUT
    return STATUS_TIMEOUT * BOARD_SLOWDOWN, CLIENT_TIMEOUT * BOARD_SLOWDOWN, BOOT_TIMEOUT * BOARD_BOOT_SLOWDOWN


def section(soc):
    """The ideal SoC's section keeps its old name; each board model has its own."""
    return SECTION if soc == IDEAL_SOC else f"{SECTION}_{soc}"


def md_markers(soc):
    name = section(soc)
    return f"<!-- {name} begin (written by litedav.bench.office_sync) -->", f"<!-- {name} end -->"


class BenchError(RuntimeError):
    pass


def password(user):
    return "pw" + user[-3:]


def calendar_path(user):
    return f"/dav/{user}/{CALENDAR}/"


# ---- the CalDAV client --------------------------------------------------------------------

class Dav:
    """One keep-alive connection of one user. A 503 (every request context busy) is asked
    again after a short pause and counted, as a client honouring Retry-After would."""

    def __init__(self, port, user, timeout=CLIENT_TIMEOUT, connect=True):
        # wall-clock seconds, far above 600: one response of a listing takes millions of cycles
        # and the simulator runs ~200 k cycles a wall second, so a few clients at once on a loaded
        # machine take longer; of 100 clients, those beyond the 64 connection states wait for 64
        # syncs (1.5 G cycles)
        self.port, self.user, self.timeout = port, user, timeout
        self.auth = "Basic " + base64.b64encode(f"{user}:{password(user)}".encode()).decode()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.retries_503 = 0
        self.responses = 0
        if connect:
            self.conn.connect()

    def __call__(self, method, path, body=None, headers=None):
        headers = {"Authorization": self.auth, **(headers or {})}
        if body is not None and not isinstance(body, bytes):
            body = body.encode()
        while True:
            self.conn.request(method, path, body=body, headers=headers)
            r = self.conn.getresponse()
            data = r.read()
            if r.status != 503:
                self.responses += 1
                return r.status, r, data
            self.retries_503 += 1
            time.sleep(0.01)

    def close(self):
        self.conn.close()


def _multistatus(status, data, what):
    if status != 207:
        raise BenchError(f"{what}: status {status}: {data[:300]!r}")
    return ET.fromstring(data)


def _props(resp):
    """{tag: element} of a response's 200 propstat, and the response's own status code."""
    props = {}
    for ps in resp.findall("D:propstat", NS):
        if " 200 " in ps.find("D:status", NS).text:
            props.update({p.tag: p for p in ps.find("D:prop", NS)})
    st = resp.find("D:status", NS)
    return props, int(st.text.split()[1]) if st is not None else None


GETETAG, SYNC_TOKEN = "{DAV:}getetag", "{DAV:}sync-token"
CALENDAR_DATA = "{urn:ietf:params:xml:ns:caldav}calendar-data"


PROPFIND_BODY = ('<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:sync-token/>'
                 '</D:prop></D:propfind>')


def propfind_members(dav, cal):
    """PROPFIND Depth 1: (the collection's sync token, {member href: etag})."""
    tree = _multistatus(*dav("PROPFIND", cal, PROPFIND_BODY, {"Depth": "1", "Content-Type": "application/xml"})[::2],
                        f"PROPFIND {cal}")
    token, members = None, {}
    for resp in tree.findall("D:response", NS):
        href = resp.find("D:href", NS).text
        props, _ = _props(resp)
        if href == cal:
            token = props[SYNC_TOKEN].text if SYNC_TOKEN in props else None
        elif GETETAG in props:
            members[href] = props[GETETAG].text
    if token is None:
        raise BenchError(f"PROPFIND {cal}: no DAV:sync-token for the collection")
    return token, members


def multiget_body(hrefs):
    return ('<?xml version="1.0"?><C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
            '<D:prop><D:getetag/><C:calendar-data/></D:prop>'
            + "".join(f"<D:href>{h}</D:href>" for h in hrefs) + "</C:calendar-multiget>")


def multiget(dav, cal, hrefs):
    """calendar-multiget of hrefs: {href: (etag, calendar data)}; every href must be found."""
    tree = _multistatus(*dav("REPORT", cal, multiget_body(hrefs), {"Depth": "1", "Content-Type": "application/xml"})[::2],
                        f"calendar-multiget {cal}")
    out = {}
    for resp in tree.findall("D:response", NS):
        href = resp.find("D:href", NS).text
        props, _ = _props(resp)
        if GETETAG not in props or CALENDAR_DATA not in props:
            raise BenchError(f"calendar-multiget {cal}: {href} without getetag and calendar-data")
        out[href] = (props[GETETAG].text, props[CALENDAR_DATA].text or "")
    missing = set(hrefs) - set(out)
    if missing:
        raise BenchError(f"calendar-multiget {cal}: {len(missing)} hrefs not answered, e.g. {sorted(missing)[0]}")
    return out


def sync_collection(dav, cal, token):
    """sync-collection REPORT (RFC 6578 section 3.2): (new token, {href: etag, or None if gone})."""
    body = (f'<?xml version="1.0"?><D:sync-collection xmlns:D="DAV:"><D:sync-token>{token}</D:sync-token>'
            '<D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>')
    tree = _multistatus(*dav("REPORT", cal, body, {"Depth": "0", "Content-Type": "application/xml"})[::2],
                        f"sync-collection {cal}")
    changes = {}
    for resp in tree.findall("D:response", NS):
        href = resp.find("D:href", NS).text
        props, status = _props(resp)
        changes[href] = None if status == 404 else props.get(GETETAG).text
    return tree.find("D:sync-token", NS).text, changes


def initial_sync(dav, user, expected):
    """A client with an empty cache: PROPFIND Depth 1, then calendar-multiget of every member.
    expected: {resource name: iCalendar text} the server must hold. Returns the client's state
    {"token", "items": {href: (etag, data)}}."""
    cal = calendar_path(user)
    token, members = propfind_members(dav, cal)
    want = {cal + name for name in expected}
    if set(members) != want:
        raise BenchError(f"PROPFIND {cal}: {len(members)} members, expected {len(want)} "
                         f"({len(set(members) ^ want)} differ)")
    items = multiget(dav, cal, sorted(members))
    for href, (etag, data) in items.items():
        if etag != members[href]:
            raise BenchError(f"{href}: multiget ETag {etag} but PROPFIND said {members[href]}")
        if data != expected[href[len(cal):]]:
            raise BenchError(f"{href}: calendar-data differs from the stored item")
    return {"token": token, "items": items}


def changed_items(user, items, n=CHANGES, seed=12345):
    """n changes to a user's calendar: (rewrites {name: text}, new {name: text}, deleted [name])
    from the user's items [(name, kind, text)]: one delete, two new items, the rest rewrites."""
    if n < 3 or n > len(items):
        raise ValueError(f"{n} changes: at least 3 (a delete, two new items) and at most {len(items)}")
    new = {name: text for name, _, text in office_data.user_items(user, len(items) + 2, seed)[len(items):]}
    deleted = [items[-1][0]]
    rewrites = {}
    for name, _, text in items[1:n - 2]:
        # the summary's text, not its line's CR: content lines end in CRLF (RFC 5545 section 3.1)
        rewrites[name] = re.sub(r"^SUMMARY:([^\r\n]*)", r"SUMMARY:\1 (moved)", text, count=1, flags=re.M)
    return rewrites, new, deleted


def make_changes(dav, user, state, rewrites, new, deleted):
    """Apply the changes as another client would (If-Match on rewrites and the delete)."""
    cal = calendar_path(user)
    for name, text in rewrites.items():
        status, _, data = dav("PUT", cal + name, text, {"Content-Type": "text/calendar",
                                                        "If-Match": state["items"][cal + name][0]})
        if status != 204:
            raise BenchError(f"PUT {cal}{name} (rewrite): {status} {data[:200]!r}")
    for name, text in new.items():
        status, _, data = dav("PUT", cal + name, text, {"Content-Type": "text/calendar", "If-None-Match": "*"})
        if status != 201:
            raise BenchError(f"PUT {cal}{name} (new): {status} {data[:200]!r}")
    for name in deleted:
        status, _, data = dav("DELETE", cal + name, None, {"If-Match": state["items"][cal + name][0]})
        if status != 204:
            raise BenchError(f"DELETE {cal}{name}: {status} {data[:200]!r}")


def incremental_sync(dav, user, state, rewrites, new, deleted):
    """sync-collection with the client's token, then calendar-multiget of the changed members;
    exactly the changes must come back. Returns the number of hrefs the sync reported."""
    cal = calendar_path(user)
    token, changes = sync_collection(dav, cal, state["token"])
    gone = {h for h, etag in changes.items() if etag is None}
    changed = sorted(h for h, etag in changes.items() if etag is not None)
    want_changed = {cal + n for n in (*rewrites, *new)}
    if gone != {cal + n for n in deleted} or set(changed) != want_changed:
        raise BenchError(f"sync-collection {cal}: {len(changed)} changed and {len(gone)} gone, expected "
                         f"{len(want_changed)} and {len(deleted)}")
    items = multiget(dav, cal, changed)
    for href, (etag, data) in items.items():
        if etag != changes[href] or data != {**rewrites, **new}[href[len(cal):]]:
            raise BenchError(f"{href}: multiget after the sync does not match the change")
    state["token"] = token
    for h in gone:
        state["items"].pop(h)
    state["items"].update(items)
    return len(changes)


# ---- store images ----------------------------------------------------------------------------

def build_host(out_dir):
    """litedav-host without sanitizers and with the LiteX port's index size."""
    out = subprocess.run(["make", "-C", HOST_DIR, "-j2", "server", "SANITIZE=0", f"OUT={out_dir}",
                          f"SERVER_DEFS=-DDAV_STORE_INDEX_SLOTS={LITEX_INDEX_SLOTS}"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BenchError(f"building litedav-host failed:\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return os.path.join(out_dir, "litedav-host")


class HostServer:
    """litedav-host on a store file, for writing an image (or for the test). store_size_mib:
    the store's size (litedav-host --store-size; None: its default, 16 MiB); a file of another
    size is refused."""

    def __init__(self, binary, port, store, users, timeout=60, store_size_mib=None):
        args = [binary, "--port", str(port), "--store", store]
        if store_size_mib is not None:
            args += ["--store-size", str(store_size_mib)]
        for u in users:
            args += ["--user", f"{u}:{password(u)}"]
        self.port = port
        self.console = []
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace")
        ready, serving = threading.Event(), []

        def reader():
            for line in self.proc.stdout:
                self.console.append(line.rstrip("\n"))
                if READY.search(line):
                    serving.append(True)
                    ready.set()
            ready.set()
        threading.Thread(target=reader, daemon=True).start()
        if not ready.wait(timeout) or not serving or self.proc.poll() is not None:
            self.stop()
            raise BenchError("litedav-host did not come up:\n" + "\n".join(self.console[-20:]))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # SIGINT: closes the store file
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def users_of(n):
    return [f"user{i:03d}" for i in range(n)]


def load(port, users, items, seed=12345, threads=4):
    """MKCALENDAR every user's calendar and PUT their items (a few connections at once)."""
    data = {user: office_data.user_items(user, items, seed) for user in users}
    errors = []

    def worker(mine):
        try:
            for user in mine:
                dav = Dav(port, user)
                cal = calendar_path(user)
                status, _, body = dav("MKCALENDAR", cal)
                if status != 201:
                    raise BenchError(f"MKCALENDAR {cal}: {status} {body[:200]!r}")
                for name, _, text in data[user]:
                    status, _, body = dav("PUT", cal + name, text, {"Content-Type": "text/calendar"})
                    if status != 201:
                        raise BenchError(f"PUT {cal}{name}: {status} {body[:200]!r}")
                dav.close()
        except Exception as e:  # reported by the caller
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(users[i::threads],)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    return data


def _code_fingerprint():
    h = hashlib.sha256()
    store_layer = os.path.join("firmware", "app", "store")
    paths = sorted(os.path.join(store_layer, name) for name in os.listdir(os.path.join(TOP, store_layer))
                   if name.endswith((".c", ".h")))
    for path in paths + ["bench/office_data.py"]:
        with open(os.path.join(TOP, path), "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:12]


def store_image(users, items, seed=12345, work_dir=WORK_DIR, log=print, size_mib=SIM_FLASH_SIZE // MIB,
                binary=None):
    """A store file of size_mib MiB (the target device's size: store_size(soc)) holding users
    user000.. each with a calendar of `items` office items: written by litedav-host (binary, or
    one built in work_dir with the LiteX port's index size), kept in work_dir while its
    parameters (the size among them: it is in the name) and the store's code are unchanged.
    Returns its path."""
    from litedav.sim.run import free_port
    os.makedirs(work_dir, exist_ok=True)
    size = size_mib * MIB
    path = os.path.join(work_dir, f"office-{users}x{items}-s{seed}-{size_mib}MiB-{_code_fingerprint()}.flash")
    if os.path.exists(path) and os.path.getsize(path) == size:
        return path
    binary = binary or build_host(os.path.join(work_dir, "host"))
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    t0 = time.time()
    srv = HostServer(binary, free_port(), tmp, users_of(users), store_size_mib=size_mib)
    try:
        load(srv.port, users_of(users), items, seed)
    finally:
        code = srv.stop()
    if code != 0:
        raise BenchError(f"litedav-host exited with {code}:\n" + "\n".join(srv.console[-20:]))
    if os.path.getsize(tmp) != size:
        raise BenchError(f"litedav-host wrote a {os.path.getsize(tmp):,}-byte store, not {size_mib} MiB")
    os.rename(tmp, path)
    log(f"store image {os.path.basename(path)}: {users} users x {items} items, {size_mib} MiB, "
        f"in {time.time() - t0:.0f} s")
    return path


# ---- the pcap: per-connection frames -----------------------------------------------------------

@dataclass
class Conn:
    client: tuple
    frames: list = field(default_factory=list)     # (start_ns, end_ns, wire bytes, from client)
    flow: Flow = None
    syn_in_window: bool = True    # its handshake is part of the scenario (opened inside it)


def connections(path, byte_ns):
    """Every TCP connection to the appliance's port 80 in a simulator pcap, keyed by the
    client's (address, port): all its frames (handshake and ACKs too) and its payload flow."""
    conns = {}
    for ts, frame, client, from_client, payload in server_frames(path):
        c = conns.setdefault(client, Conn(client, flow=Flow(client)))
        end = ts + len(frame) * byte_ns
        c.frames.append((ts, end, max(len(frame), MIN_FRAME) + WIRE_OVERHEAD, from_client))
        if payload:
            c.flow.segments.append(Segment(ts, end, from_client, bytes(payload)))
    return conns


def first_request(conn):
    reqs = conn.flow.requests()
    return reqs[0][0].split(" ", 1)[0] if reqs else None


def scenario_figures(conns, hz):
    """Time and bytes of a set of connections taken together: from their first frame (or
    their first request, for connections opened beforehand: from_request) to the last
    response frame out; client gaps summed per connection."""
    start, end, gaps, wire_in, wire_out, payload_in, payload_out, requests = None, 0, [], 0, 0, 0, 0, 0
    lasts = []
    for c in conns:
        reqs = [r for r in c.flow.requests() if r[2]]
        if not reqs:
            continue
        first = c.frames[0][0] if c.syn_in_window else reqs[0][1][0].start_ns
        last = reqs[-1][2][-1].end_ns
        start = first if start is None else min(start, first)
        end = max(end, last)
        lasts.append(last)
        gap = 0
        for prev, nxt in zip(reqs, reqs[1:]):
            gap += max(0, nxt[1][0].start_ns - prev[2][-1].end_ns)
        gaps.append(gap)
        for (t0, _, wire, from_client) in c.frames:
            if first <= t0 <= last:
                if from_client:
                    wire_in += wire
                else:
                    wire_out += wire
        for _, req, resp in reqs:
            requests += 1
            payload_in += sum(len(s.payload) for s in req)
            payload_out += sum(len(s.payload) for s in resp)
    if start is None:
        raise BenchError("no request of the scenario in the pcap")
    elapsed = end - start
    # when each connection had its last response, from the scenario's start: the spread
    # between the first and the last client done
    done = sorted(last - start for last in lasts)
    return {"elapsed_ns": round(elapsed), "elapsed_ms": round(elapsed / 1e6, 3),
            "client_done_ms_min": round(done[0] / 1e6, 3),
            "client_done_ms_median": round(done[len(done) // 2] / 1e6, 3),
            "client_done_ms_max": round(done[-1] / 1e6, 3),
            "elapsed_cycles": round(elapsed * hz / 1e9),
            "client_gap_ms_max": round(max(gaps) / 1e6, 3),
            "requests": requests,
            "wire_bytes_in": wire_in, "wire_bytes_out": wire_out,
            "http_bytes_in": payload_in, "http_bytes_out": payload_out}


# ---- the simulated SoC ---------------------------------------------------------------------------

def read_status(port, timeout=STATUS_TIMEOUT):
    return idle_conns.read_status(port, timeout=timeout)


def booted_figures(port, timeout=STATUS_TIMEOUT):
    """sys_clk, the cycles the boot took, and the busy cycles one status read costs."""
    st = read_status(port, timeout)
    return st["sys_clk_hz"], st["uptime_cycles"], idle_conns.status_cost(port, timeout=timeout)


def cpu(before, after, overhead):
    """Busy cycles (a status read's own cost subtracted), and the driver's share of them (the
    port's counters, status reads included): copies between the MAC and pbufs, and lwIP +
    application handling of received frames (which includes what a handler renders from
    inside it); the rest of the busy cycles is the main loop's (timers, app_poll)."""
    out = {"cpu_busy_cycles": after["busy_cycles"] - before["busy_cycles"] - overhead,
           "rx_dropped": after["rx_dropped"] - before["rx_dropped"],
           "tx_dropped": after["tx_dropped"] - before["tx_dropped"]}
    for key in ("rx_copy_cycles", "rx_handle_cycles", "tx_copy_cycles"):
        if key in after and key in before:
            out[key] = after[key] - before[key]
    return out


def device_size(sim):
    """Bytes the image of the simulator's store device must have, None if not known here: the
    store flash's on a SoC that has it (the board models), the sim flash's on one without LiteSPI."""
    if getattr(sim, "store_flash", False):
        return BOARD_STORE_FLASH_SIZE
    if not getattr(sim, "spi_flash", False):
        return sim.options.flash_size
    return None


def wait_booted(sim, timeout, log, every=BOOT_PROGRESS_S):
    """sim.wait_ready, with a line every `every` wall seconds: the simulator's own speed report
    (simulated cycles so far) or the console's latest line."""
    t0 = time.time()
    while True:
        left = timeout - (time.time() - t0)
        if left <= 0:
            raise BenchError(f"the SoC did not serve within {timeout} s of wall time; console:\n"
                             + "\n".join(sim.console[-15:]))
        try:
            sim.wait_ready(timeout=min(every, left))
            return
        except TimeoutError:
            speed = next((line for line in reversed(sim.console) if line.startswith("[slirp_ethernet]")), None)
            latest = speed.split("] ", 1)[1] if speed else (sim.console[-1] if sim.console else "no console yet")
            log(f"booting, {time.time() - t0:,.0f} of at most {timeout:,} s of wall time: {latest}")


def boot(build_dir, image, phy, pcap, run_dir_flash, log, boot_timeout=BOOT_TIMEOUT):
    """The simulator on a copy of image (run_dir_flash) as its store device: the sim flash, or
    a board model's store flash (SimOptions.flash is that chip's image). The image must have the
    device's size; the console must say the store is on flash and checked ok."""
    from litedav.sim.run import SimOptions, Simulator, free_port
    sim = Simulator(build_dir, SimOptions(port=free_port(), echo=False, flash=run_dir_flash, phy=phy, pcap=pcap,
                                          peer_pid=os.getpid()))
    want = device_size(sim)
    if want is not None and os.path.getsize(image) != want:
        raise BenchError(f"{os.path.basename(image)} is {os.path.getsize(image) / MIB:g} MiB, the SoC's store "
                         f"device {want / MIB:g} MiB (store_image(size_mib=...))")
    shutil.copyfile(image, run_dir_flash)
    sim.start()
    t0 = time.time()
    try:
        wait_booted(sim, boot_timeout, log)
    except BaseException:
        sim.stop()
        raise
    check = next((line for line in sim.console if line.startswith("store check")), "")
    store = next((line for line in sim.console if line.startswith("store:")), "")
    flash = next((line for line in sim.console if line.startswith("flash:")), None)
    log(f"booted in {time.time() - t0:.0f} s of wall time: {flash + '; ' if flash else ''}{store}; {check}")
    if not store.startswith("store: on flash"):
        sim.stop()
        raise BenchError(f"the SoC's store is not on its flash: {flash or ''} {store or 'no store line'}")
    if not check.startswith("store check: ok"):
        sim.stop()
        raise BenchError(f"the SoC's store check on the image failed: {check or 'no check line'}")
    return sim, store


def measure_users_day(build_dir, nic, phy, work, log, soc=IDEAL_SOC):
    """One user's day on a store holding that user alone."""
    user = "user000"
    status_s, client_s, boot_s = timeouts(soc)
    image = store_image(1, 200, log=log, size_mib=store_size(soc) // MIB)
    items = office_data.user_items(user, 200)
    expected = {name: text for name, _, text in items}
    run = f"users-day-{soc}-{nic}-{phy}"
    pcap = os.path.join(work, f"{run}.pcap")
    sim, store = boot(build_dir, image, phy, pcap, os.path.join(work, f"{run}.flash"), log, boot_s)
    try:
        port = sim.port
        hz, boot_cycles, overhead = booted_figures(port, status_s)
        before = read_status(port, status_s)
        dav = Dav(port, user, client_s)
        state = initial_sync(dav, user, expected)
        dav.close()
        after = read_status(port, status_s)
        initial_cpu = cpu(before, after, overhead)
        rewrites, new, deleted = changed_items(user, items)
        editor = Dav(port, user, client_s)
        make_changes(editor, user, state, rewrites, new, deleted)
        editor.close()
        before = read_status(port, status_s)
        dav = Dav(port, user, client_s)
        reported = incremental_sync(dav, user, state, rewrites, new, deleted)
        dav.close()
        after = read_status(port, status_s)
        incr_cpu = cpu(before, after, overhead)
        # a second device of the same user syncs from empty: the server has rendered every
        # object's response once already and kept it (dav_fragments.c), unless it keeps none
        current = {href[len(calendar_path(user)):]: data for href, (_, data) in state["items"].items()}
        before = read_status(port, status_s)
        dav = Dav(port, user, client_s)
        second = initial_sync(dav, user, current)
        dav.close()
        after = read_status(port, status_s)
        second_cpu = {**cpu(before, after, overhead), **fragment_counts(before, after)}
        per_request = request_costs(port, user, sorted(second["items"]), status_s, client_s, overhead)
        time.sleep(1)  # the last frames reach the pcap
    finally:
        sim.stop()
    conns = connections(pcap, 8000 / PHY_MBPS[phy])
    first_by_method = {}
    for c in conns.values():
        first_by_method.setdefault(first_request(c), []).append(c)
    # connections in the order they opened: the first PROPFIND is the day's, the second the
    # second device's (then the request costs' own); the first REPORT is the incremental sync's
    propfinds = first_by_method.get("PROPFIND", [])
    initial = scenario_figures(propfinds[:1], hz)
    second_device = scenario_figures(propfinds[1:2], hz)
    incremental = scenario_figures(first_by_method.get("REPORT", [])[:1], hz)
    os.remove(pcap)
    return {"user": user, "items": len(items), "store": store, "boot_cycles": boot_cycles,
            "status_read_cycles": overhead,
            "initial": {**initial, **initial_cpu, "objects": len(state["items"]) - len(new) + len(deleted)},
            "incremental": {**incremental, **incr_cpu, "changes": CHANGES, "hrefs_reported": reported},
            "second_device": {**second_device, **second_cpu, "objects": len(second["items"])},
            "per_request": per_request,
            "sys_clk_hz": hz}


FRAGMENT_COUNTERS = ("fragments_hits", "fragments_misses", "fragments_rendered", "fragments_not_kept")


def fragment_counts(before, after):
    """What the server's kept responses (dav_fragments.c) did in between; nothing from a build
    that keeps none."""
    return {k: after[k] - before[k] for k in FRAGMENT_COUNTERS if k in after and k in before}


def request_costs(port, user, hrefs, status_s, client_s, overhead):
    """CPU busy cycles per byte of response body of each request of a sync on its own, the
    server's kept responses warm: PROPFIND Depth 1 (every member's ETag) and calendar-multiget
    of every member (ETag and calendar-data), each on a new connection between status reads."""
    cal = calendar_path(user)
    out = {}
    for name, run in (("PROPFIND Depth 1", lambda dav: dav("PROPFIND", cal, PROPFIND_BODY,
                                                           {"Depth": "1", "Content-Type": "application/xml"})),
                      ("calendar-multiget", lambda dav: dav("REPORT", cal, multiget_body(hrefs),
                                                            {"Depth": "1", "Content-Type": "application/xml"}))):
        before = read_status(port, status_s)
        dav = Dav(port, user, client_s)
        status, _, data = run(dav)
        dav.close()
        after = read_status(port, status_s)
        if status != 207:
            raise BenchError(f"{name} {cal}: status {status}")
        busy = cpu(before, after, overhead)["cpu_busy_cycles"]
        out[name] = {"cpu_busy_cycles": busy, "body_bytes": len(data),
                     "cycles_per_byte": round(busy / len(data), 3), **fragment_counts(before, after)}
    return out


class PcapTail:
    """Reads a simulator pcap while the simulator still writes it: complete records only,
    from where the last read stopped. The simulated time of the latest frame (the pcap's
    stamps, no read of the SoC and so no cycles of it), frames and bytes out of the SoC."""

    def __init__(self, path):
        self.path, self.offset, self.scale = path, 24, None
        self.last_ns, self.frames, self.bytes_out, self.first_propfind_ns = None, 0, 0, None

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                if self.scale is None:
                    head = f.read(24)
                    if len(head) < 24:
                        return
                    magic = int.from_bytes(head[:4], "little")
                    self.scale = {0xa1b23c4d: 1, 0xa1b2c3d4: 1000}.get(magic, 1)
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        pos = 0
        while pos + 16 <= len(data):
            sec, frac, incl = (int.from_bytes(data[pos + i:pos + i + 4], "little") for i in (0, 4, 8))
            if pos + 16 + incl > len(data):
                break
            frame = data[pos + 16:pos + 16 + incl]
            ts = sec * 1_000_000_000 + frac * self.scale
            self.last_ns = ts
            self.frames += 1
            if len(frame) >= 38 and frame[12:14] == b"\x08\x00" and frame[23] == 6:
                ihl = (frame[14] & 0x0f) * 4
                tcp = 14 + ihl
                if len(frame) >= tcp + 13:
                    if int.from_bytes(frame[tcp:tcp + 2], "big") == 80:
                        self.bytes_out += len(frame)
                    elif self.first_propfind_ns is None:
                        if frame[tcp + (frame[tcp + 12] >> 4) * 4:].startswith(b"PROPFIND "):
                            self.first_propfind_ns = ts
            pos += 16 + incl
        self.offset += pos


class Progress:
    """A line every `every` wall seconds while a long run goes on: the simulated time of the
    pcap's latest frame (and since the first PROPFIND), bytes out, what `count()` reports
    (responses done), and the rate in simulated milliseconds per wall minute."""

    def __init__(self, pcap, count, log, every=60):
        self.tail, self.count, self.log, self.every = PcapTail(pcap), count, log, every
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.t0 = time.time()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_event.set()
        self.thread.join()

    def run(self):
        prev = None
        while not self.stop_event.wait(self.every):
            self.tail.poll()
            t, wall = self.tail.last_ns, time.time()
            if t is None:
                continue
            since = ""
            if self.tail.first_propfind_ns is not None:
                since = f" ({(t - self.tail.first_propfind_ns) / 1e6:,.1f} ms since the first PROPFIND)"
            rate = ""
            if prev is not None and wall > prev[1]:
                rate = f", {(t - prev[0]) / 1e6 / ((wall - prev[1]) / 60):,.2f} simulated ms per wall minute"
            prev = (t, wall)
            self.log(f"progress after {wall - self.t0:,.0f} s of wall time: simulated {t / 1e6:,.1f} ms"
                     f"{since}, {self.tail.bytes_out:,} bytes out of the SoC, {self.count()}{rate}")


def office_conns(pcap, phy):
    """The office's syncing connections in its pcap, each from its PROPFIND on: the OPTIONS
    that opened it beforehand (and the wait for the other waves) are not part of the sync."""
    synced = []
    for c in connections(pcap, 8000 / PHY_MBPS[phy]).values():
        c.syn_in_window = False
        start = next((s.start_ns for s in c.flow.segments
                      if s.from_client and s.payload.startswith(b"PROPFIND ")), None)
        if start is not None:
            c.flow.segments = [s for s in c.flow.segments if s.start_ns >= start]
            synced.append(c)
    return synced


def measure_office(build_dir, nic, phy, users, clients, work, log, soc=IDEAL_SOC):
    """`clients` clients at once, client i syncing user i % users from empty."""
    status_s, client_s, boot_s = timeouts(soc)
    image = store_image(users, 200, log=log, size_mib=store_size(soc) // MIB)
    names = users_of(users)
    data = {user: office_data.user_items(user, 200) for user in names}
    # the build and the size in the names: runs of two builds or sizes at once do not share a
    # flash or a pcap
    run = f"office-{nic}-{os.path.basename(build_dir.rstrip(os.sep))}-{phy}-{users}u{clients}c"
    pcap = os.path.join(work, f"{run}.pcap")
    sim, store = boot(build_dir, image, phy, pcap, os.path.join(work, f"{run}.flash"), log, boot_s)
    try:
        port = sim.port
        hz, boot_cycles, overhead = booted_figures(port, status_s)
        daves = []
        for i in range(clients):  # connected beforehand, in waves the receive side absorbs
            daves.append(Dav(port, names[i % users], client_s))
            if len(daves) % WAVE == 0 or len(daves) == clients:
                for d in daves[-WAVE:]:
                    status, _, _ = d("OPTIONS", "/dav/")
                    if status not in (200, 204):
                        raise BenchError(f"OPTIONS /dav/: {status}")
        before = read_status(port, status_s)
        go = threading.Barrier(clients)
        results, errors = [None] * clients, []

        def client(i):
            try:
                user = names[i % users]
                go.wait()
                results[i] = initial_sync(daves[i], user, {n: t for n, _, t in data[user]})
            except Exception as e:  # reported below
                errors.append(e)
                go.abort()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]

        def done():
            return (f"{sum(d.responses for d in daves) - clients} of {2 * clients} responses, "
                    f"{sum(r is not None for r in results)} of {clients} clients done")
        with Progress(pcap, done, log):
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        after = read_status(port, status_s)
        retries = sum(d.retries_503 for d in daves)
        for d in daves:
            d.close()
        if errors:
            raise errors[0]
        time.sleep(1)
    finally:
        sim.stop()
    synced = office_conns(pcap, phy)
    if len(synced) != clients:
        raise BenchError(f"{len(synced)} syncing connections in the pcap, expected {clients}")
    figures = scenario_figures(synced, hz)
    os.remove(pcap)
    objects = sum(len(r["items"]) for r in results)
    return {"users": users, "clients": clients, "items_per_user": 200, "store": store,
            "boot_cycles": boot_cycles, "objects_synced": objects,
            "ical_bytes": sum(len(t) for u in names for _, _, t in data[u]) * clients // users,
            "retries_503": retries, **figures, **cpu(before, after, overhead), "sys_clk_hz": hz}


def measure(nic, phy, users, clients, build_dir=None, day=True, office=True, log=print, soc=IDEAL_SOC):
    """soc: the ideal SoC or a board model (BOARD_MODEL_PHYS), built with that board."""
    from litedav.sim.run import build, default_build_dir, read_build_commit
    board = soc if is_board(soc) else None
    build_dir = build_dir or default_build_dir(nic, board=board)
    build(build_dir, nic=nic, board=board)
    work = os.path.join(WORK_DIR, "runs")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    result = {"soc": soc, "nic": nic, "phy": phy, "link_mbps": PHY_MBPS[phy], "commit": read_build_commit(build_dir),
              "store_device": store_device(soc), "store_bytes": store_size(soc)}
    what = f"{idle_conns.soc_text(soc)}, {nic}, {phy.upper()}"
    if day:
        log(f"user's day ({what}) ...")
        result["users_day"] = measure_users_day(build_dir, nic, phy, work, log, soc)
        result["sys_clk_hz"] = result["users_day"].pop("sys_clk_hz")
    if office:
        log(f"office: {users} users, {clients} clients at once ({what}) ...")
        result["office"] = measure_office(build_dir, nic, phy, users, clients, work, log, soc)
        result["sys_clk_hz"] = result["office"].pop("sys_clk_hz")
    result["wall_s"] = round(time.time() - t0)
    return result


# ---- reports ------------------------------------------------------------------------------------

def soc_of(r):
    return r.get("soc", IDEAL_SOC)  # rows written before the board models: the ideal SoC's


def markdown(results, soc=None):
    """The section of one SoC (soc, default: the first result's) with its results' tables."""
    soc = soc or (soc_of(results[0]) if results else IDEAL_SOC)
    begin, end = md_markers(soc)
    lines = [begin]
    for r in results:
        mhz = r["sys_clk_hz"] / 1e6
        day = r.get("users_day")
        commit = f"; commit {r['commit']}" if r.get("commit") else ""
        lines += [f"\n**Office calendar sync, {r['nic']} at {r['phy'].upper()} {r['link_mbps']} Mbit/s, "
                  f"{idle_conns.soc_text(soc)}: VexRiscv at {mhz:g} MHz, store on "
                  f"{r.get('store_device', store_device(soc))}{commit}** (simulated time from the pcap, "
                  f"cycles and ms at the SoC's {mhz:g} MHz; goals: user's day ≤ 5 ms, office ≤ 0.5 s at 1 GbE)\n",
                  "| scenario | simulated time | CPU busy cycles | requests | bytes on the wire in / out "
                  "(HTTP in / out) | frames dropped (rx) | 503 retries |",
                  "|---|---|---|---|---|---|---|"]

        def row(name, f, retries="-", measured=None):
            if measured and measured != r.get("commit"):
                at = "a commit not recorded" if measured == "not recorded" else f"commit {measured}"
                name += f" (measured before the rest of this table, at {at})"
            lines.append(f"| {name} | {f['elapsed_ms']:.3f} ms ({f['elapsed_cycles']:,} cycles; client gaps "
                         f"≤ {f['client_gap_ms_max']:.3f} ms) | {f['cpu_busy_cycles']:,} | {f['requests']} | "
                         f"{f['wire_bytes_in']:,} / {f['wire_bytes_out']:,} ({f['http_bytes_in']:,} / "
                         f"{f['http_bytes_out']:,}) | {f['rx_dropped']} | {retries} |")
        boots = []
        if day:
            row(f"user's day from empty: connect, PROPFIND Depth 1 + calendar-multiget of "
                f"{day['initial']['objects']} items", day["initial"], measured=day.get("commit"))
            row(f"incremental sync after {day['incremental']['changes']} changes: connect, sync-collection "
                f"({day['incremental']['hrefs_reported']} hrefs) + calendar-multiget", day["incremental"],
                measured=day.get("commit"))
            if "second_device" in day:
                row(f"the same user's second device from empty (the server's responses rendered once "
                    f"already{fragment_note(day['second_device'])}): PROPFIND Depth 1 + calendar-multiget of "
                    f"{day['second_device']['objects']} items", day["second_device"], measured=day.get("commit"))
            if "boot_cycles" in day:
                boots.append(("the 1-user store", day["boot_cycles"]))
        if "office" in r:
            o = r["office"]
            row(f"office: {o['clients']} clients at once, {o['users']} users x {o['items_per_user']} items "
                f"({o['objects_synced']:,} objects synced, {o['ical_bytes'] / 1e6:.1f} MB of iCalendar), connections "
                f"open beforehand", o, o["retries_503"], measured=o.get("commit"))
            lines.append("\n" + office_note(o, r["link_mbps"]))
            if "boot_cycles" in o:
                boots.append((f"the {o['users']}-user store", o["boot_cycles"]))
        if day and "per_request" in day:
            lines.append("\nCPU busy cycles per byte of response body, each request of the second device's sync "
                         "alone on a new connection (status reads around it): " + "; ".join(
                             f"{name} {f['cycles_per_byte']:.2f} ({f['cpu_busy_cycles']:,} cycles, "
                             f"{f['body_bytes']:,} bytes{fragment_note(f)})"
                             for name, f in day["per_request"].items()) + ".")
        if boots:
            lines.append("\nBoot to the first status read (the store's mount and check included): " + "; ".join(
                f"{name} {cycles:,} cycles ({cycles / r['sys_clk_hz'] * 1e3:,.1f} ms)" for name, cycles in boots)
                + ".")
    lines.append(end)
    return "\n".join(lines) + "\n"


def fragment_note(f):
    """The kept responses' part in a figure, when the build keeps them."""
    if "fragments_hits" not in f:
        return ""
    return f"; kept responses: {f['fragments_hits']:,} sent, {f['fragments_rendered']:,} rendered"


def office_note(o, link_mbps):
    """Where the office's time went: the CPU's busy share of the elapsed cycles, the wire time
    of the bytes out at the link rate, the clients' own gaps; and when the clients were done."""
    text = (f"Office, {o['clients']} clients: CPU busy {o['cpu_busy_cycles'] / o['elapsed_cycles']:.0%} of "
            f"the elapsed cycles; the bytes out need {o['wire_bytes_out'] * 8 / link_mbps / 1e3:,.1f} ms "
            f"of wire time at {link_mbps} Mbit/s ({o['wire_bytes_out'] * 8 / link_mbps / 1e3 / o['elapsed_ms']:.0%} "
            f"of the elapsed time); client gaps ≤ {o['client_gap_ms_max']:.3f} ms")
    if "client_done_ms_min" in o:
        text += (f"; clients done between {o['client_done_ms_min']:,.1f} and {o['client_done_ms_max']:,.1f} ms "
                 f"(median {o['client_done_ms_median']:,.1f} ms)")
    return text + "."


def merge_reports(results, out):
    """Each result into its SoC's section (section()) of out/latest.json and out/latest.md: a
    run of one scenario keeps the other's figures of the same SoC, NIC and PHY; rows of other
    NICs and PHYs, and other SoCs' sections, are kept. Returns the merged rows of the sections
    written."""
    json_path = os.path.join(out, "latest.json")
    written = []
    for soc in dict.fromkeys(soc_of(r) for r in results):
        data = {}
        if os.path.exists(json_path):
            with open(json_path) as f:
                data = json.load(f)
        data = data if isinstance(data, dict) else {"soc": data}
        merged = [dict(r) for r in data.get(section(soc), [])]
        for r in results:
            if soc_of(r) != soc:
                continue
            key = (soc, r["nic"], r["phy"])
            old = next((m for m in merged if (soc_of(m), m["nic"], m["phy"]) == key), None)
            if old is None:
                merged.append(dict(r))
            else:
                # a scenario this run did not measure keeps the commit it was measured at
                for scenario in ("users_day", "office"):
                    if scenario in old and scenario not in r:
                        old[scenario].setdefault("commit", old.get("commit") or "not recorded")
                old.update(r)
        merge_section(out, section(soc), merged, markdown(merged, soc), *md_markers(soc))
        written += merged
    return written


def parse_args(argv=None):
    """The command line, with the SoC's defaults filled in: nic (a list), phy."""
    parser = argparse.ArgumentParser(prog="office_sync", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=100, help="users in the office's store (1-100)")
    parser.add_argument("--clients", type=int, default=None,
                        help="clients syncing at once in the office run (default: one per user)")
    parser.add_argument("--no-office", action="store_true", help="the user's day only")
    parser.add_argument("--no-day", action="store_true", help="the office only")
    parser.add_argument("--soc", default=IDEAL_SOC, choices=[IDEAL_SOC, *BOARD_MODEL_PHYS],
                        help="the ideal SoC (125 MHz, store on the 16 MiB sim flash) or a board model "
                             "(docs/board_model.md; colorlight_i5: 75 MHz, store on the 32 MiB store "
                             "flash), each with a report section of its own")
    parser.add_argument("--nic", nargs="+", default=None, choices=("liteeth", "offload"),
                        help="default: LiteEth on the ideal SoC; a board model has its board's NIC "
                             "(colorlight_i5: offload) and no other")
    parser.add_argument("--phy", default=None, choices=list(PHY_MBPS),
                        help="wire rate (default: GMII on the ideal SoC, a board model's own PHY, MII)")
    parser.add_argument("--build-dir", default=None,
                        help="simulator build (default: the SoC's and NIC's own, build/sim[-offload] or "
                             "build/sim-<board>-offload; one NIC only)")
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"), help="output directory")
    args = parser.parse_args(argv)
    if not 1 <= args.users <= 100:
        parser.error("--users must be 1 to 100 (bench/office_data.py's office)")
    args.clients = args.clients or args.users
    if args.clients < 1:
        parser.error("--clients must be 1 or more")
    if args.no_day and args.no_office:
        parser.error("--no-day and --no-office leave nothing to measure")
    if is_board(args.soc):
        own_nic, own_phy = BOARD_MODEL_NICS[args.soc], BOARD_MODEL_PHYS[args.soc]
        args.nic = args.nic or [own_nic]
        if set(args.nic) != {own_nic}:
            parser.error(f"--soc {args.soc}: the board's bitstream has the {own_nic} NIC, and its model "
                         f"that NIC only (other NICs are measured on the ideal SoC)")
        args.phy = args.phy or own_phy
        if PHY_MBPS[args.phy] > PHY_MBPS[own_phy]:
            parser.error(f"--soc {args.soc}: its PHY moves one byte per sys_clk, {own_phy.upper()} "
                         f"({PHY_MBPS[own_phy]} Mbit/s) at most")
    else:
        args.nic = args.nic or ["liteeth"]
        args.phy = args.phy or "gmii"
    if args.build_dir and len(args.nic) > 1:
        parser.error("--build-dir goes with one --nic")
    return args


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    results = []
    for nic in args.nic:
        results.append(measure(nic, args.phy, args.users, args.clients,
                               os.path.abspath(args.build_dir) if args.build_dir else None,
                               day=not args.no_day, office=not args.no_office,
                               log=lambda m: print(f"[office_sync] {m}", flush=True), soc=args.soc))
    print(markdown(merge_reports(results, args.out), args.soc))


if __name__ == "__main__":
    main()
