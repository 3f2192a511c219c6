"""The simulator's Ethernet runs at a wire rate (sim/phy.py, sim/modules/slirp_ethernet):
booted with phy="mii", no frame may start before the previous frame of its direction has had
its preamble+SFD (8 bytes), body padded to 60 bytes, FCS (4) and inter-frame gap (12) on a
100 Mbit/s wire.

The module's pcap trace is the witness: it timestamps each frame's first byte on the PHY
interface in simulated time (cycles / sys_clk). Real HTTP traffic crosses the link (GETs of
/static/task.ics, then a PUT and GET of a calendar object of many full-size frames, whose TCP
window lets the host send bursts into the SoC); the simulator is stopped as a user would
(SIGINT), and the trace must be complete, in time order, and obey the wire rate in each
direction. On phy="model" (one byte per sys_clk, TX unpaced) the same traffic breaks the
invariant: back-to-back frames into the SoC are then len + 20 cycles apart.
"""
import os
import re
import struct

import pytest

from http_checks import TASK_ICS, Target
from test_sim_offload import dav, large_event

MII_BIT_S = 100_000_000
PREAMBLE_SFD, MIN_FRAME, FCS, IFG = 8, 60, 4, 12
SOC_MAC = bytes.fromhex("10e2d5000001")  # firmware/ports/litex/liteeth_netif.c; the host side is slirp's
OBJECT_SIZE = 16 * 1024  # a dozen full-size frames each way; PUTs cost the SoC ~0.3 Mcycles/KiB
TIMEOUT = 120            # wall seconds for one exchange


def read_pcap(path):
    """[(ns, frame)] from a nanosecond pcap of Ethernet frames (either byte order)."""
    with open(path, "rb") as f:
        data = f.read()
    for order in "<>":
        if struct.unpack(order + "I", data[:4])[0] == 0xa1b23c4d:
            break
    else:
        raise AssertionError(f"{path}: not a nanosecond pcap (magic {data[:4].hex()})")
    major, minor, _, _, _, linktype = struct.unpack(order + "HHiIII", data[4:24])
    assert (major, minor, linktype) == (2, 4, 1)  # LINKTYPE_ETHERNET
    frames, off = [], 24
    while off < len(data):
        sec, nsec, incl, orig = struct.unpack(order + "IIII", data[off:off + 16])
        assert incl == orig and nsec < 10**9 and off + 16 + incl <= len(data), f"bad record at {off}"
        frames.append((sec * 10**9 + nsec, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return frames


@pytest.fixture(scope="module")
def mii_run(sim_build, tmp_path_factory):
    """Boot the LiteEth SoC at MII rate with a pcap, drive HTTP through it, stop it (SIGINT).
    Returns what the clients got back, the trace and the simulator's console."""
    from litedav.sim.run import SimOptions, Simulator, free_port
    pcap = str(tmp_path_factory.mktemp("phy") / "wire.pcap")
    sys_clk_hz = Simulator._sys_clk_hz(os.path.join(sim_build, "gateware"))
    sim = Simulator(sim_build, SimOptions(port=free_port(), echo=False, phy="mii", pcap=pcap,
                                          fresh_flash=True, flash_size=256 * 1024))  # a small flash boots sooner
    got = {}
    sim.start()
    try:
        sim.wait_ready(timeout=300)
        target = Target(port=sim.port, cycles_hz=sys_clk_hz, timeout=TIMEOUT)
        got["task"] = [dav(target, "GET", "/static/task.ics").data for _ in range(3)]
        body = large_event(OBJECT_SIZE)
        got["mkcalendar"] = dav(target, "MKCALENDAR", "/dav/demo/phy/").status
        got["put"] = dav(target, "PUT", "/dav/demo/phy/large.ics", body, {"Content-Type": "text/calendar"}).status
        got["object"], got["expected_object"] = dav(target, "GET", "/dav/demo/phy/large.ics").data, body
    finally:
        sim.stop()
        sim.exited.wait(10)  # the console's last lines: the module's counters
        print("\n--- mii simulator console (last lines) ---\n" + "\n".join(sim.console[-6:]))
    return {"got": got, "frames": read_pcap(pcap), "console": sim.console, "sys_clk_hz": sys_clk_hz}


def test_responses_byte_exact(mii_run):
    got = mii_run["got"]
    assert got["task"] == [TASK_ICS] * 3
    assert (got["mkcalendar"], got["put"]) == (201, 201)
    assert got["object"] == got["expected_object"]


def test_trace_complete_and_in_time_order(mii_run):
    frames = mii_run["frames"]
    times = [t for t, _ in frames]
    assert times == sorted(times), "pcap records out of time order"
    # The module's exit counters (printed on SIGINT) agree with the trace, per direction.
    line = next((l for l in mii_run["console"] if l.startswith("[slirp_ethernet] phy mii:")), None)
    assert line, "no counters from slirp_ethernet at exit:\n" + "\n".join(mii_run["console"][-10:])
    to_soc, from_soc = map(int, re.findall(r"(\d+) frames", line))
    out = sum(frame[6:12] == SOC_MAC for _, frame in frames)
    assert (len(frames) - out, out) == (to_soc, from_soc)
    assert out > OBJECT_SIZE // 1514 and len(frames) - out > OBJECT_SIZE // 1514


def test_wire_rate_each_direction(mii_run):
    """Frame starts at least (8 + max(len, 60) + 4 + 12) byte times apart per direction."""
    hz = mii_run["sys_clk_hz"]
    byte_ns = 8 * 10**9 / MII_BIT_S
    # Timestamps are whole cycles (rounded down to ns): with a non-integer number of cycles per
    # byte a start may fall up to one cycle early; otherwise only the ns rounding.
    slack = 1 if (8 * hz) % MII_BIT_S == 0 else 10**9 / hz + 1
    last, violations, back_to_back = {}, [], {"to SoC": 0, "from SoC": 0}
    for t, frame in mii_run["frames"]:
        direction = "from SoC" if frame[6:12] == SOC_MAC else "to SoC"
        if direction in last:
            t0, len0 = last[direction]
            earliest = t0 + (PREAMBLE_SFD + max(len0, MIN_FRAME) + FCS + IFG) * byte_ns
            if t < earliest - slack:
                violations.append(f"{direction}: {len(frame)}-byte frame at {t} ns, "
                                  f"{earliest - t:.0f} ns early (previous: {len0} bytes at {t0} ns)")
            elif t <= earliest + slack:
                back_to_back[direction] += 1
        last[direction] = (t, len(frame))
    assert not violations, f"{len(violations)} frames faster than 100 Mbit/s:\n" + "\n".join(violations[:10])
    # The host's bursts into the SoC met the wire limit: the check above was not vacuous.
    assert back_to_back["to SoC"] > 0, back_to_back
    print(f"frames at exactly the wire limit: {back_to_back}")
