"""TCP flows of the appliance from a simulator pcap (litedav-sim --pcap), in simulated time.

The simulator stamps each frame with the simulated time of its first byte on the PHY
interface (nanoseconds = cycles / sys_clk). A frame's last byte passed `byte_ns` per byte
later, so "the request's last byte in" and "the response's first byte out" are both on the
wire, where a client would see them.

    python3 -m litedav.bench.pcap_flows PCAP --stalls "PUT /bulk" [--min-gap-ms 2]

prints the stalls of the first connection whose request starts so (e.g. in a
`nic_compare --keep-pcap` trace): its data segments, how many of them came again
(retransmitted), and every pause over --min-gap-ms between two of its frames, in simulated time.
"""

import argparse
import struct
from dataclasses import dataclass, field

SERVER_IP = "10.0.2.15"
SERVER_PORT = 80
METHODS = (b"GET ", b"HEAD ", b"PUT ", b"POST ", b"DELETE ", b"OPTIONS ", b"PROPFIND ",
           b"PROPPATCH ", b"REPORT ", b"MKCOL ", b"MKCALENDAR ")


@dataclass
class Segment:
    start_ns: float
    end_ns: float
    from_client: bool
    payload: bytes


@dataclass
class Flow:
    client: tuple
    segments: list = field(default_factory=list)

    def requests(self):
        """(method and target, request segments, response segments) per request: a request
        starts with a client segment that opens with a method; its response is every server
        payload until the next request."""
        out = []
        for seg in self.segments:
            if seg.from_client and seg.payload.startswith(METHODS):
                line = seg.payload.split(b"\r\n", 1)[0].decode(errors="replace")
                out.append((line, [seg], []))
            elif out:
                (out[-1][1] if seg.from_client else out[-1][2]).append(seg)
        return out


def read_pcap(path):
    """(timestamp in ns, frame bytes) for every record; nanosecond or microsecond pcaps."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = struct.unpack("<I", data[:4])[0]
    scale = {0xa1b23c4d: 1, 0xa1b2c3d4: 1000}.get(magic)
    if scale is None:
        raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    offset = 24
    while offset + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack("<IIII", data[offset:offset + 16])
        offset += 16
        if offset + incl > len(data):
            break  # a record cut short by a kill: ignore it
        yield sec * 1_000_000_000 + frac * scale, data[offset:offset + incl]
        offset += incl


def server_frames(path):
    """Every TCP frame to or from the appliance's port 80 in a simulator pcap: (time in ns,
    frame, the client's (address, port), whether the client sent it, its TCP payload)."""
    for ts, frame in read_pcap(path):
        if len(frame) < 54 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
            continue
        ihl = (frame[14] & 0x0f) * 4
        total = struct.unpack(">H", frame[16:18])[0]
        src = ".".join(map(str, frame[26:30]))
        dst = ".".join(map(str, frame[30:34]))
        tcp = 14 + ihl
        sport, dport = struct.unpack(">HH", frame[tcp:tcp + 4])
        doff = (frame[tcp + 12] >> 4) * 4
        payload = frame[tcp + doff:14 + total]
        if dst == SERVER_IP and dport == SERVER_PORT:
            yield ts, frame, (src, sport), True, payload
        elif src == SERVER_IP and sport == SERVER_PORT:
            yield ts, frame, (dst, dport), False, payload


def tcp_flows(path, byte_ns):
    """Flows to the appliance's port 80, keyed by the client's (address, port)."""
    flows = {}
    for ts, frame, client, from_client, payload in server_frames(path):
        flow = flows.setdefault(client, Flow(client))
        if payload:
            flow.segments.append(Segment(ts, ts + len(frame) * byte_ns, from_client, bytes(payload)))
    return flows


def latencies_ns(flows, target_prefix):
    """Request's last byte in -> response's first byte out, for every request whose line
    starts with target_prefix (e.g. "GET /static/")."""
    out = []
    for flow in flows.values():
        for line, request, response in flow.requests():
            if line.startswith(target_prefix) and response:
                out.append(response[0].start_ns - request[-1].end_ns)
    return out


def transfer_stalls(path, target_prefix, min_gap_ns):
    """The first connection whose first request starts with target_prefix, from that request to
    the client's FIN: {"data_segments", "retransmitted" (client segments whose sequence number
    came before), "span_ns" (first to last client data segment), "stalls": [(gap_ns, at_ns,
    from_client, retransmission)]}, a stall being a pause over min_gap_ns before a frame."""
    client = None
    seen, stalls = set(), []
    data = retransmitted = 0
    first = last_data = previous = None
    for ts, frame, who, from_client, payload in server_frames(path):
        if client is None:
            if not (from_client and payload.startswith(target_prefix.encode())):
                continue
            client, first = who, ts
        if who != client:
            continue
        tcp = 14 + (frame[14] & 0x0f) * 4
        seq = struct.unpack(">I", frame[tcp + 4:tcp + 8])[0]
        again = from_client and bool(payload) and seq in seen
        if previous is not None and ts - previous > min_gap_ns:
            stalls.append((ts - previous, ts - first, from_client, again))
        if from_client and payload:
            data += 1
            retransmitted += again
            seen.add(seq)
            last_data = ts
        previous = ts
        if from_client and frame[tcp + 13] & 0x01:  # FIN
            break
    if client is None:
        raise ValueError(f"{path}: no connection whose request starts with {target_prefix!r}")
    return {"data_segments": data, "retransmitted": retransmitted, "span_ns": last_data - first,
            "stalls": stalls}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="pcap_flows", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pcap")
    parser.add_argument("--stalls", required=True, metavar="REQUEST",
                        help='the start of the request line whose connection to look at, e.g. "PUT /bulk"')
    parser.add_argument("--min-gap-ms", type=float, default=2.0, help="shortest pause reported (default 2)")
    args = parser.parse_args(argv)
    try:
        r = transfer_stalls(args.pcap, args.stalls, args.min_gap_ms * 1e6)
    except (OSError, ValueError) as e:
        parser.exit(1, f"pcap_flows: {e}\n")
    stalled = sum(gap for gap, *_ in r["stalls"])
    print(f"{args.stalls}: {r['data_segments']} data segments, {r['retransmitted']} retransmitted, "
          f"{r['span_ns'] / 1e6:.1f} ms; {len(r['stalls'])} stalls over {args.min_gap_ms:g} ms, "
          f"{stalled / 1e6:.1f} ms in all")
    for gap, at, from_client, again in r["stalls"]:
        print(f"  {gap / 1e6:6.1f} ms before a frame {'from the client' if from_client else 'from the SoC'} "
              f"at {at / 1e6:.1f} ms{' (retransmitted)' if again else ''}")


if __name__ == "__main__":
    main()
