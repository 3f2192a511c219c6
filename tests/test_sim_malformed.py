"""Malformed traffic into the NIC during normal service (sim/modules/slirp_ethernet/malformed.c).

1. The generator alone, compiled natively with a driver (tests/host/malformed_driver.c): every
   kind of frame is what its name says (checked here by parsing it independently), generated
   TCP never comes from a port a host client could use, and the same seed gives the same frames.
2. Both SoCs (LiteEth's MAC, and the offload NIC with its DMA rings) serve CalDAV clients (PUT,
   GET, REPORT, DELETE, every body byte-exact; tests/test_sim_faults.py's clients) while the
   module inserts malformed frames into their PHY: random bytes, runts, jumbo frames, bad
   ethertypes and IPv4 headers, IP options, fragments that never complete, TCP with bad data
   offsets and odd flags, odd UDP and ICMP. The gateware must never wedge: frames keep flowing
   (the SoC's frame counters advance after the run and a fresh connection is served), and every
   good request is answered correctly. Every kind must have been injected.

`make test` runs part 1. Part 2 is opt-in: LITEDAV_MALFORMED=1 runs a short one
(FAST_TRANSACTIONS by FAST_CLIENTS on each SoC), LITEDAV_SOAK=1 (`make soak`) a long one
(SOAK_TRANSACTIONS by SOAK_CLIENTS) that records the figures (frames injected by kind, requests
served, failures, the NIC's drop counters) in bench/results/reliability.{json,md}. Not in `make test` (minutes
of wall time on a loaded machine). Measured, short variant, seed 1: LiteEth 30 transactions by 4
clients, 0 failures, 1,061 malformed frames of every kind, 0.227 s simulated; offload NIC the
same with 1,248 frames, 0.24 s.
Both TCP ends' timers run at TIMER_SCALE x simulated time, as in test_sim_faults.py, so a good
frame lost among the malformed ones costs 1/32 of its retransmission timeout.
"""
import json
import os
import shutil
import subprocess

import pytest

import reliability_report
from test_sim_faults import TIMER_SCALE, Client, ClientsFailed, run_clients, status_page

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(TOP, "sim", "modules", "slirp_ethernet")
KINDS = ("random_bytes", "runt", "oversize", "bad_ethertype", "bad_ip_header", "ip_options",
         "fragment", "tcp_bad_offset", "tcp_odd_flags", "udp_icmp")
SOC_MAC = bytes.fromhex("10e2d5000001")
GATEWAY_MAC = bytes.fromhex("52550a000202")
SOC_IP, GATEWAY_IP = bytes([10, 0, 2, 15]), bytes([10, 0, 2, 2])
FRAME_TRUNCATED, FRAME_INJECTED = 2, 4

INTERVAL_CYCLES = 40000  # a malformed frame every 320 us at 125 MHz on average (at 4,000 the LiteEth SoC's CPU was never idle)
FAST_TRANSACTIONS, FAST_CLIENTS = 30, 4
SOAK_TRANSACTIONS, SOAK_CLIENTS = 400, 10
SIM_CLOCK_HZ = 125_000_000


# -- 1. the generator alone -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("gcc not found")
    exe = str(tmp_path_factory.mktemp("malformed") / "malformed_driver")
    subprocess.run(["gcc", "-Wall", "-Werror", "-O2", "-I", MODULE, "-o", exe,
                    os.path.join(TOP, "tests", "host", "malformed_driver.c"),
                    os.path.join(MODULE, "malformed.c"), "-ljson-c"], check=True)
    return exe


def generate(driver, tmp_path, config, cycles):
    stats = tmp_path / "inject.json"
    out = subprocess.run([driver, json.dumps(config), str(cycles), str(stats)], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    frames = []
    for line in out.splitlines():
        kind, flags, data = line.split()
        frames.append((kind, int(flags), bytes.fromhex(data)))
    return frames, json.loads(stats.read_text()), out


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s  # 0xffff when the data holds its own valid checksum


def ipv4(frame):
    """(header length, total length, protocol, header checksum good, flags+offset) of a frame's IPv4 header."""
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    return ihl, int.from_bytes(ip[2:4], "big"), ip[9], checksum(ip[:max(ihl, 20)]) == 0xffff, \
        int.from_bytes(ip[6:8], "big")


def l4_checksum_good(frame):
    ihl, total, proto, _, _ = ipv4(frame)
    segment = frame[14 + ihl:14 + total]
    pseudo = frame[26:34] + bytes([0, proto]) + len(segment).to_bytes(2, "big")
    return checksum(pseudo + segment) == 0xffff


def from_gateway_to_soc(frame):
    return (frame[:6] == SOC_MAC and frame[6:12] == GATEWAY_MAC and frame[12:14] == b"\x08\x00"
            and frame[26:30] == GATEWAY_IP and frame[30:34] == SOC_IP)


def check_frame(kind, flags, frame):
    """Asserts that frame is a malformed frame of this kind."""
    assert flags & FRAME_INJECTED
    if kind == "random_bytes":
        assert 1 <= len(frame) <= 1600 and flags & FRAME_TRUNCATED
        return
    if kind == "runt":
        assert 1 <= len(frame) < 60 and flags & FRAME_TRUNCATED
        return
    if kind == "oversize":
        assert 1518 < len(frame) <= 9018 and from_gateway_to_soc(frame)
        return
    if kind == "bad_ethertype":
        assert frame[12:14] != b"\x08\x00"
        if frame[12:14] == b"\x08\x06" and len(frame) >= 20:  # ARP: impossible sizes, never learnt
            assert (frame[14:16], frame[18], frame[19]) != (b"\x00\x01", 6, 4)
        return
    ihl, total, proto, header_ok, frag = ipv4(frame)
    if kind == "bad_ip_header":
        ip = frame[14:]
        assert frame[12:14] == b"\x08\x00"
        assert (ip[0] >> 4 != 4 or ihl < 20 or ihl > total or total > len(frame) - 14 or total < 20
                or not header_ok or ip[12:16] in (b"\0\0\0\0", b"\xff\xff\xff\xff") or ip[8] == 0), frame.hex()
        return
    assert from_gateway_to_soc(frame) and header_ok and total == len(frame) - 14, (kind, frame.hex())
    l4 = frame[14 + ihl:]
    if proto in (6, 17) and not frag & 0x3fff:
        assert int.from_bytes(l4[0:2], "big") < 1024, "a source port a host client could have"
    if kind == "ip_options":
        assert ihl > 20 and proto == 6 and l4_checksum_good(frame)
    elif kind == "fragment":
        assert frag & 0x2000 or frag & 0x1fff
    elif kind == "tcp_bad_offset":
        offset = (l4[12] >> 4) * 4
        assert proto == 6 and l4_checksum_good(frame) and (offset < 20 or offset > total - ihl)
    elif kind == "tcp_odd_flags":
        assert proto == 6 and l4_checksum_good(frame) and (l4[12] >> 4) == 5
        assert l4[13] in (0x03, 0x06, 0x05, 0xff, 0x00, 0x20, 0x30, 0x29, 0xc0, 0x07)
    elif kind == "udp_icmp":
        assert proto in (1, 17)
        if proto == 17:
            assert int.from_bytes(l4[4:6], "big") != total - ihl and l4_checksum_good(frame)
    else:
        raise AssertionError(f"unknown kind {kind}")


def test_malformed_frames_are_what_their_kind_says(driver, tmp_path):
    config = {"seed": 5, "interval_cycles": 1000}
    frames, stats, out = generate(driver, tmp_path, config, 3_000_000)
    assert 2500 < len(frames) < 3500  # one every 1000 cycles on average
    for kind, flags, frame in frames:
        check_frame(kind, flags, frame)
    seen = {k: sum(1 for f in frames if f[0] == k) for k in KINDS}
    assert stats["kinds"] == seen and stats["frames"] == len(frames)
    assert all(n > 200 for n in seen.values()), seen
    assert stats["bytes"] == sum(len(f[2]) for f in frames)
    # deterministic: the same seed, the same frames; another seed, others
    assert generate(driver, tmp_path, config, 3_000_000)[2] == out
    assert generate(driver, tmp_path, {**config, "seed": 6}, 3_000_000)[2] != out


def test_malformed_kinds_can_be_chosen_and_bad_configuration_is_refused(driver, tmp_path):
    frames, stats, _ = generate(driver, tmp_path, {"interval_cycles": 500, "kinds": ["runt", "fragment"]},
                                100_000)
    assert {f[0] for f in frames} == {"runt", "fragment"} and set(stats["kinds"]) == {"runt", "fragment"}
    for config in ({"interval_cycles": 0}, {"seed": 1}, {"interval_cycles": 10, "kinds": ["giant"]},
                   {"interval_cycles": 10, "rate": 0.1}):
        r = subprocess.run([driver, json.dumps(config), "1", str(tmp_path / "s.json")],
                           stderr=subprocess.PIPE, text=True)
        assert r.returncode == 2 and "bad config" in r.stderr, config


# -- 2. both SoCs under malformed traffic ------------------------------------------------------------

@pytest.fixture(scope="module", params=["liteeth", "offload"])
def soc_build(request):
    if request.param == "liteeth":
        return "liteeth", request.getfixturevalue("sim_build")
    from litedav.sim.run import build, default_build_dir
    # LITEDAV_SIM_BUILD_OFFLOAD: a folder of its own for a long run (as LITEDAV_SIM_BUILD for LiteEth)
    return "offload", build(os.environ.get("LITEDAV_SIM_BUILD_OFFLOAD") or default_build_dir("offload"),
                            nic="offload")


@pytest.mark.skipif(not (os.environ.get("LITEDAV_MALFORMED") == "1" or os.environ.get("LITEDAV_SOAK") == "1"),
                    reason="opt-in (LITEDAV_MALFORMED=1, or make soak): minutes of wall time")
def test_good_traffic_flows_through_malformed_frames(soc_build, tmp_path):
    from litedav.sim.run import SimOptions, Simulator, free_port
    nic, build_dir = soc_build
    soak = os.environ.get("LITEDAV_SOAK") == "1"
    transactions, clients = (SOAK_TRANSACTIONS, SOAK_CLIENTS) if soak else (FAST_TRANSACTIONS, FAST_CLIENTS)
    seed = int(os.environ.get("LITEDAV_MALFORMED_SEED", 1))
    sim = Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True,
                                          inject={"interval_cycles": INTERVAL_CYCLES, "seed": seed},
                                          slirp_clock_scale=TIMER_SCALE, lwip_clock_scale=TIMER_SCALE))
    sim.start()
    try:
        sim.wait_ready(timeout=300)
        setup = Client(sim.port)
        calendar = "/dav/demo/malformed/"
        assert setup.request("MKCALENDAR", calendar)[0] == 201
        before = status_page(sim.port)
        def more():  # until every kind has been injected at least once
            counters = sim.inject_counters()
            return counters is None or not all(counters["kinds"].get(k) for k in KINDS)

        def figures_of(results, wall, now, counters, complete):
            done = {op: sum(r[op] for r in results) for op in ("PUT", "GET", "REPORT", "DELETE")}
            return {"nic": nic, "transactions": sum(done.values()), "planned_transactions": transactions,
                    "clients": clients, "by_method": done, "complete": complete,
                    "failures": 0, "seed": seed, "interval_cycles": INTERVAL_CYCLES,
                    "injected": counters["frames"], "injected_bytes": counters["bytes"],
                    "injected_by_kind": counters["kinds"],
                    "frames_in": int(now["frames_in"]) - int(before["frames_in"]),
                    "rx_dropped": int(now["rx_dropped"]) - int(before["rx_dropped"]),
                    "requests": int(now["requests"]) - int(before["requests"]),
                    "responses_5xx": int(now["responses_5xx"]) - int(before["responses_5xx"]),
                    "conns_timed_out": int(now["conns_timed_out"]) - int(before["conns_timed_out"]),
                    "pbuf_pool_err": int(now.get("pbuf_pool_err", 0)),
                    "simulated_seconds": round((int(now["uptime_cycles"]) - int(before["uptime_cycles"]))
                                               / SIM_CLOCK_HZ, 3),
                    "wall_seconds": round(wall)}

        def progress(results, wall):  # a long run that is stopped or dies still reports
            counters = sim.inject_counters()
            if counters is not None:
                record_soak(nic, figures_of(results, wall, status_page(sim.port), counters, False))
        try:
            results, wall = run_clients(sim.port, calendar, transactions, clients, seed, more, 20,
                                        progress=progress if soak else None, progress_every=300)
        except ClientsFailed as e:
            if soak:  # the report must not keep an earlier interim record's "0 failures"
                figures = e.mark(figures_of(e.results, e.wall, status_page(sim.port), sim.inject_counters(), False))
                record_soak(nic, figures)
            raise
        after = status_page(sim.port)
        # the link still works after the storm: a fresh connection, and the counters moved on
        again = Client(sim.port)
        assert again.request("GET", calendar)[0] in (200, 207, 405)
        again.close()
        final = status_page(sim.port)
        setup.close()
    finally:
        ended = sim.proc.poll() if sim.proc else None
        sim.stop()
        print(f"\n--- simulator {'exited by itself with code ' + str(ended) if ended is not None else 'stopped'}"
              " (console, last lines) ---\n" + "\n".join(sim.console[-20:]))
    counters = sim.inject_counters()
    assert int(final["frames_in"]) > int(after["frames_in"]) > int(before["frames_in"])
    figures = figures_of(results, wall, after, counters, True)
    print(f"[malformed] {json.dumps(figures, sort_keys=True)}")
    assert all(counters["kinds"].get(k) for k in KINDS), counters
    assert figures["transactions"] >= transactions
    if soak:
        record_soak(nic, figures)


def record_soak(nic, figures):
    """One report section for both SoCs: each run adds its own row."""
    path = os.environ.get(reliability_report.ENV)
    runs = dict(reliability_report.load(path).get("malformed_traffic", {}).get("runs", {})) if path else {}
    runs[nic] = figures
    lines = ["CalDAV clients (PUT/GET/REPORT/DELETE, every body byte-exact) on each SoC while the sim's "
             f"Ethernet module inserts a malformed frame every {INTERVAL_CYCLES} cycles on average "
             "(sim/modules/slirp_ethernet/malformed.h). After each complete run the gateware had not "
             "wedged: frames kept flowing and a fresh connection was served; an interrupted run's row "
             "holds the figures it recorded as it went, before that check.", "",
             "| NIC | transactions | failures | injected frames | requests served | 5xx | frames in | rx_dropped | "
             "simulated s | wall s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, f in sorted(runs.items()):
        interrupted = ("" if f.get("complete", True) else
                       f" (failed run: {'; '.join(f['failed'])})" if f.get("failed") else
                       f" (interrupted run: {f['transactions']} of {f['planned_transactions']} done when last recorded)")
        lines.append(f"| {name} | {f['transactions']} by {f['clients']} clients{interrupted} | {f['failures']} | "
                     f"{f['injected']} ({f['injected_bytes']} bytes) | {f['requests']} | {f.get('responses_5xx', '?')} | {f['frames_in']} | "
                     f"{f['rx_dropped']} | {f['simulated_seconds']} | {f['wall_seconds']} |")
    lines += ["", "| NIC | " + " | ".join(KINDS) + " |", "|---|" + "---|" * len(KINDS)]
    for name, f in sorted(runs.items()):
        lines.append(f"| {name} | " + " | ".join(str(f["injected_by_kind"].get(k, 0)) for k in KINDS) + " |")
    lines += ["", "rx_dropped: frames the SoC's MAC or NIC dropped (slot overrun, no pbuf, or the NIC's "
              "drop and error counters on the offload SoC), from the status page."]
    reliability_report.record("malformed_traffic", {"runs": runs}, "\n".join(lines),
                              title="Malformed traffic into the NIC")
