"""Simulated figures do not depend on how fast the host's clients run (SimOptions(peer_pid=),
sim/modules/slirp_ethernet/peer_wait.h).

Two boots of the same simulator, each told to wait for this process, run the same sequence: a
small warm-up PUT, then a PUT and a GET of 64 KiB through /bulk. Each exchange is marked by its
query string and timed on the pcap (simulated time).

  quick     (first boot) the client writes and reads as fast as it can
  spins     (second boot) the client computes (a busy loop) before every 4 KiB it writes or
            reads, as a slow client on a loaded host does: simulated time waits for it, so the
            PUT must take the same simulated time as the quick one, and the GET within 2% (the
            marks are as long, so both boots receive the same bytes)
  sleeping  (first boot, last) the PUT again, the client sleeping as long before every 4 KiB:
            it asks for wall time to pass, which is what a client that falls behind the
            simulator looks like without the waiting. It must come out slower, or the delays
            were too short for this test to show anything.
"""
import os
import socket
import time

from litedav.bench.pcap_flows import tcp_flows
from litedav.sim.run import SimOptions, Simulator, free_port

BODY = bytes((i * 7 + 3) & 0xFF for i in range(64 * 1024))
CHUNK = 4096
# A delay long against the simulated time the server spends on a chunk (4 KiB of PUT at about
# 8 MB/s is 60,000 cycles: 0.3 s of wall time on a simulator at 0.2 M cycles/s, a loaded one).
DELAY_S = 0.5
GMII_BYTE_NS = 8
AUTH = "Basic ZGVtbzpkZW1v"


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def exchange(port, head, body, delay):
    """Send head, then body in CHUNK pieces with delay() before each; read the whole answer
    (the server closes) in CHUNK pieces, delay() before each read. The socket's send buffer is
    small, so a client that falls behind holds the server back. A head with Expect:
    100-continue waits for the interim answer before the body: without it, the peer's TCP
    (libslirp's, one segment in its first flight) would wait for the server's delayed ACK
    of the first segment, tens of milliseconds of simulated time in which a slow client
    catches up."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, CHUNK)
        s.settimeout(600)
        s.connect(("127.0.0.1", port))
        s.sendall(head)
        if b"Expect: 100-continue" in head:
            interim = b""
            while b"\r\n\r\n" not in interim:
                data = s.recv(1)
                assert data, interim
                interim += data
            assert interim.startswith(b"HTTP/1.1 100"), interim
        for i in range(0, len(body), CHUNK):
            delay()
            s.sendall(body[i:i + CHUNK])
        answer = b""
        while True:
            delay()
            data = s.recv(CHUNK)
            if not data:
                return answer
            answer += data


def put(port, mark, delay):
    head = (f"PUT /bulk?{mark} HTTP/1.1\r\nHost: sim\r\nAuthorization: {AUTH}\r\n"
            f"Content-Type: application/octet-stream\r\nContent-Length: {len(BODY)}\r\n"
            "Expect: 100-continue\r\nConnection: close\r\n\r\n").encode()
    answer = exchange(port, head, BODY, delay)
    assert answer.startswith(b"HTTP/1.1 204"), answer[:200]


def put_and_get(port, mark, delay):
    put(port, mark, delay)
    answer = exchange(port, f"GET /bulk?{mark} HTTP/1.1\r\nHost: sim\r\nConnection: close\r\n\r\n".encode(),
                      b"", delay)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(BODY), answer[:200]


def transfer_times(pcap):
    """{(method, mark): simulated ns}: PUT from the request's first byte in to the response's
    first byte out, GET from the request's last byte in to the response's last byte out."""
    times = {}
    for flow in tcp_flows(pcap, GMII_BYTE_NS).values():
        for line, request, response in flow.requests():
            method, target = line.split()[:2]
            if not target.startswith("/bulk?") or not response:
                continue
            mark = target.split("?", 1)[1]
            if mark == "warm-up":
                continue
            if method == "PUT":  # the 204, after the interim 100 Continue
                final = next(seg for seg in response if seg.payload.startswith(b"HTTP/1.1 2"))
                times[("PUT", mark)] = final.start_ns - request[0].start_ns
            else:
                times[("GET", mark)] = response[-1].end_ns - request[-1].end_ns
    return times


def boot_and_exchange(sim_build, pcap, mark, delay):
    sim = Simulator(sim_build, SimOptions(port=free_port(), echo=False, fresh_flash=True, phy="gmii",
                                          pcap=pcap, peer_pid=os.getpid()))
    sim.start()
    try:
        sim.wait_ready(timeout=300)
        head = (f"PUT /bulk?warm-up HTTP/1.1\r\nHost: sim\r\nAuthorization: {AUTH}\r\n"
                f"Content-Length: {CHUNK}\r\nConnection: close\r\n\r\n").encode()
        assert exchange(sim.port, head, BODY[:CHUNK], lambda: None).startswith(b"HTTP/1.1 204")
        put_and_get(sim.port, mark, delay)
        if mark == "quick":
            put(sim.port, "sleeping", lambda: time.sleep(DELAY_S))
    finally:
        sim.stop()
        sim.exited.wait(10)
    report = [line for line in sim.console if "peer process" in line]
    print("\n".join(report))
    times = transfer_times(pcap)
    print(mark, {f"{m} {k}": round(v) for (m, k), v in sorted(times.items())})
    assert len(times) == (3 if mark == "quick" else 2), times
    # simulated time never went on without the peer
    peer = sim.peer_counters()
    assert peer and peer["unsynchronized"] == 0, report
    return times, peer["waits"]


def test_simulated_time_waits_for_the_client(sim_build, appliance, tmp_path):
    # appliance: the session's simulator, also this process's child, runs beside the two boots
    # all along; it keeps its own clock, and they must not wait for it (peer_wait.h)
    assert appliance.proc.poll() is None
    quick, _ = boot_and_exchange(sim_build, str(tmp_path / "quick.pcap"), "quick", lambda: None)
    spins, waited = boot_and_exchange(sim_build, str(tmp_path / "spins.pcap"), "spins", lambda: spin(DELAY_S))
    assert waited >= 2 * len(BODY) // CHUNK, waited  # it did wait for the busy client
    # the same simulated time, however slow the client (a poll slot, 16 us, of slack)
    assert abs(spins[("PUT", "spins")] - quick[("PUT", "quick")]) <= 16_400, (quick, spins)
    # The GET comes out at one of two times, whichever the client: 4.571 or 4.643 ms at 47048f3
    # (4.600 or 4.665 ms at earlier commits: the code layout moves them), 1.6% apart. What is left to the host
    # is not pinned down: not the client's receive buffer (a fixed SO_RCVBUF keeps both modes),
    # more likely when libslirp's socket writes land against its timers. Both within 2%.
    assert abs(spins[("GET", "spins")] - quick[("GET", "quick")]) <= 0.02 * quick[("GET", "quick")], (quick, spins)
    # a client left behind shows: the PUT waits for the sleeping client's body
    assert quick[("PUT", "sleeping")] > 1.2 * quick[("PUT", "quick")], quick
