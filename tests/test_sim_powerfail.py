"""Power cuts on the simulated appliance: nothing acknowledged is ever lost.

The SoC keeps its calendars on the sim flash (soc/sim_flash.py), a NOR image
that the flash_file sim module maps MAP_SHARED: every program or erase the SoC
completed is in the host file at once, whatever happens to the simulator. So
SIGKILL of Vsim is a power cut: the image holds exactly what the chip held.

Each cycle streams PUTs of calendar objects (new names and rewrites of old
ones) from a client thread, records every acknowledged one (201/204: the store
synced its record before the answer), kills the simulator at a random moment,
boots it again on the same image and GETs every object: an acknowledged PUT
must come back byte for byte, the one in flight at the cut either old or new.

Fast mode: 3 cuts. LITEDAV_FUZZ=1: 20 (LITEDAV_POWERFAIL_CUTS), random seed
LITEDAV_SEED (default 12345). The flash is LITEDAV_POWERFAIL_FLASH (default
256 KiB), small so that long runs reach compaction.
"""
import base64
import http.client
import os
import random
import threading
import time

import pytest

from http_checks import Target, status

TIMEOUT = 120          # wall seconds for one exchange (the sim runs slower than real time)
SIM_CLOCK_HZ = 125_000_000
USER, PASSWORD = "demo", "demo"   # firmware/users.conf
CALENDAR = "/dav/demo/powerfail/"
FLASH_PROBED = "flash: sim NOR flash"  # printed by ports/litex/flash_sim.c

FUZZ = os.environ.get("LITEDAV_FUZZ") == "1"
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
CUTS = int(os.environ.get("LITEDAV_POWERFAIL_CUTS", "20" if FUZZ else "3"))
FLASH_SIZE = os.environ.get("LITEDAV_POWERFAIL_FLASH", "256KiB")
NAMES = 24             # object names in play: later PUTs rewrite earlier objects
AUTH = {"Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}


def vtodo(rng, name, version):
    """A calendar object with a UID of its own and a body of random length."""
    notes = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(rng.randrange(20, 1500)))
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//LiteDAV//powerfail test//EN",
        "BEGIN:VTODO", f"UID:{name}@powerfail.litedav", "DTSTAMP:20260101T000000Z",
        f"SUMMARY:{name} version {version}", f"SEQUENCE:{version}",
    ]
    # RFC 5545 3.1: content lines fold at 75 octets
    text = f"DESCRIPTION:{notes}"
    lines.append(text[:75])
    lines += [" " + text[i:i + 74] for i in range(75, len(text), 74)]
    lines += ["END:VTODO", "END:VCALENDAR", ""]
    return "\r\n".join(lines).encode()


def request(conn, method, path, body=None, headers=()):
    hdrs = dict(AUTH, **dict(headers))
    if body is not None:
        hdrs.setdefault("Content-Type", "text/calendar; charset=utf-8")
    conn.request(method, path, body=body, headers=hdrs)
    resp = conn.getresponse()
    return resp.status, resp.read()


class Writer(threading.Thread):
    """Streams PUTs until the connection dies; `acked` holds what the server confirmed."""

    def __init__(self, port, rng, versions):
        super().__init__(daemon=True)
        self.port, self.rng, self.versions = port, rng, versions
        self.acked = {}          # name -> body, acknowledged in this cycle
        self.in_flight = None    # (name, body) sent, answer not seen
        self.refused = None      # (status, body) of an answer that was neither 201 nor 204
        self.first_ack = threading.Event()
        self.stop = threading.Event()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            while not self.stop.is_set():
                name = f"todo-{self.rng.randrange(NAMES)}.ics"
                self.versions[name] = self.versions.get(name, 0) + 1
                body = vtodo(self.rng, name, self.versions[name])
                self.in_flight = (name, body)
                code, answer = request(conn, "PUT", CALENDAR + name, body)
                if code not in (201, 204):
                    self.refused = (code, answer)
                    return
                self.acked[name] = body
                self.in_flight = None
                self.first_ack.set()
        except (OSError, http.client.HTTPException):
            return  # the power went


def boot(sim):
    sim.start()
    sim.wait_ready(timeout=600)
    return Target(port=sim.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT)


def power_cut(sim):
    sim.proc.kill()      # SIGKILL: no exit handler, no msync; the mapping keeps what was written
    sim.proc.wait()
    sim.exited.wait(10)


@pytest.fixture
def simulator(sim_build, tmp_path):
    from litedav.sim.run import Simulator, free_port
    from litedav.soc.build import parse_size
    sim = Simulator(sim_build, port=free_port(), echo=False, flash=str(tmp_path / "flash.bin"),
                    fresh_flash=True, flash_size=parse_size(FLASH_SIZE))
    yield sim
    sim.stop()
    print("\n--- simulator console (last lines) ---\n" + "\n".join(sim.console[-15:]))


def test_power_cuts_lose_nothing_acknowledged(simulator):
    rng = random.Random(SEED)
    target = boot(simulator)
    assert any(FLASH_PROBED in line for line in simulator.console), (
        "the firmware never probed the sim flash: ports/litex/main.c must mount the store on "
        "port_flash() (ports/litex/flash_sim.c), or data lives in RAM and dies with the power")

    conn = target.connection()
    code, answer = request(conn, "MKCALENDAR", CALENDAR)
    if code in (405, 501):
        pytest.skip(f"the firmware has no CalDAV write path yet (MKCALENDAR {CALENDAR} -> {code})")
    assert code == 201, f"MKCALENDAR -> {code} {answer[:200]!r}"
    body = vtodo(rng, "probe.ics", 1)
    code, answer = request(conn, "PUT", CALENDAR + "probe.ics", body)
    if code in (405, 501):
        pytest.skip(f"the firmware answers PUT with {code}: no CalDAV PUT path yet")
    assert code == 201, f"PUT -> {code} {answer[:200]!r}"

    # Cycles per PUT: the CPU's busy cycles (status page) over a few sequential rewrites.
    before = status(target)
    for i in range(5):
        body = vtodo(rng, "probe.ics", 2 + i)
        code, _ = request(conn, "PUT", CALENDAR + "probe.ics", body)
        assert code == 204, f"PUT over probe.ics -> {code}"
    after = status(target)
    conn.close()
    print(f"\nCPU cycles per PUT (busy cycles / 5, incl. one status request): "
          f"{(after['busy_cycles'] - before['busy_cycles']) // 5}")

    durable = {"probe.ics": body}   # name -> what GET must return
    versions = {}
    total_acked = 0
    for cut in range(CUTS):
        writer = Writer(target.port, rng, versions)
        writer.start()
        assert writer.first_ack.wait(TIMEOUT), (
            f"cut {cut}: no PUT acknowledged: {writer.refused or 'no answer'}")
        time.sleep(rng.uniform(0.2, 3.0))
        assert writer.refused is None, f"cut {cut}: PUT refused: {writer.refused[0]} {writer.refused[1][:300]!r}"
        power_cut(simulator)
        writer.stop.set()
        writer.join(TIMEOUT)
        total_acked += len(writer.acked)

        target = boot(simulator)
        conn = target.connection()
        durable.update(writer.acked)
        in_flight = writer.in_flight
        for name, expected in durable.items():
            code, got = request(conn, "GET", CALENDAR + name)
            if in_flight and name == in_flight[0]:
                assert code == 200 and got in (expected, in_flight[1]), (
                    f"cut {cut}: {name} (rewrite in flight at the cut) -> {code}, neither old nor new")
                durable[name] = got
                continue
            assert code == 200, f"cut {cut}: acknowledged {name} -> {code} after the power cut"
            assert got == expected, f"cut {cut}: {name} came back different ({len(got)} vs {len(expected)} bytes)"
        if in_flight and in_flight[0] not in durable:
            code, got = request(conn, "GET", CALENDAR + in_flight[0])
            assert code == 404 or (code == 200 and got == in_flight[1]), (
                f"cut {cut}: new {in_flight[0]} (in flight at the cut) -> {code}, torn")
            if code == 200:
                durable[in_flight[0]] = got
        conn.close()
    print(f"power cuts: {CUTS} (seed {SEED}, flash {FLASH_SIZE}), acknowledged PUTs {total_acked}, "
          f"objects checked after the last cut {len(durable)}")
