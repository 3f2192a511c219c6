"""The boards' flash path in the simulator: the firmware's LiteSPI driver
(firmware/ports/litex/flash_litespi.c) on LiteX's LiteSPI core and 1x SDR PHY (the boot chip)
and the store flash's SPI master (gateware/spi_master.py), with SPI NOR chip models on their
pads (sim/modules/spi_nor_flash): the Colorlight i5's boot chip (a GD25Q16) and its store flash
(the Pmod's 32 MiB MT25QL256, platforms/store_flash.py), each kept in a host file: the SoC of
`litedav-soc --platform sim --spi-flash`, built in build/sim-spiflash (LITEDAV_SPIFLASH_BUILD:
another folder).

  1. The store lives on the store flash, above 16 MiB too: a PUT on a fresh chip, power off;
     the image is turned by 4,100 blocks on the host (the store's blocks carry no address), so
     that its log sits past the 16 MiB that 3-byte addresses reach, with stale bytes in the
     blocks after it; the second boot mounts it and serves the object back (4-byte reads
     through the store flash's master), and a PUT that opens the next block erases and programs
     there (4-byte erase and program). The image read on the host holds both objects; the
     lowest 16 MiB and the boot chip were never written.
  2. Without the Pmod, the store stays in the boot chip's region, as before the store flash:
     on a chip whose store region holds stale bytes (so a sector erase comes before the
     first program), a PUT is acknowledged, the simulator is stopped (power off), and a
     second boot on the same chip image serves it back; the image read on the host
     (firmware/tools/store_image.py) holds it inside the store region (the Colorlight i5's:
     512 KiB at 0x180000) and nothing was written outside it.
  3. No chip at all: the firmware says so and serves with the store in RAM.
  4. A store flash that stays busy after its first page program: the program times out with
     an error (FLASH_ERR_IO) instead of a hang, the store's mount fails, and the server
     serves without it (/dav/ answers 503).
  5. `litedav-soc --platform colorlight_i5 --erase-store` without a board names the cable.
"""
import base64
import http.client
import json
import os
import shutil
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "firmware", "tools"))
import store_image  # noqa: E402

TIMEOUT = 120                 # wall seconds for one exchange
BOOT_TIMEOUT = 120            # wall seconds for a boot
STORE_OFFSET = 0x180000       # platforms/colorlight_i5.py FLASH_STORE_OFFSET
STORE_SIZE = 0x80000          # FLASH_STORE_SIZE
CHIP_SIZE = 2 * 1024 * 1024   # GD25Q16
STORE_CHIP_SIZE = 32 * 1024 * 1024  # the store flash, MT25QL256
BLOCK = 4096                  # the store's blocks: the chips' 4 KiB sectors
THREE_BYTE_REACH = 16 * 1024 * 1024
TURN_BLOCKS = 4100            # test 1 moves the log past THREE_BYTE_REACH
CALENDAR = "/dav/demo/spiflash/"
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}  # firmware/users.conf
EVENT = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//spiflash test//EN\r\n"
         b"BEGIN:VEVENT\r\nUID:standup@spiflash.litedav\r\nDTSTAMP:20261124T090000Z\r\n"
         b"DTSTART:20261125T090000Z\r\nDTEND:20261125T091500Z\r\nSUMMARY:Standup on SPI NOR\r\n"
         b"END:VEVENT\r\nEND:VCALENDAR\r\n")


def simulator(build_dir, tmp_path, **kwargs):
    from litedav.sim.run import SimOptions, Simulator, free_port
    return Simulator(build_dir, SimOptions(port=free_port(), echo=False, flash=str(tmp_path / "spi-flash.bin"),
                                           **kwargs))


def boot(sim):
    """Start; the console lines of this boot up to the ready line. A boot takes about 4 M
    cycles (under 10 s of wall time): a driver waiting for ever on the chip shows as a
    timeout here."""
    first = len(sim.console)
    sim.start()
    sim.wait_ready(timeout=BOOT_TIMEOUT)
    return sim.console[first:]


def request(sim, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", sim.port, timeout=TIMEOUT)
    headers = dict(AUTH)
    if body is not None:
        headers["Content-Type"] = "text/calendar; charset=utf-8"
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    answer = resp.status, resp.getheader("ETag"), resp.read()
    conn.close()
    return answer


def line(lines, prefix):
    found = [text for text in lines if text.startswith(prefix)]
    assert found, f"no '{prefix}' line at boot: " + " / ".join(lines[-12:])
    return found[-1]


def store_event(sim):
    """MKCALENDAR, then a PUT of EVENT into it; returns the object's ETag."""
    code, _, answer = request(sim, "MKCALENDAR", CALENDAR)
    assert code == 201, f"MKCALENDAR -> {code} {answer[:200]!r}"
    code, etag, answer = request(sim, "PUT", CALENDAR + "standup.ics", EVENT)
    assert code == 201, f"PUT -> {code} {answer[:200]!r}"
    return etag


def calendar_objects(image):
    store = store_image.read_image(image, BLOCK)
    assert not store["problems"], store["problems"]
    calendars = [c for path, c in store["collections"].items() if path.endswith(CALENDAR)]
    assert len(calendars) == 1, store["collections"]
    return store, calendars[0]["objects"]


def test_store_flash_holds_the_store_above_16_mib(spiflash_build, tmp_path):
    sim = simulator(spiflash_build, tmp_path, fresh_flash=True)
    try:
        lines = boot(sim)
        probed = line(lines, "flash:")
        assert "mt25ql256" in probed and "JEDEC ID 20ba19" in probed, probed
        assert "store at 0x000000, 32768 KiB" in probed, probed
        assert line(lines, "store:").startswith("store: on flash"), lines
        etag = store_event(sim)
    finally:
        sim.stop()
        sim.exited.wait(10)

    with open(sim.flash, "rb") as f:
        image = f.read()
    assert len(image) == STORE_CHIP_SIZE
    _, objects = calendar_objects(image)
    assert objects == {"standup.ics": EVENT}
    # turn the ring: block b goes to b + TURN_BLOCKS; the blocks after the log get stale bytes
    # (another image's data), so the next block the store opens needs an erase first
    turn = TURN_BLOCKS * BLOCK
    turned = bytearray(image[-turn:] + image[:-turn])
    store = store_image.read_image(bytes(turned), BLOCK)
    head = store["log"]["block_numbers"][-1] + 1
    assert head * BLOCK > THREE_BYTE_REACH, store["log"]
    for b in range(head, head + 4):
        turned[b * BLOCK:(b + 1) * BLOCK] = bytes(range(256)) * (BLOCK // 256)
    with open(sim.flash, "wb") as f:
        f.write(turned)

    stats = tmp_path / "store-flash-stats.json"
    sim.spi_flash_args = {"stats": str(stats)}
    big = EVENT.replace(b"SUMMARY:Standup on SPI NOR\r\n",
                        b"".join(b"DESCRIPTION:" + b"%04d" % i + b"x" * 60 + b"\r\n" for i in range(120)))
    big = big.replace(b"standup@spiflash", b"review@spiflash")
    assert len(big) > 2 * BLOCK
    try:
        lines = boot(sim)
        assert line(lines, "store:").startswith("store: on flash, 1 collections, 1 objects"), lines
        assert line(lines, "store check:").startswith("store check: ok"), lines
        code, etag_again, body = request(sim, "GET", CALENDAR + "standup.ics")
        assert (code, etag_again, body) == (200, etag, EVENT)
        code, _, answer = request(sim, "PUT", CALENDAR + "review.ics", big)
        assert code == 201, f"PUT of {len(big)} bytes -> {code} {answer[:200]!r}"
        code, _, body = request(sim, "GET", CALENDAR + "review.ics")
        assert (code, body) == (200, big)
    finally:
        sim.stop()
        sim.exited.wait(10)
    counters = json.loads(stats.read_text())
    print("\nstore flash counters after the second boot:", counters)
    assert counters["page_programs"] > 0 and counters["erases"] > 0, counters
    assert counters["ignored_while_busy"] == 0 and counters["unknown_commands"] == 0, counters

    with open(sim.flash, "rb") as f:
        image = f.read()
    assert image[:THREE_BYTE_REACH] == b"\xff" * THREE_BYTE_REACH, (
        "bytes below 16 MiB were programmed: a 3-byte address wrapped")
    store, objects = calendar_objects(image)
    assert objects == {"standup.ics": EVENT, "review.ics": big}
    assert min(store["log"]["block_numbers"]) * BLOCK >= THREE_BYTE_REACH, store["log"]
    with open(sim.boot_flash, "rb") as f:
        boot_chip = f.read()
    assert boot_chip == b"\xff" * CHIP_SIZE, "the boot chip was written"


def test_store_stays_on_the_boot_chip_without_the_pmod(spiflash_build, tmp_path):
    # the store region starts out holding bytes that are no store (another image's data): the
    # store must erase a sector before its first block header, so the erase path runs too
    chip = bytearray(b"\xff" * CHIP_SIZE)
    chip[STORE_OFFSET:STORE_OFFSET + STORE_SIZE] = bytes(range(256)) * (STORE_SIZE // 256)
    (tmp_path / "spi-flash.bin").write_bytes(chip)
    stats = tmp_path / "spi-flash-stats.json"
    sim = simulator(spiflash_build, tmp_path, store_flash_attached=False, spi_flash_args={"stats": str(stats)})
    try:
        lines = boot(sim)
        assert line(lines, "flash: no store flash") == (
            "flash: no store flash answered (JEDEC ID 000000): store on the boot flash")
        probed = line(lines, "flash: SPI NOR")
        assert "JEDEC ID c84015" in probed and "store at 0x180000, 512 KiB" in probed, probed
        assert line(lines, "store:").startswith("store: on flash"), lines
        etag = store_event(sim)
    finally:
        sim.stop()
        sim.exited.wait(10)
    counters = json.loads(stats.read_text())
    print("\nchip counters after the first boot:", counters)
    assert counters["page_programs"] > 0 and counters["erases"] > 0, counters
    assert counters["ignored_while_busy"] == 0, counters  # the driver waits for WIP

    with open(sim.flash, "rb") as f:
        image = f.read()
    assert len(image) == CHIP_SIZE
    outside = image[:STORE_OFFSET] + image[STORE_OFFSET + STORE_SIZE:]
    assert outside == b"\xff" * len(outside), (
        "bytes outside the store region were programmed: the driver's offset or range is wrong")
    store = store_image.read_image(image[STORE_OFFSET:STORE_OFFSET + STORE_SIZE], 4096)
    assert not store["problems"], store["problems"]
    calendars = [c for path, c in store["collections"].items() if path.endswith(CALENDAR)]
    assert len(calendars) == 1 and calendars[0]["objects"] == {"standup.ics": EVENT}, store["collections"]

    try:
        lines = boot(sim)
        assert line(lines, "store:").startswith("store: on flash, 1 collections, 1 objects"), lines
        assert line(lines, "store check:").startswith("store check: ok"), lines
        code, etag_again, body = request(sim, "GET", CALENDAR + "standup.ics")
        assert (code, etag_again, body) == (200, etag, EVENT)
    finally:
        sim.stop()


def test_absent_flash_is_reported_and_the_store_runs_in_ram(spiflash_build, tmp_path):
    sim = simulator(spiflash_build, tmp_path, store_flash_attached=False, spi_flash_attached=False)
    try:
        lines = boot(sim)
        assert line(lines, "flash:") == "flash: no SPI flash answered (JEDEC ID 000000): store in RAM"
        assert line(lines, "store:").startswith("store: in RAM"), lines
        code, _, answer = request(sim, "MKCALENDAR", CALENDAR)
        assert code == 201, f"MKCALENDAR on the RAM store -> {code} {answer[:200]!r}"
    finally:
        sim.stop()


def test_chip_stuck_busy_gives_an_error_not_a_hang(spiflash_build, tmp_path):
    # the store writes its first block header at the mount of an empty chip: that program
    # never finishes, and the mount must fail instead of waiting for ever
    sim = simulator(spiflash_build, tmp_path, fresh_flash=True, spi_flash_args={"stuck_busy": 1})
    try:
        lines = boot(sim)
        assert line(lines, "flash: page program:") == "flash: page program: still busy after 10 ms (status 0x01)"
        assert line(lines, "store:") == "store: flash I/O error"
        code, _, _ = request(sim, "PROPFIND", "/dav/demo/")
        assert code == 503, f"/dav/ without a store -> {code}"
        code, _, _ = request(sim, "GET", "/")
        assert code == 200, "the server does not serve after the flash error"
    finally:
        sim.stop()


@pytest.mark.skipif(shutil.which("openFPGALoader") is None, reason="openFPGALoader not installed (make deps)")
def test_erase_store_without_board_names_the_cable():
    proc = subprocess.run([sys.executable, "-m", "litedav.soc.build", "--platform", "colorlight_i5",
                           "--erase-store"], cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "no board found on cable `cmsisdap`" in proc.stdout, proc.stdout
