"""The slirp module's guard against libslirp emptying a connection's buffers on a repeated
SYN-ACK (sim/modules/slirp_ethernet/synack_guard.h), against the installed libslirp.

tests/host/slirp_synack_driver.c plays the SoC with hand-made frames: a host client's request
goes out after the handshake and is lost, then the SoC's SYN-ACK comes again. Straight into
libslirp 4.7.0 the request is never sent again (the stall of ab -n 400 -c 100 at clock x32);
through the guard, slirp retransmits it. The repeated SYN-ACK as slirp got it is checked here
independently: MSS option replaced by four no-operation options, TCP checksum still valid."""
import os
import shutil
import struct
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(TOP, "sim", "modules", "slirp_ethernet")
GLUE = os.path.join(TOP, "slirp")


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    exe = str(tmp_path_factory.mktemp("synack") / "slirp_synack_driver")
    subprocess.run([cc, "-O1", "-Wall", "-Wextra", "-Werror", "-I", MODULE, "-I", GLUE,
                    os.path.join(TOP, "tests", "host", "slirp_synack_driver.c"),
                    os.path.join(MODULE, "synack_guard.c"), os.path.join(GLUE, "slirp_glue.c"),
                    "-lslirp", "-o", exe], check=True)
    return exe


def run(driver, mode):
    from litedav.sim.run import free_port
    out = subprocess.run([driver, str(free_port()), mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    fields = {}
    for line in out.stdout.splitlines():
        name, _, value = line.partition(" ")
        fields[name] = value
    return fields


def tcp_checksum_ok(frame):
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    total = struct.unpack(">H", ip[2:4])[0]
    tcp = ip[ihl:total]
    data = ip[12:20] + struct.pack(">BBH", 0, 6, len(tcp)) + tcp
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f">{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff


def options(frame):
    ip = frame[14:]
    tcp = ip[(ip[0] & 15) * 4:]
    return tcp[20:(tcp[12] >> 4) * 4]


def test_repeated_synack_keeps_the_request_retransmitted(driver):
    direct, guarded = run(driver, "direct"), run(driver, "guard")
    print({"direct": direct, "guard": guarded})
    plain, stripped = bytes.fromhex(direct["repeat"]), bytes.fromhex(guarded["repeat"])
    assert options(plain) == bytes([2, 4, 1460 >> 8, 1460 & 255]) and tcp_checksum_ok(plain)
    assert options(stripped) == b"\x01\x01\x01\x01" and tcp_checksum_ok(stripped)
    assert guarded["guard"].split()[1::2] == ["2", "1", "1"]  # SYN-ACKs, repeats, stripped
    assert int(guarded["sent"]) >= 1 and int(guarded["retransmitted"]) >= 1, guarded
    if int(direct["retransmitted"]):
        print("this libslirp retransmits after a repeated SYN-ACK by itself: the guard is not needed")
