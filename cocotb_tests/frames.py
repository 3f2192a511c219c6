#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Random Ethernet frames for the checksum tests, built with scapy: Ethernet with or without an
802.1Q tag, IPv4 (options, fragments) carrying TCP, UDP, ICMP or other protocols, ARP and non-IP
frames, and the damage the tests need (bit flips, bad lengths, truncation, garbage)."""

from scapy.layers.inet import IP, TCP, UDP, ICMP, IPOption_NOP, IPOption_RR, IPOption_Router_Alert
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import checksum

def be16(frame, offset):
    return int.from_bytes(frame[offset:offset + 2], "big")

# Generators ---------------------------------------------------------------------------------------

def random_payload(rng, large=0.05):
    if rng.random() < large:
        return Raw(rng.randbytes(rng.randrange(0, 1400)))
    return Raw(rng.randbytes(rng.choice([0, 1, 2, 3, rng.randrange(0, 100)])))

def random_ports(rng):
    return dict(sport=rng.randrange(65536), dport=rng.randrange(65536))

def random_ip(rng, proto):
    options = []
    if rng.random() < 0.35:
        options = rng.choice([
            [IPOption_NOP()],
            [IPOption_Router_Alert()],
            [IPOption_NOP(), IPOption_RR(routers=["10.0.0.%d" % i for i in range(rng.randrange(1, 9))])],
        ])
    fragment = dict(flags=0, frag=0)
    if rng.random() < 0.08:
        fragment = rng.choice([dict(flags="MF", frag=0), dict(flags="MF", frag=rng.randrange(1, 8192)),
            dict(flags=0, frag=rng.randrange(1, 8192))])
    elif rng.random() < 0.5:
        fragment["flags"] = "DF"
    return IP(src="10.%d.%d.%d" % tuple(rng.randrange(256) for _ in range(3)),
        dst="192.168.%d.%d" % (rng.randrange(256), rng.randrange(256)), id=rng.randrange(65536),
        ttl=rng.randrange(1, 256), tos=rng.randrange(256), proto=proto, options=options, **fragment)

def udp_checksum_ffff(rng):
    """A UDP datagram whose checksum computes to 0, so it is sent as 0xFFFF (RFC 768)."""
    ip  = random_ip(rng, 17)
    payload = rng.randbytes(2*rng.randrange(0, 20)) + b"\0\0"
    raw = bytearray(bytes(UDP(chksum=0, **random_ports(rng)) / Raw(payload)))
    pseudo = bytes(ip)[12:20] + bytes([0, 17]) + len(raw).to_bytes(2, "big")
    # The last two bytes (an aligned 16-bit word) take what the sum lacks to reach 0xFFFF.
    raw[-2:] = checksum(pseudo + bytes(raw)).to_bytes(2, "big")
    udp = UDP(bytes(raw))
    udp.chksum = None
    return ip / udp

def random_packet(rng):
    """A scapy packet: Ethernet, optional 802.1Q, then IPv4 (TCP, UDP, other) or something else."""
    eth = Ether(src="02:00:00:%02x:%02x:%02x" % tuple(rng.randrange(256) for _ in range(3)),
        dst="02:00:00:00:00:01")
    if rng.random() < 0.3:
        eth = eth / Dot1Q(vlan=rng.randrange(4096), prio=rng.randrange(8))
    kind = rng.random()
    if kind < 0.4:
        tcp = TCP(seq=rng.getrandbits(32), ack=rng.getrandbits(32), window=rng.randrange(65536),
            flags=rng.choice(["S", "SA", "A", "PA", "FA", "R"]), **random_ports(rng),
            options=rng.choice([[], [("MSS", 1460)],
                [("NOP", None), ("NOP", None), ("Timestamp", (1, 2))],
                [("MSS", 536), ("NOP", None), ("WScale", 7), ("SAckOK", b"")]]))
        return eth / random_ip(rng, 6) / tcp / random_payload(rng)
    if kind < 0.75:
        return eth / random_ip(rng, 17) / UDP(**random_ports(rng)) / random_payload(rng)
    if kind < 0.77:
        return eth / udp_checksum_ffff(rng)
    if kind < 0.82:
        return eth / random_ip(rng, 1) / ICMP(id=rng.randrange(65536)) / random_payload(rng)
    if kind < 0.87:
        return eth / random_ip(rng, rng.choice([2, 47, 50, 132])) / random_payload(rng)
    if kind < 0.93:
        return eth / ARP(psrc="10.0.0.1", pdst="10.0.0.2")
    if rng.random() < 0.5:
        return eth / Raw(rng.randbytes(rng.randrange(0, 80)))
    eth.type = rng.choice([0x86dd, 0x88cc, rng.randrange(65536)])
    return eth / random_payload(rng)

def fix_ip_checksum(frame, l3):
    hlen = max(20, 4*(frame[l3] & 0xf))
    frame[l3 + 10:l3 + 12] = b"\0\0"
    frame[l3 + 10:l3 + 12] = checksum(bytes(frame[l3:l3 + hlen])).to_bytes(2, "big")

def corrupt(rng, frame):
    """Damage a frame the way the tests need: checksums, lengths, header fields, truncation."""
    l3 = 18 if frame[12:14] == b"\x81\x00" else 14
    ip = len(frame) >= l3 + 20 and frame[l3 - 2:l3] == b"\x08\x00"
    l4 = l3 + 4*(frame[l3] & 0xf) if ip else l3
    damage = rng.choice(["bit", "ip_bit", "l4_bit", "total_length", "ihl", "version", "udp_length",
        "udp_zero", "tcp_offset", "truncate", "truncate", "garbage"])
    if damage == "bit" or (damage in ("ip_bit", "l4_bit") and not ip):
        frame[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
    elif damage == "ip_bit":
        frame[rng.randrange(l3, l4)] ^= 1 << rng.randrange(8)
    elif damage == "l4_bit" and l4 < len(frame):
        frame[rng.randrange(l4, len(frame))] ^= 1 << rng.randrange(8)
    elif damage in ("total_length", "ihl", "version") and ip:
        if damage == "total_length":
            total_length = rng.choice([rng.randrange(0, 80), be16(frame, l3 + 2) + rng.randrange(-8, 9),
                rng.randrange(65536)])
            frame[l3 + 2:l3 + 4] = total_length.to_bytes(2, "big")
        elif damage == "ihl":
            frame[l3] = (frame[l3] & 0xf0) | rng.randrange(16)
        else:
            frame[l3] = (frame[l3] & 0x0f) | (rng.choice([0, 6, 5, 15]) << 4)
        if rng.random() < 0.8:
            fix_ip_checksum(frame, l3)
    elif damage in ("udp_length", "udp_zero") and ip and frame[l3 + 9] == 17 and l4 + 8 <= len(frame):
        if damage == "udp_length":
            udp_length = (be16(frame, l4 + 4) + rng.choice([-9, -1, 1, 2, 300])) & 0xffff
            frame[l4 + 4:l4 + 6] = udp_length.to_bytes(2, "big")
        else:
            frame[l4 + 6:l4 + 8] = b"\0\0"
    elif damage == "tcp_offset" and ip and frame[l3 + 9] == 6 and l4 + 20 <= len(frame):
        frame[l4 + 12] = (rng.randrange(16) << 4) | (frame[l4 + 12] & 0xf)
    elif damage == "truncate":
        del frame[rng.randrange(1, len(frame) + 1):]
    elif damage == "garbage":
        frame[:] = rng.randbytes(rng.randrange(1, 70))

def random_frame(rng, damage=0.3, runts=0.1):
    """Bytes of one frame as the MAC hands it over: padded to 60 bytes unless a runt, FCS removed."""
    frame = bytearray(bytes(random_packet(rng)))
    if len(frame) < 60 and rng.random() >= runts:
        frame += rng.randbytes(60 - len(frame))
    if rng.random() < damage:
        corrupt(rng, frame)
    return bytes(frame)
