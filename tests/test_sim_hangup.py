"""A host client that hangs up while the SoC still answers must not end the simulation.

libslirp writes to its host sockets with plain send(). When the client behind one has gone
(closed with the answer still coming, or reset), the next write raises SIGPIPE, whose default
action ends the simulator at once: no console line, no core file, and every other client then
sees "connection refused". That is how a lossy-link soak run (20 clients, one of them timing out
and closing) lost its simulator after 27 minutes. The slirp module ignores SIGPIPE, as QEMU does,
so the write fails with EPIPE and slirp closes that one connection.

Each round sends a pipelined burst of PROPFINDs (answers of several segments) and closes the
socket without reading: once with a FIN, once with a reset (SO_LINGER 0). Then the simulator
must still run and answer a fresh client.
"""
import base64
import http.client
import socket
import struct
import time

ROUNDS = 6
AUTH = "Basic " + base64.b64encode(b"demo:demo").decode()   # firmware/users.conf
TIMEOUT = 120  # wall seconds; the simulator runs far slower than real time


def hang_up(port, reset):
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    if reset:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    request = f"PROPFIND /dav/demo/ HTTP/1.1\r\nHost: litedav\r\nAuthorization: {AUTH}\r\nDepth: 1\r\n\r\n"
    s.sendall(request.encode() * 4)
    s.close()


def test_simulator_survives_clients_that_hang_up_mid_answer(appliance):
    for round_ in range(ROUNDS):
        for reset in (False, True):
            hang_up(appliance.port, reset)
            time.sleep(0.5)  # wall time for the SoC's answer to reach slirp's dead socket
            code = appliance.proc.poll()
            assert code is None, (
                f"round {round_} ({'reset' if reset else 'FIN'}): the simulator ended with {code}"
                + (" (SIGPIPE: the slirp module must ignore it)" if code == -13 else ""))
    conn = http.client.HTTPConnection("127.0.0.1", appliance.port, timeout=TIMEOUT)
    conn.request("PROPFIND", "/dav/demo/", headers={"Authorization": AUTH, "Depth": "0"})
    assert conn.getresponse().status == 207
    conn.close()
