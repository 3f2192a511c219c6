"""bench/pcap_flows.py transfer_stalls: data segments, retransmissions and pauses of one connection."""
import struct

import pytest

from litedav.bench.pcap_flows import transfer_stalls

CLIENT, SERVER = bytes([10, 0, 2, 2]), bytes([10, 0, 2, 15])


def _frame(from_client, seq, payload=b"", fin=False):
    src, dst = (CLIENT, SERVER) if from_client else (SERVER, CLIENT)
    sport, dport = (40000, 80) if from_client else (80, 40000)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 0, 0, 64, 6, 0, src, dst)
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x10 | (0x01 if fin else 0), 65535, 0, 0)
    return b"\x00" * 12 + b"\x08\x00" + ip + tcp + payload


def _pcap(path, frames):
    out = struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1)
    for ns, frame in frames:
        out += struct.pack("<IIII", ns // 1_000_000_000, ns % 1_000_000_000, len(frame), len(frame)) + frame
    path.write_bytes(out)


def test_stalls_and_retransmissions_of_the_put_connection(tmp_path):
    ms = 1_000_000
    _pcap(tmp_path / "t.pcap", [
        (0, _frame(True, 1, b"PUT /bulk HTTP/1.1\r\n\r\n")),
        (1 * ms, _frame(True, 100, b"x" * 100)),
        (2 * ms, _frame(True, 200, b"x" * 100)),
        (40 * ms, _frame(True, 100, b"x" * 100)),       # 38 ms later, the same segment again
        (41 * ms, _frame(False, 1)),                    # the SoC's ACK
        (42 * ms, _frame(True, 300, fin=True)),
        (50 * ms, _frame(True, 999, b"GET / HTTP/1.1\r\n\r\n")),  # after the FIN: not counted
    ])
    r = transfer_stalls(str(tmp_path / "t.pcap"), "PUT /bulk", 2 * ms)
    assert r["data_segments"] == 4 and r["retransmitted"] == 1
    assert r["span_ns"] == 40 * ms
    assert r["stalls"] == [(38 * ms, 40 * ms, True, True)]


def test_no_such_connection_is_an_error(tmp_path):
    _pcap(tmp_path / "t.pcap", [(0, _frame(True, 1, b"GET / HTTP/1.1\r\n\r\n"))])
    with pytest.raises(ValueError, match="no connection"):
        transfer_stalls(str(tmp_path / "t.pcap"), "PUT /bulk", 1)
