"""The office-sync benchmark's scenarios (bench/office_sync.py, `make bench`) on a small data
set against litedav-host, so the benchmark's client logic cannot rot: loading users' calendars,
a sync from empty (PROPFIND Depth 1 + calendar-multiget, every body compared), 10 changes by
another client and the incremental sync-collection that must report exactly them, and clients
syncing at once. Also the pcap accounting (time, bytes on the wire) on a hand-built trace, the
board model's store image (32 MiB, its store flash's size: written, mounted and served by
litedav-host --store-size 32, refused by a 16 MiB one), the report's sections per SoC and the
command line's per-SoC defaults. About 15 s.
"""
import json
import os
import re
import shutil
import struct

import pytest

from test_host_server import TIMEOUT, host_build  # noqa: F401
from litedav.bench import office_sync
from litedav.bench.office_data import user_items
from litedav.sim.config import STORE_FLASH_SIZE
from litedav.sim.run import free_port

USERS = office_sync.users_of(3)
ITEMS = 12


@pytest.fixture(scope="module")
def server(host_build, tmp_path_factory):
    store = str(tmp_path_factory.mktemp("office") / "store.flash")
    srv = office_sync.HostServer(host_build, free_port(), store, USERS, timeout=TIMEOUT)
    try:
        office_sync.load(srv.port, USERS, ITEMS)
        yield srv
    finally:
        assert srv.stop() == 0


def expected(user):
    return {name: text for name, _, text in user_items(user, ITEMS)}


def test_users_day_sync_then_incremental(server):
    user = USERS[0]
    items = user_items(user, ITEMS)
    dav = office_sync.Dav(server.port, user)
    state = office_sync.initial_sync(dav, user, expected(user))
    assert len(state["items"]) == ITEMS
    rewrites, new, deleted = office_sync.changed_items(user, items)
    assert (len(rewrites), len(new), len(deleted)) == (7, 2, 1)
    assert not set(rewrites) & set(deleted) and not set(new) & {n for n, _, _ in items}
    for text in rewrites.values():   # valid iCalendar: every content line ends in CRLF
        assert " (moved)\r\n" in text and re.fullmatch(r"(?:[^\r\n]*\r\n)*", text), repr(text[:200])
    office_sync.make_changes(office_sync.Dav(server.port, user), user, state, rewrites, new, deleted)
    reported = office_sync.incremental_sync(office_sync.Dav(server.port, user), user, state, rewrites,
                                            new, deleted)
    assert reported == office_sync.CHANGES
    assert len(state["items"]) == ITEMS + 1
    # the client's cache is now what a fresh client gets
    now = {n: t for n, t in {**expected(user), **rewrites, **new}.items() if n not in deleted}
    fresh = office_sync.initial_sync(office_sync.Dav(server.port, user), user, now)
    assert fresh["items"] == state["items"]
    # a wrong expectation is caught, not passed over
    with pytest.raises(office_sync.BenchError):
        office_sync.initial_sync(dav, user, expected(user))


def test_clients_at_once(server):
    """One client per remaining user at once, as the office run does."""
    import threading
    errors, done = [], []

    def client(user):
        try:
            done.append(len(office_sync.initial_sync(office_sync.Dav(server.port, user), user,
                                                     expected(user))["items"]))
        except Exception as e:
            errors.append(e)
    threads = [threading.Thread(target=client, args=(u,)) for u in USERS[1:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and done == [ITEMS] * (len(USERS) - 1)


def frame(client_port, from_client, flags, payload=b""):
    """An Ethernet/IPv4/TCP frame between 10.0.2.2:client_port and the appliance's port 80."""
    client, server = bytes([10, 0, 2, 2]), bytes([10, 0, 2, 15])
    src, dst = (client, server) if from_client else (server, client)
    sport, dport = (client_port, 80) if from_client else (80, client_port)
    tcp = struct.pack(">HHIIBBHHH", sport, dport, 0, 0, 5 << 4, flags, 65535, 0, 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, src, dst)
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp


def write_pcap(path, records):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
        for ns, data in records:
            f.write(struct.pack("<IIII", ns // 10**9, ns % 10**9, len(data), len(data)) + data)


def test_pcap_accounting(tmp_path):
    """Time from the SYN to the last response frame; client gaps; every frame's wire bytes
    (padded to 60, + 24 of preamble, FCS and gap); HTTP payload both ways."""
    req1, resp1 = b"PROPFIND /dav/u/cal/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 207 Multi-Status\r\n\r\n" + b"x" * 900
    req2, resp2 = b"REPORT /dav/u/cal/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 207 Multi-Status\r\n\r\n" + b"y" * 100
    trace = [(1000, frame(5000, True, 0x02)), (2000, frame(5000, False, 0x12)),
             (3000, frame(5000, True, 0x10)), (4000, frame(5000, True, 0x18, req1)),
             (9000, frame(5000, False, 0x18, resp1)), (20000, frame(5000, True, 0x18, req2)),
             (25000, frame(5000, False, 0x18, resp2)), (40000, frame(5000, True, 0x10)),
             (5000, frame(6000, True, 0x18, b"GET / HTTP/1.1\r\n\r\n"))]
    path = str(tmp_path / "t.pcap")
    write_pcap(path, sorted(trace))
    conns = office_sync.connections(path, byte_ns=8)
    assert set(conns) == {("10.0.2.2", 5000), ("10.0.2.2", 6000)}
    c = conns[("10.0.2.2", 5000)]
    assert office_sync.first_request(c) == "PROPFIND"
    f = office_sync.scenario_figures([c], hz=125_000_000)
    last_end = 25000 + len(frame(5000, False, 0x18, resp2)) * 8
    assert f["elapsed_ns"] == last_end - 1000
    assert f["elapsed_cycles"] == round((last_end - 1000) * 0.125)
    assert f["client_gap_ms_max"] == round((20000 - (9000 + len(frame(5000, False, 0x18, resp1)) * 8)) / 1e6, 3)
    assert f["requests"] == 2
    assert (f["http_bytes_in"], f["http_bytes_out"]) == (len(req1) + len(req2), len(resp1) + len(resp2))
    wire = lambda fr: max(len(fr), 60) + 24  # noqa: E731
    # the final ACK after the last response is outside the window
    assert f["wire_bytes_in"] == sum(wire(fr) for t, fr in trace[:6] if t in (1000, 3000, 4000, 20000))
    assert f["wire_bytes_out"] == sum(wire(fr) for t, fr in trace if t in (2000, 9000, 25000))
    c.syn_in_window = False  # opened beforehand: from its first request
    assert office_sync.scenario_figures([c], hz=125_000_000)["elapsed_ns"] == last_end - 4000


def test_office_window_starts_at_propfind(tmp_path):
    """An office connection is opened and warmed up with OPTIONS before the clients start:
    its figures begin at its PROPFIND; a connection that never syncs is not counted."""
    opt, opt_resp = b"OPTIONS /dav/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 200 OK\r\n\r\n"
    req1, resp1 = b"PROPFIND /dav/u/cal/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 207 Multi-Status\r\n\r\n" + b"x" * 900
    req2, resp2 = b"REPORT /dav/u/cal/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 207 Multi-Status\r\n\r\n" + b"y" * 100
    trace = [(1000, frame(5000, True, 0x02)), (2000, frame(5000, False, 0x12)),
             (3000, frame(5000, True, 0x10)), (4000, frame(5000, True, 0x18, opt)),
             (5000, frame(5000, False, 0x18, opt_resp)), (60000, frame(5000, True, 0x18, req1)),
             (65000, frame(5000, False, 0x18, resp1)), (90000, frame(5000, True, 0x18, req2)),
             (95000, frame(5000, False, 0x18, resp2)),
             (6000, frame(6000, True, 0x18, opt)), (7000, frame(6000, False, 0x18, opt_resp))]
    path = str(tmp_path / "office.pcap")
    write_pcap(path, sorted(trace))
    synced = office_sync.office_conns(path, "gmii")
    assert [c.client for c in synced] == [("10.0.2.2", 5000)]
    f = office_sync.scenario_figures(synced, hz=125_000_000)
    assert f["elapsed_ns"] == 95000 + len(frame(5000, False, 0x18, resp2)) * 8 - 60000
    assert f["requests"] == 2
    assert f["client_gap_ms_max"] == round((90000 - 65000 - len(frame(5000, False, 0x18, resp1)) * 8) / 1e6, 3)
    assert (f["http_bytes_in"], f["http_bytes_out"]) == (len(req1) + len(req2), len(resp1) + len(resp2))


def test_report_keeps_the_other_scenario(tmp_path):
    """A run of one scenario (--no-day / --no-office) merges into the other's figures."""
    fig = {"elapsed_ms": 1.5, "elapsed_cycles": 187500, "client_gap_ms_max": 0.01, "cpu_busy_cycles": 9,
           "requests": 2, "wire_bytes_in": 1, "wire_bytes_out": 2, "http_bytes_in": 3, "http_bytes_out": 4,
           "rx_dropped": 0}
    day = {"nic": "liteeth", "phy": "gmii", "link_mbps": 1000, "sys_clk_hz": 125_000_000,
           "users_day": {"initial": {**fig, "objects": 200},
                         "incremental": {**fig, "changes": 10, "hrefs_reported": 10}}}
    office = {"nic": "liteeth", "phy": "gmii", "link_mbps": 1000, "sys_clk_hz": 125_000_000,
              "office": {**fig, "clients": 8, "users": 8, "items_per_user": 200, "objects_synced": 1600,
                         "ical_bytes": 1_180_000, "retries_503": 3}}
    office_sync.merge_reports([day], str(tmp_path))
    merged = office_sync.merge_reports([office], str(tmp_path))
    assert len(merged) == 1 and "users_day" in merged[0] and "office" in merged[0]
    text = (tmp_path / "latest.md").read_text()
    assert text.count(office_sync.MD_BEGIN) == 1
    assert "user's day from empty" in text and "8 clients at once" in text


def test_client_done_spread(tmp_path):
    """Per-client completion: each connection's last response end, from the scenario's start."""
    req, resp = b"PROPFIND /dav/u/cal/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 207 Multi-Status\r\n\r\n" + b"x" * 100
    trace = []
    for port, t0, t1 in ((5000, 10_000, 1_000_000), (6000, 20_000, 3_000_000), (7000, 30_000, 2_000_000)):
        trace += [(t0, frame(port, True, 0x18, req)), (t1, frame(port, False, 0x18, resp))]
    path = str(tmp_path / "spread.pcap")
    write_pcap(path, sorted(trace))
    f = office_sync.scenario_figures(office_sync.office_conns(path, "gmii"), hz=125_000_000)
    end = len(frame(5000, False, 0x18, resp)) * 8
    assert f["client_done_ms_min"] == round((1_000_000 + end - 10_000) / 1e6, 3)
    assert f["client_done_ms_median"] == round((2_000_000 + end - 10_000) / 1e6, 3)
    assert f["client_done_ms_max"] == round((3_000_000 + end - 10_000) / 1e6, 3) == f["elapsed_ms"]
    assert "clients done between" in office_sync.office_note({**f, "clients": 3, "cpu_busy_cycles": 1,
                                                              "elapsed_cycles": 2}, 1000)


def test_progress_reads_a_growing_pcap(tmp_path):
    """The progress lines' pcap reader takes complete records only and resumes where it
    stopped: simulated time of the latest frame, the first PROPFIND, bytes out of the SoC."""
    req, resp = b"PROPFIND /dav/u/cal/ HTTP/1.1\r\n\r\n", b"HTTP/1.1 207 Multi-Status\r\n\r\n" + b"x" * 100
    path = str(tmp_path / "grow.pcap")
    write_pcap(path, [(1000, frame(5000, True, 0x18, b"OPTIONS /dav/ HTTP/1.1\r\n\r\n")),
                      (7000, frame(5000, True, 0x18, req))])
    out = frame(5000, False, 0x18, resp)
    record = struct.pack("<IIII", 2, 5, len(out), len(out)) + out
    with open(path, "ab") as f:
        f.write(record[:30])               # the simulator is still writing this one
    tail = office_sync.PcapTail(path)
    tail.poll()
    assert (tail.frames, tail.last_ns, tail.first_propfind_ns, tail.bytes_out) == (2, 7000, 7000, 0)
    with open(path, "ab") as f:
        f.write(record[30:])
    tail.poll()
    assert (tail.frames, tail.last_ns, tail.bytes_out) == (3, 2_000_000_005, len(out))
    tail.poll()
    assert tail.frames == 3


BOARD = "colorlight_i5"


def test_board_store_image_is_mounted_and_served(host_build, tmp_path):
    """store_image for the board model's store flash: a 32 MiB file (the size in its name, so
    the 16 MiB image of the same data is another file) that litedav-host --store-size 32
    mounts, checks and serves: every user's sync from empty compares every body, and a user's
    day's 10 changes and incremental sync go through. A 16 MiB litedav-host refuses it and
    leaves it as it was."""
    users = office_sync.users_of(2)
    work = str(tmp_path / "images")
    size_mib = office_sync.store_size(BOARD) // office_sync.MIB
    assert office_sync.store_size(BOARD) == office_sync.BOARD_STORE_FLASH_SIZE == STORE_FLASH_SIZE == 32 << 20
    image = office_sync.store_image(len(users), ITEMS, work_dir=work, size_mib=size_mib, binary=host_build,
                                    log=lambda m: None)
    assert os.path.getsize(image) == STORE_FLASH_SIZE and "-32MiB-" in os.path.basename(image)
    stamp = os.stat(image).st_mtime_ns
    assert office_sync.store_image(len(users), ITEMS, work_dir=work, size_mib=size_mib, binary=host_build,
                                   log=lambda m: None) == image
    assert os.stat(image).st_mtime_ns == stamp  # kept, not written again
    ideal = office_sync.store_image(len(users), ITEMS, work_dir=work, binary=host_build, log=lambda m: None)
    assert ideal != image and os.path.getsize(ideal) == office_sync.store_size("ideal") == 16 << 20

    copy = str(tmp_path / "store-flash.flash")  # as the bench boots a copy
    shutil.copyfile(image, copy)
    srv = office_sync.HostServer(host_build, free_port(), copy, users, timeout=TIMEOUT, store_size_mib=size_mib)
    try:
        assert any(line.startswith("store check: ok") for line in srv.console), srv.console
        for user in users:
            state = office_sync.initial_sync(office_sync.Dav(srv.port, user), user, expected(user))
            assert len(state["items"]) == ITEMS
        user = users[0]
        state = office_sync.initial_sync(office_sync.Dav(srv.port, user), user, expected(user))
        rewrites, new, deleted = office_sync.changed_items(user, user_items(user, ITEMS))
        office_sync.make_changes(office_sync.Dav(srv.port, user), user, state, rewrites, new, deleted)
        assert office_sync.incremental_sync(office_sync.Dav(srv.port, user), user, state, rewrites, new,
                                            deleted) == office_sync.CHANGES
    finally:
        assert srv.stop() == 0
    assert os.path.getsize(copy) == STORE_FLASH_SIZE

    with pytest.raises(office_sync.BenchError, match="not a 16 MiB image"):
        office_sync.HostServer(host_build, free_port(), copy, users, timeout=TIMEOUT)
    assert os.path.getsize(copy) == STORE_FLASH_SIZE


def figures(ms, hz):
    return {"elapsed_ms": ms, "elapsed_cycles": round(ms * hz / 1e3), "client_gap_ms_max": 0.01,
            "cpu_busy_cycles": 9, "requests": 2, "wire_bytes_in": 1, "wire_bytes_out": 2, "http_bytes_in": 3,
            "http_bytes_out": 4, "rx_dropped": 0}


def day_result(soc, nic, phy, hz, ms, boot_cycles=1_000_000):
    return {"soc": soc, "nic": nic, "phy": phy, "link_mbps": office_sync.PHY_MBPS[phy], "sys_clk_hz": hz,
            "users_day": {"boot_cycles": boot_cycles, "initial": {**figures(ms, hz), "objects": 200},
                          "incremental": {**figures(ms / 10, hz), "changes": 10, "hrefs_reported": 10}}}


def test_report_keeps_the_other_soc(tmp_path):
    """The board model's rows go to a section of their own; a run on one SoC keeps the other
    SoC's section, and each table names its SoC and gives cycles and ms at that SoC's clock."""
    out = str(tmp_path)
    ideal = day_result("ideal", "offload", "gmii", 125_000_000, 260.0)
    board = day_result(BOARD, "offload", "mii", 75_000_000, 600.0, boot_cycles=75_000_000)
    office_sync.merge_reports([ideal], out)
    office_sync.merge_reports([board], out)
    board_office = {"soc": BOARD, "nic": "offload", "phy": "mii", "link_mbps": 100, "sys_clk_hz": 75_000_000,
                    "office": {**figures(9000.0, 75_000_000), "clients": 3, "users": 3, "items_per_user": 200,
                               "objects_synced": 600, "ical_bytes": 443_000, "retries_503": 0}}
    office_sync.merge_reports([board_office], out)       # the board's office beside its day
    office_sync.merge_reports([{**ideal, "users_day": {**ideal["users_day"], "boot_cycles": 7}}], out)

    data = json.loads((tmp_path / "latest.json").read_text())
    assert [r["soc"] for r in data["office_sync"]] == ["ideal"]
    assert data["office_sync"][0]["users_day"]["boot_cycles"] == 7
    [b] = data[office_sync.section(BOARD)]
    assert office_sync.section(BOARD) == "office_sync_colorlight_i5"
    assert b["soc"] == BOARD and "users_day" in b and "office" in b
    text = (tmp_path / "latest.md").read_text()
    begin, end = office_sync.md_markers(BOARD)
    assert text.count(office_sync.MD_BEGIN) == text.count(begin) == text.count(end) == 1
    ideal_md = text[text.index(office_sync.MD_BEGIN):text.index(office_sync.MD_END)]
    board_md = text[text.index(begin):text.index(end)]
    assert "ideal SoC" in ideal_md and "125 MHz" in ideal_md and "the sim flash" in ideal_md
    assert "colorlight_i5 board model" in board_md and "75 MHz" in board_md and "MII 100 Mbit/s" in board_md
    assert "MT25QL256, 32 MiB" in board_md and "3 clients at once" in board_md
    # figures at the board's own clock: 600 ms are 45 M cycles at 75 MHz; its boot 1,000 ms
    assert "600.000 ms (45,000,000 cycles" in board_md and "75,000,000 cycles (1,000.0 ms)" in board_md
    assert "260.000 ms (32,500,000 cycles" in ideal_md and "600.000 ms" not in ideal_md


def test_soc_options():
    """--soc colorlight_i5 runs its board's NIC and PHY unless told otherwise; LiteEth and GMII,
    which its model does not have, are refused."""
    args = office_sync.parse_args(["--soc", BOARD, "--no-office"])
    assert (args.soc, args.nic, args.phy) == (BOARD, ["offload"], "mii")
    args = office_sync.parse_args([])
    assert (args.soc, args.nic, args.phy) == ("ideal", ["liteeth"], "gmii")
    for bad in (["--nic", "liteeth"], ["--nic", "liteeth", "offload"], ["--phy", "gmii"]):
        with pytest.raises(SystemExit):
            office_sync.parse_args(["--soc", BOARD, *bad])
    # the board model's waits are longer than the ideal SoC's, and bounded
    assert all(b > i for b, i in zip(office_sync.timeouts(BOARD), office_sync.timeouts("ideal")))
    assert max(office_sync.timeouts(BOARD)) <= 24 * 3600


def test_boot_refuses_an_image_of_another_size(tmp_path):
    """A board model's build (its csr.h has the store flash's LiteSPI core) boots a 32 MiB image
    only: a 16 MiB one is refused before the simulator starts, and nothing is copied."""
    generated = tmp_path / "build" / "software" / "include" / "generated"
    generated.mkdir(parents=True)
    (generated / "csr.h").write_text("#define CSR_SPIFLASH_CORE_BASE 1\n#define CSR_STOREFLASH_CORE_BASE 2\n")
    image = tmp_path / "ideal.flash"
    with open(image, "wb") as f:
        f.truncate(office_sync.store_size("ideal"))
    copy = tmp_path / "run.flash"
    with pytest.raises(office_sync.BenchError, match="16 MiB, the SoC's store device 32 MiB"):
        office_sync.boot(str(tmp_path / "build"), str(image), "mii", None, str(copy), log=lambda m: None)
    assert not copy.exists()


class FakeSim:
    """Simulator.wait_ready's contract: TimeoutError until the firmware serves."""

    def __init__(self, ready_after):
        self.calls, self.ready_after = 0, ready_after
        self.console = ["LiteDAV firmware (litex, 75000000 Hz)",
                        "[slirp_ethernet] 12.5 M cycles simulated (0.1667 s at 75 MHz) in 40.0 s of wall time: "
                        "0.312 M cycles/s"]

    def wait_ready(self, timeout):
        self.calls += 1
        if self.calls <= self.ready_after:
            import time
            time.sleep(timeout)
            raise TimeoutError("not yet")
        return True


def test_boot_wait_logs_progress_and_is_bounded():
    lines = []
    sim = FakeSim(ready_after=2)
    office_sync.wait_booted(sim, timeout=10, log=lines.append, every=0.01)
    assert sim.calls == 3 and len(lines) == 2
    assert all("12.5 M cycles simulated" in line and "of at most 10 s" in line for line in lines)
    with pytest.raises(office_sync.BenchError, match="did not serve within"):
        office_sync.wait_booted(FakeSim(ready_after=10**6), timeout=0.05, log=lines.append, every=0.01)
