"""Power cuts on the simulated appliance: nothing acknowledged is ever lost.

Two devices, each a NOR image that its sim module maps MAP_SHARED: every program
or erase the SoC completed is in the host file at once, whatever happens to the
simulator. The module cuts the power at an exact sys_clk cycle when asked (its
power_cut_file: SIGKILL of the simulator), so the image holds what the chip held.
  - sim_flash: the ideal SoC's sim flash (sim/flash.py, module flash_file);
  - store_flash: the boards' store flash (platforms/store_flash.py: its SPI master and
    the spi_nor_flash module playing the Pmod's 32 MiB MT25QL256) on the SoC of
    `litedav-soc --platform sim --spi-flash`; a cut while the chip is busy tears the
    page program or sector erase in progress (the module's cut line says how many bytes).

Each trial streams PUTs of calendar objects (new names and rewrites of old
ones) from a client thread and records every acknowledged one (201/204: the
store synced its record before the answer). Once the first is acknowledged the
cut is armed a random number of cycles ahead (up to STORM_PUTS PUTs' worth). Then:
  1. the image, read on the host by an independent reader of the format
     (firmware/tools/store_image.py), must hold every acknowledged object byte
     for byte, the one in flight at the cut old, new or (if new) absent, and no
     malformed record;
  2. the SoC boots again on the same image; its store check after the mount
     (firmware/app/store/store_check.c store_check, "store check: ok" on the console) must
     pass;
  3. the firmware must agree with the image: one PROPFIND lists every object
     with the ETag (record sequence) the image holds, and GETs of the object
     in flight and of a few others return the image's bodies.

Fast mode (make test): 3 trials on each device, cut within 3 PUTs. LITEDAV_FUZZ=1:
20; LITEDAV_SOAK=1: 100 on the sim flash alone, cut within 8 PUTs on a 128 KiB flash
so that the log wraps and compacts many times, recorded in the reliability report
(the store flash is a 32 MiB chip: its log would not wrap).
LITEDAV_POWERFAIL_CUTS, LITEDAV_POWERFAIL_STORM (PUTs) and LITEDAV_POWERFAIL_FLASH
override (the flash: a multiple of 64 KiB, at least 128 KiB), LITEDAV_SEED
(default 12345) seeds the PUTs and the cut cycles.
"""
import base64
import http.client
import os
import random
import re
import sys
import threading
import time
import xml.etree.ElementTree as ET

import pytest

import reliability_report
from http_checks import Target, status

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "firmware", "tools"))
import store_image  # noqa: E402

TIMEOUT = 120          # wall seconds for one exchange (the sim runs slower than real time)
SIM_CLOCK_HZ = 125_000_000
USER, PASSWORD = "demo", "demo"   # firmware/users.conf
CALENDAR = "/dav/demo/powerfail/"
# what the firmware prints when it found each device (ports/litex/flash_sim.c, flash_litespi.c)
FLASH_PROBED = {"sim_flash": "flash: sim NOR flash", "store_flash": "JEDEC ID 20ba19"}
BLOCK_SIZE = 4096      # the sim flash's erase sectors (ports/litex/flash_sim.c), the store's blocks
FUZZ = os.environ.get("LITEDAV_FUZZ") == "1"
SOAK = os.environ.get("LITEDAV_SOAK") == "1"
DEVICES = ["sim_flash"] if SOAK else ["sim_flash", "store_flash"]
# the cut falls within this many PUTs' cycles after the first acknowledgement: the long run's
# longer storms write enough per trial that the small flash compacts within the 100 trials
STORM_PUTS = int(os.environ.get("LITEDAV_POWERFAIL_STORM", "8" if SOAK else "3"))
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
CUTS = int(os.environ.get("LITEDAV_POWERFAIL_CUTS", "100" if SOAK else "20" if FUZZ else "3"))
FLASH_SIZE = os.environ.get("LITEDAV_POWERFAIL_FLASH", "128KiB" if SOAK else "256KiB")
# objects read back in full per trial, besides the one in flight (every body is compared on the
# image, and the PROPFIND ties each name to the image's record): fewer in the long run, where
# the simulated CPU's cycles per trial bound how many trials fit
GET_SAMPLE = 0 if SOAK else 3
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


def fill_until_compaction(sim, conn, rng, versions, durable, limit=1000):
    """The long run starts from a store that has wrapped: sequential PUTs (no cuts) until the
    image shows the log's oldest block compacted, so that every trial's storm meets compaction
    (cheaper than the tens of reboots a fresh 128 KiB store needs before its first compaction)."""
    first = image_state(sim)["log"]["block_seq"][0]
    for n in range(1, limit + 1):
        name = f"todo-{rng.randrange(NAMES)}.ics"
        versions[name] = versions.get(name, 0) + 1
        body = vtodo(rng, name, versions[name])
        code, answer = request(conn, "PUT", CALENDAR + name, body)
        assert code in (201, 204), f"prefill PUT {name} -> {code} {answer[:200]!r}"
        durable[name] = body
        if image_state(sim)["log"]["block_seq"][0] != first:
            return n
    raise AssertionError(f"{limit} PUTs and the store never compacted: is the flash larger than planned?")


def boot(sim):
    """Start the simulator; returns the target and the console lines of this boot."""
    first = len(sim.console)
    sim.start()
    sim.wait_ready(timeout=600)
    return Target(port=sim.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT), sim.console[first:]


def store_check_line(lines):
    found = [line for line in lines if line.startswith("store check:")]
    assert found, "no 'store check:' line at boot: " + " / ".join(lines[-10:])
    return found[-1]


def arm_power_cut(sim, delay_cycles):
    """The flash module cuts the power delay_cycles after it next looks (every 65,536 cycles)."""
    path = sim.power_cut_file
    with open(path + ".tmp", "w") as f:
        f.write(f"{delay_cycles}\n")
    os.replace(path + ".tmp", path)


def wait_power_cut(sim, timeout):
    """The cycle the power went at (the module's console line)."""
    sim.proc.wait(timeout)
    sim.exited.wait(10)
    cuts = [line for line in sim.console if re.match(r"\[(flash_file|spi_nor_flash)\b.*\] power cut at cycle", line)]
    assert cuts, "the simulator exited without a power cut: " + " / ".join(sim.console[-10:])
    return int(re.search(r"power cut at cycle (\d+)", cuts[-1]).group(1))


def image_state(sim):
    with open(sim.flash, "rb") as f:
        image = store_image.read_image(f.read(), BLOCK_SIZE)
    assert not image["problems"], f"flash image: {image['problems']}"
    return image


def calendar_of(image):
    """The test calendar in an image (the store keys collections by the app's own path form)."""
    found = [c for path, c in image["collections"].items() if path.endswith(CALENDAR)]
    assert len(found) == 1, f"calendar {CALENDAR} on the flash: {sorted(image['collections'])}"
    return found[0]


def listed_etags(conn):
    """name -> ETag of every object in the calendar, from one PROPFIND Depth 1."""
    body = (b'<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getetag/></prop></propfind>')
    code, answer = request(conn, "PROPFIND", CALENDAR, body,
                           {"Depth": "1", "Content-Type": "application/xml"})
    assert code == 207, f"PROPFIND {CALENDAR} -> {code} {answer[:200]!r}"
    etags = {}
    for response in ET.fromstring(answer).iter("{DAV:}response"):
        href = response.findtext("{DAV:}href")
        etag = response.findtext(".//{DAV:}getetag")
        name = href.rstrip("/").rsplit("/", 1)[-1]
        if etag and not href.endswith("/"):
            etags[name] = etag
    return etags


@pytest.fixture(params=DEVICES)
def simulator(request, tmp_path):
    from litedav.sim.run import SimOptions, Simulator, free_port
    from litedav.soc.sizes import parse_size
    power_cut_file = str(tmp_path / "power_cut")
    if request.param == "sim_flash":
        # flash module arguments ride on flash_timing (passed through to the module as they are)
        options = SimOptions(port=free_port(), echo=False, flash=str(tmp_path / "flash.bin"), fresh_flash=True,
                             flash_size=parse_size(FLASH_SIZE), flash_timing={"power_cut_file": power_cut_file})
        sim = Simulator(request.getfixturevalue("sim_build"), options)
    else:
        options = SimOptions(port=free_port(), echo=False, flash=str(tmp_path / "store-flash.bin"), fresh_flash=True,
                             spi_flash_args={"power_cut_file": power_cut_file})
        sim = Simulator(request.getfixturevalue("spiflash_build"), options)
        assert sim.store_flash, "the --spi-flash build has no store flash (platforms/store_flash.py)"
    sim.device, sim.power_cut_file = request.param, power_cut_file
    yield sim
    sim.stop()
    print("\n--- simulator console (last lines) ---\n" + "\n".join(sim.console[-15:]))


def test_power_cuts_lose_nothing_acknowledged(simulator):
    rng = random.Random(SEED)
    target, lines = boot(simulator)
    assert any(FLASH_PROBED[simulator.device] in line for line in lines), (
        f"the firmware never probed the {simulator.device}: ports/litex/main.c must mount the store on "
        "port_flash() (ports/litex/flash_sim.c, flash_litespi.c), or data lives in RAM and dies with the power")
    assert store_check_line(lines).startswith("store check: ok")

    conn = target.connection()
    code, answer = request(conn, "MKCALENDAR", CALENDAR)
    assert code == 201, f"MKCALENDAR -> {code} {answer[:200]!r}"
    body = vtodo(rng, "probe.ics", 1)
    code, answer = request(conn, "PUT", CALENDAR + "probe.ics", body)
    assert code == 201, f"PUT -> {code} {answer[:200]!r}"

    # Cycles per PUT: the CPU's busy cycles (status page) over a few sequential rewrites.
    before = status(target)
    for i in range(5):
        body = vtodo(rng, "probe.ics", 2 + i)
        code, _ = request(conn, "PUT", CALENDAR + "probe.ics", body)
        assert code == 204, f"PUT over probe.ics -> {code}"
    after = status(target)
    conn.close()
    put_cycles = (after["busy_cycles"] - before["busy_cycles"]) // 5
    print(f"\nCPU cycles per PUT (busy cycles / 5, incl. one status request): {put_cycles}")

    durable = {"probe.ics": body}   # name -> what GET must return
    versions = {}
    prefill = 0
    if SOAK:
        conn = target.connection()
        prefill = fill_until_compaction(simulator, conn, rng, versions, durable)
        conn.close()
        print(f"prefill: {prefill} PUTs until the store first compacted")
    figures = {"trials": 0, "prefill_puts": prefill, "acknowledged_puts": 0, "objects_verified": 0, "bodies_read_back": 0,
               "in_flight_old": 0, "in_flight_new": 0, "in_flight_absent": 0, "no_put_in_flight": 0,
               "trials_with_compaction": 0, "blocks_compacted": 0, "torn_bytes_max": 0,
               "store_check_ok": 0, "store_check_failed": 0, "image_problems": 0}
    cut_cycles = []
    cut_rng = random.Random(SEED + 1)   # the writer thread draws from rng meanwhile
    tail_seq = first_tail_seq = image_state(simulator)["log"]["block_seq"][0]  # after any prefill
    for cut in range(CUTS):
        writer = Writer(target.port, rng, versions)
        writer.start()
        assert writer.first_ack.wait(TIMEOUT), (
            f"cut {cut}: no PUT acknowledged: {writer.refused or 'no answer'}")
        delay = cut_rng.randrange(1, STORM_PUTS * put_cycles)
        arm_power_cut(simulator, delay)
        cut_cycles.append(wait_power_cut(simulator, TIMEOUT * STORM_PUTS))
        writer.stop.set()
        writer.join(TIMEOUT)
        assert writer.refused is None, f"cut {cut}: PUT refused: {writer.refused[0]} {writer.refused[1][:300]!r}"
        figures["acknowledged_puts"] += len(writer.acked)

        # 1. the image itself, read on the host
        durable.update(writer.acked)
        in_flight = writer.in_flight
        image = image_state(simulator)
        held = calendar_of(image)["objects"]
        for name, expected in durable.items():
            got = held.get(name)
            if in_flight and name == in_flight[0]:
                assert got in (expected, in_flight[1]), (
                    f"cut {cut}: {name} (rewrite in flight at the cut): neither old nor new on the flash")
                figures["in_flight_old" if got == expected else "in_flight_new"] += 1
                durable[name] = got
                continue
            assert got is not None, f"cut {cut}: acknowledged {name} missing from the flash image"
            assert got == expected, f"cut {cut}: {name} differs on the flash ({len(got)} vs {len(expected)} bytes)"
        if in_flight and in_flight[0] not in durable:
            got = held.get(in_flight[0])
            assert got in (None, in_flight[1]), f"cut {cut}: new {in_flight[0]} (in flight) torn on the flash"
            figures["in_flight_new" if got else "in_flight_absent"] += 1
            if got:
                durable[in_flight[0]] = got
        if not in_flight:
            figures["no_put_in_flight"] += 1
        assert set(held) == set(durable), f"cut {cut}: objects nobody wrote: {set(held) - set(durable)}"
        figures["objects_verified"] += len(durable)
        figures["torn_bytes_max"] = max(figures["torn_bytes_max"], image["log"]["torn_bytes"])
        if image["log"]["block_seq"][0] != tail_seq:
            figures["trials_with_compaction"] += 1
        tail_seq = image["log"]["block_seq"][0]
        figures["blocks_compacted"] = tail_seq - first_tail_seq  # during the trials, not the prefill

        # 2. the firmware's own check after the mount
        target, lines = boot(simulator)
        check = store_check_line(lines)
        figures["store_check_ok" if check.startswith("store check: ok") else "store_check_failed"] += 1
        assert check.startswith("store check: ok"), f"cut {cut}: {check}"

        # 3. the firmware's replay agrees with the image
        conn = target.connection()
        etags = listed_etags(conn)
        image_etags = calendar_of(image)["etags"]
        assert etags == {name: f'"{etag:08x}"' for name, etag in image_etags.items()}, (
            f"cut {cut}: the firmware lists other objects or ETags than the flash holds")
        sample = rng.sample(sorted(durable), min(GET_SAMPLE, len(durable)))
        if in_flight and in_flight[0] in durable and in_flight[0] not in sample:
            sample.append(in_flight[0])
        for name in sample:
            code, got = request(conn, "GET", CALENDAR + name)
            assert code == 200 and got == durable[name], f"cut {cut}: GET {name} -> {code}, not the flash's body"
        if in_flight and in_flight[0] not in durable:
            code, _ = request(conn, "GET", CALENDAR + in_flight[0])
            assert code == 404, f"cut {cut}: {in_flight[0]} absent from the flash, but GET -> {code}"
        figures["bodies_read_back"] += len(sample)
        conn.close()
        figures["trials"] += 1
        if (SOAK or FUZZ) and simulator.device == "sim_flash" and figures["trials"] % 10 == 0 and figures["trials"] < CUTS:
            record(figures, cut_cycles, put_cycles, complete=False)  # an interrupted run still reports

    print(f"power cuts on the {simulator.device}: {CUTS} (seed {SEED}, sim flash {FLASH_SIZE}) at sys_clk cycles "
          f"{min(cut_cycles):,}..{max(cut_cycles):,}: {figures}")
    if (SOAK or FUZZ) and simulator.device == "sim_flash":
        record(figures, cut_cycles, put_cycles, complete=True)
    assert figures["blocks_compacted"] > 0 or CUTS < 20 or simulator.device != "sim_flash", (
        "the long run never reached compaction: use a smaller flash")


def record(figures, cut_cycles, put_cycles, complete):
    figures = dict(figures, seed=SEED, flash=FLASH_SIZE, cycles_per_put=put_cycles, planned_trials=CUTS,
                   complete=complete, cut_cycle_min=min(cut_cycles), cut_cycle_max=max(cut_cycles))
    reliability_report.record("power_cuts", figures, summary_md(figures), title="Power cuts during write storms")


def summary_md(f):
    return "\n".join([
        ("" if f["complete"] else f"**Interrupted run: {f['trials']} of {f['planned_trials']} trials.** ") +
        f"{f['trials']} power cuts at random sys_clk cycles (cycles {f['cut_cycle_min']:,} to "
        f"{f['cut_cycle_max']:,} after each boot; within {STORM_PUTS} PUTs, {f['cycles_per_put']:,} cycles "
        f"each, of the first acknowledgement) during PUT storms on a {f['flash']} sim flash, seed {f['seed']}. "
        f"Before the first cut, {f.get('prefill_puts', 0)} PUTs filled the store until it compacted, so the "
        f"storms run on a wrapped log.",
        "",
        "| figure | value |", "|---|---|",
        f"| trials (cut, image checked, reboot, store check, firmware compared with the image) | {f['trials']} |",
        f"| PUTs acknowledged (201/204) before a cut | {f['acknowledged_puts']} |",
        f"| acknowledged objects verified on the flash image, summed over trials | {f['objects_verified']} |",
        f"| objects lost or changed | 0 |",
        f"| bodies read back over HTTP after the reboot | {f['bodies_read_back']} |",
        f"| PUT in flight at the cut: old version kept / new version / new object absent | "
        f"{f['in_flight_old']} / {f['in_flight_new']} / {f['in_flight_absent']} |",
        f"| cuts with no PUT in flight (between requests) | {f['no_put_in_flight']} |",
        f"| trials during which the store compacted / blocks compacted in all | "
        f"{f['trials_with_compaction']} / {f['blocks_compacted']} |",
        f"| largest torn tail dropped at a mount (bytes) | {f['torn_bytes_max']} |",
        f"| store check after the reboot: ok / failed | {f['store_check_ok']} / {f['store_check_failed']} |",
        f"| malformed records in the image (host reader) | {f['image_problems']} |",
    ])
