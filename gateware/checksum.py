#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Internet checksum engine and RX checksum verification for the offload NIC.

Streams use LiteEth's PHY-side layout (`eth_phy_description`): 32-bit data, 4 bytes per beat, the
first byte on the wire in data[0:8]; on the last beat `last_be` is one-hot on the last valid byte.

The checksum is the Internet checksum of RFC 1071: the ones'-complement sum of big-endian 16-bit
words. Ones'-complement addition is associative and commutative, so a frame is summed in plain binary
a beat at a time and the carries are folded back once, at the end (RFC 1071 2(C), deferred carries).
"""

from functools import reduce
from operator import add

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.stream import EndpointDescription
from litex.soc.interconnect.packet import HeaderField

from liteeth.common import (eth_phy_description, eth_min_frame_length, eth_fcs_length,
    mac_header_length, ethernet_type_ip, ipv4_header_fields, ipv4_header_length,
    udp_header_fields, udp_header_length, udp_protocol)

# Constants ----------------------------------------------------------------------------------------

ethernet_type_vlan   = 0x8100 # IEEE 802.1Q tag protocol identifier.
vlan_tag_length      = 4
eth_min_frame_no_fcs = eth_min_frame_length - eth_fcs_length
tcp_protocol         = 0x06
tcp_header_length    = 20
ipv4_fragment_mf     = 13 # "More Fragments" bit of the flags + fragment offset field (RFC 791 3.1).

L3_NOT_IPV4, L3_OK, L3_BAD    = 0, 1, 2
L4_NOT_CHECKED, L4_OK, L4_BAD = 0, 1, 2

# Header fields read by RxChecksum, as LiteEth HeaderFields (byte, bit offset, width) relative to
# the start of their header; multi-byte fields are big-endian, as in LiteEth's headers.
rx_l3_fields = {
    "ethertype":    HeaderField(-2, 0, 16), # The (inner) EtherType, just before the L3 header.
    "version":      ipv4_header_fields["version"],
    "ihl":          ipv4_header_fields["ihl"],
    "total_length": ipv4_header_fields["total_length"],
    "fragment":     HeaderField(6, 0, 16),  # Flags + fragment offset (RFC 791 3.1).
    "protocol":     ipv4_header_fields["protocol"],
}
rx_l4_fields = {
    "udp_length":      udp_header_fields["length"],   # RFC 768.
    "udp_checksum":    udp_header_fields["checksum"],
    "tcp_data_offset": HeaderField(12, 4, 4),         # RFC 793 3.1.
}

# Layouts ------------------------------------------------------------------------------------------

checksum_description = EndpointDescription([("sum", 16)])

# Per-frame status of RxChecksum, valid on the source beat that has `last` set.
rx_checksum_status_layout = [
    ("l3_status",    2), # L3_NOT_IPV4 / L3_OK / L3_BAD.
    ("l4_status",    2), # L4_NOT_CHECKED / L4_OK / L4_BAD.
    ("protocol",     8), # IPv4 protocol, 0 if not IPv4 or header truncated.
    ("vlan",         1), # One 802.1Q tag present.
    ("l3_offset",    5), # Byte offset of the L3 header: 14, or 18 with a tag.
    ("l4_offset",    7), # L3 offset + 4*IHL; 0 if not IPv4 or header truncated.
    ("runt",         1), # Frame shorter than 60 bytes (64 with FCS).
    ("truncated",    1), # The frame ends before the end of a header or of the IPv4 datagram.
    ("length_error", 1), # Header lengths that contradict each other: IHL, IPv4 total length,
                         # UDP length, TCP data offset.
    ("frame_error",  1), # An `error` bit was set on a beat of the frame (FCS error from the MAC).
]

def rx_checksum_description(dw=32):
    return EndpointDescription(eth_phy_description(dw).payload_layout, rx_checksum_status_layout)

# Helpers ------------------------------------------------------------------------------------------

def valid_lanes(last, last_be):
    """Per byte lane, whether it holds a frame byte: every lane of a beat that is not the last, and
    on the last beat the lanes up to the highest bit set in last_be (all of them if it is 0)."""
    n = len(last_be)
    return Cat(*[~last | (last_be == 0) | (last_be[i:] != 0) for i in range(n)])

def ones_complement_sum(module, *terms):
    """16-bit ones'-complement sum (RFC 1071) of terms whose plain sum fits in 32 bits."""
    total   = Signal(32)
    partial = Signal(17)
    result  = Signal(16)
    module.comb += [
        total.eq(reduce(add, terms)),
        partial.eq(total[:16] + total[16:]),
        result.eq(partial[:16] + partial[16]),
    ]
    return result

# Checksum Accumulator -----------------------------------------------------------------------------

class ChecksumAccumulator(LiteXModule):
    """Ones'-complement sum (RFC 1071: the Internet checksum before its final complement) of the
    bytes [start, end) of each frame seen on `sink`.

    `start` and `end` are byte offsets from the first byte of the frame; they are sampled on every
    beat, so they may come from header fields parsed from earlier beats of the same frame. The sum
    of a range that starts at an odd offset is byte-swapped at the end: RFC 1071 2(B), byte order
    independence. `source` gives one sum per frame, the cycle after its last beat; `sink` stalls
    only when a new last beat arrives while that sum has not been taken.
    """
    def __init__(self, dw=32):
        assert dw in [16, 32, 64]
        self.sink   = sink   = stream.Endpoint(eth_phy_description(dw))
        self.source = source = stream.Endpoint(checksum_description)
        self.start  = Signal(17)
        self.end    = Signal(17, reset=2**17 - 1)

        # # #

        lanes     = dw//8
        lane_bits = log2_int(lanes)
        # One bit more than offsets need, so that a saturated count is past any `end`.
        word      = Signal(18 - lane_bits)
        # A plain binary sum, folded at the end: a range holds at most 2**16 16-bit words, so 32
        # bits cannot overflow. `keep` makes synthesis use two carry chains for the beat and the
        # running sum instead of a LUT adder tree as wide as the running sum.
        beat_sum  = Signal(15 + lane_bits, attr={("keep", "true")})
        acc       = Signal(32)
        acc_next  = Signal(32)

        start_word, start_lane = self.start[lane_bits:], self.start[:lane_bits]
        end_word,   end_lane   = self.end[lane_bits:],   self.end[:lane_bits]
        after_start, at_start, before_end, at_end = Signal(), Signal(), Signal(), Signal()
        self.comb += [
            after_start.eq(word > start_word),
            at_start.eq(word == start_word),
            before_end.eq(word < end_word),
            at_end.eq(word == end_word),
        ]
        valid  = valid_lanes(sink.last, sink.last_be)
        masked = Signal(dw)
        for i in range(lanes):
            self.comb += If(valid[i] &
                (after_start | (at_start & (start_lane <= i))) &
                (before_end  | (at_end   & (end_lane > i))),
                masked[8*i:8*(i + 1)].eq(sink.data[8*i:8*(i + 1)])
            )
        # Even frame offsets (even lanes) hold the high byte of each 16-bit word.
        words = [Cat(masked[16*k + 8:16*k + 16], masked[16*k:16*k + 8]) for k in range(lanes//2)]
        self.comb += [
            beat_sum.eq(reduce(add, words)),
            acc_next.eq(acc + beat_sum),
        ]
        total = ones_complement_sum(self, acc_next)

        self.comb += sink.ready.eq(~source.valid | source.ready)
        self.sync += [
            If(source.valid & source.ready, source.valid.eq(0)),
            If(sink.valid & sink.ready,
                If(sink.last,
                    word.eq(0),
                    acc.eq(0),
                    source.valid.eq(1),
                    source.sum.eq(Mux(self.start[0], Cat(total[8:], total[:8]), total)),
                ).Else(
                    acc.eq(acc_next),
                    If(word != 2**len(word) - 1, word.eq(word + 1)),
                )
            )
        ]

# RX Checksum --------------------------------------------------------------------------------------

class RxChecksum(LiteXModule):
    """Verifies the IPv4 header checksum (RFC 791) and the TCP (RFC 793) or UDP (RFC 768) checksum,
    pseudo-header included, of Ethernet frames with at most one 802.1Q tag.

    Frames pass from `sink` to `source` unchanged, two cycles later, and the per-frame status
    (rx_checksum_status_layout) is set on the source beat that has `last` set. All pipeline stages
    move together, so a beat is accepted on every cycle where `source` is ready.
    """
    def __init__(self):
        dw = 32
        self.sink   = sink   = stream.Endpoint(eth_phy_description(dw))
        self.source = source = stream.Endpoint(rx_checksum_description(dw))

        # # #

        # Pipeline: parse on sink -> `beat` (sums) -> `source` (status). -----------------------
        advance = Signal()
        accept  = Signal()
        beat    = stream.Endpoint(eth_phy_description(dw))
        self.comb += [
            advance.eq(~source.valid | source.ready),
            sink.ready.eq(advance),
            accept.eq(sink.valid & advance),
        ]
        self.sync += If(advance,
            beat.valid.eq(sink.valid),
            beat.last.eq(sink.last),
            beat.payload.eq(sink.payload),
            source.valid.eq(beat.valid),
            source.last.eq(beat.last),
            source.payload.eq(beat.payload),
        )
        beat_last = Signal()
        self.comb += beat_last.eq(beat.valid & beat.last & advance)

        # Parse: capture header fields as their beat is accepted on sink. ------------------------
        # The L3 header starts 14 bytes into the frame, 18 with a tag: always in lane 2, of word 3
        # or 4. The tag is recognised on word 3, so fields are taken relative to word 3 on word 3
        # and relative to word 3 + vlan after it (the EtherType is read twice with a tag).
        word    = Signal(14)
        vlan    = Signal()
        l3_word = Signal(14)
        self.comb += l3_word.eq(3 + (vlan & (word > 3)))
        self.sync += If(accept,
            If(sink.last,
                word.eq(0)
            ).Elif(word != 2**len(word) - 1,
                word.eq(word + 1)
            ),
            If(word == 3,
                vlan.eq(Cat(sink.data[8:16], sink.data[:8]) == ethernet_type_vlan)
            )
        )
        l3 = {name: self.capture(accept & (word == l3_word + (2 + f.byte)//4), f)
            for name, f in rx_l3_fields.items()}
        l4 = {name: self.capture(accept & (word == l3_word + l3["ihl"] + (2 + f.byte)//4), f)
            for name, f in rx_l4_fields.items()}

        length      = Signal(17) # Frame length in bytes, set by the last beat.
        error_seen  = Signal()
        frame_error = Signal()
        lanes       = valid_lanes(sink.last, sink.last_be)
        self.sync += If(accept,
            error_seen.eq(~sink.last & (error_seen | (sink.error != 0))),
            If(sink.last,
                length.eq(Cat(C(0, 2), word) + reduce(add, [lanes[i] for i in range(dw//8)])),
                frame_error.eq(error_seen | (sink.error != 0)),
            )
        )

        # Sums, over the beat in the middle stage. ----------------------------------------------
        l3_offset     = Signal(5)
        header_length = Signal(6)
        self.comb += [
            l3_offset.eq(mac_header_length + vlan_tag_length*vlan),
            header_length.eq(l3["ihl"] << 2),
        ]
        ranges = {
            "header":    (l3_offset, l3_offset + header_length),
            "addresses": (l3_offset + 12, l3_offset + 20), # Source and destination of the pseudo-header.
            "l4":        (l3_offset + header_length, l3_offset + l3["total_length"]),
        }
        sums = {}
        for name, (start, end) in ranges.items():
            acc = ChecksumAccumulator(dw)
            setattr(self, f"{name}_sum", acc)
            self.comb += [
                acc.sink.valid.eq(beat.valid & advance),
                acc.sink.last.eq(beat.last),
                acc.sink.payload.eq(beat.payload),
                acc.start.eq(start),
                acc.end.eq(end),
                acc.source.ready.eq(source.valid & source.last & advance),
            ]
            sums[name] = acc.source.sum

        # Length checks, on the frame's last beat in the middle stage. ----------------------------
        l4_length = Signal(16)
        self.comb += l4_length.eq(l3["total_length"] - header_length)
        tcp_data_offset = Cat(C(0, 2), l4["tcp_data_offset"])
        checks = {
            "vlan":             vlan & (length >= mac_header_length),
            "runt":             length < eth_min_frame_no_fcs,
            "eth_truncated":    length < l3_offset,
            "ip_truncated":     length < l3_offset + ipv4_header_length,
            "l3_truncated":     (length < l3_offset + header_length) |
                                (length < l3_offset + l3["total_length"]),
            "header_bad":       (l3["ihl"] < ipv4_header_length//4) |
                                (l3["total_length"] < header_length),
            "version_ok":       l3["version"] == 4,
            "is_ipv4":          l3["ethertype"] == ethernet_type_ip,
            "is_tcp":           l3["protocol"] == tcp_protocol,
            "is_udp":           l3["protocol"] == udp_protocol,
            "fragment":         l3["fragment"][:ipv4_fragment_mf + 1] != 0,
            "tcp_truncated":    (l4_length < tcp_header_length) | (tcp_data_offset > l4_length),
            "tcp_bad":          (l4_length >= tcp_header_length) & (tcp_data_offset < tcp_header_length),
            "udp_truncated":    l4_length < udp_header_length,
            "udp_bad":          (l4_length >= udp_header_length) & (l4["udp_length"] != l4_length),
            "udp_no_checksum":  l4["udp_checksum"] == 0, # RFC 768: the sender computed none.
        }
        checked = {name: Signal(name=name) for name in checks}
        frame = {name: Signal(len(value), name=f"frame_{name}") for name, value in
            [("protocol", l3["protocol"]), ("l4_length", l4_length), ("header_length", header_length),
             ("frame_error", frame_error)]}
        self.sync += If(beat_last,
            *[checked[name].eq(value) for name, value in checks.items()],
            frame["protocol"].eq(l3["protocol"]),
            frame["l4_length"].eq(l4_length),
            frame["header_length"].eq(header_length),
            frame["frame_error"].eq(frame_error),
        )

        # Status, on the frame's last beat on source. -----------------------------------------------
        # A correct header or segment sums to 0xFFFF, ones'-complement negative zero (RFC 1624 3).
        l4_sum   = ones_complement_sum(self,
            sums["l4"], sums["addresses"], frame["protocol"], frame["l4_length"])
        is_ipv4  = Signal()
        ip_valid = Signal() # Fixed header present: the fields read from it are the frame's.
        l3_ok    = Signal()
        l4_check = Signal()
        l4_bad   = Signal()
        self.comb += [
            is_ipv4.eq(checked["is_ipv4"] & ~checked["eth_truncated"]),
            ip_valid.eq(is_ipv4 & ~checked["ip_truncated"]),
            l3_ok.eq(ip_valid & checked["version_ok"] & ~checked["l3_truncated"] &
                ~checked["header_bad"] & (sums["header"] == 0xffff)),
            l4_check.eq(l3_ok & ~checked["fragment"] & (checked["is_tcp"] | checked["is_udp"])),
            l4_bad.eq(Mux(checked["is_tcp"],
                checked["tcp_truncated"] | checked["tcp_bad"],
                checked["udp_truncated"] | checked["udp_bad"])),

            source.vlan.eq(checked["vlan"]),
            source.l3_offset.eq(mac_header_length + vlan_tag_length*checked["vlan"]),
            source.runt.eq(checked["runt"]),
            source.frame_error.eq(frame["frame_error"]),
            If(ip_valid,
                source.protocol.eq(frame["protocol"]),
                source.l4_offset.eq(source.l3_offset + frame["header_length"]),
            ),
            source.l3_status.eq(Mux(is_ipv4, Mux(l3_ok, L3_OK, L3_BAD), L3_NOT_IPV4)),
            If(l4_check,
                If(l4_bad,
                    source.l4_status.eq(L4_BAD)
                ).Elif(~(checked["is_udp"] & checked["udp_no_checksum"]),
                    source.l4_status.eq(Mux(l4_sum == 0xffff, L4_OK, L4_BAD))
                )
            ),
            source.truncated.eq(checked["eth_truncated"] |
                (is_ipv4 & (checked["ip_truncated"] | checked["l3_truncated"])) |
                (l4_check & Mux(checked["is_tcp"], checked["tcp_truncated"], checked["udp_truncated"]))),
            source.length_error.eq((ip_valid & checked["header_bad"]) |
                (l4_check & Mux(checked["is_tcp"], checked["tcp_bad"], checked["udp_bad"]))),
        ]

    def capture(self, enable, field):
        """Register `field` of a header whose byte 0 is in lane 2, from the beat on sink when
        `enable` is set (the caller selects the word that holds the field)."""
        lane   = (2 + field.byte) % 4
        nbytes = (field.offset + field.width + 7)//8
        assert lane + nbytes <= 4
        value = self.sink.data[8*lane:8*(lane + nbytes)][field.offset:field.offset + field.width]
        if field.width > 8:
            value = reverse_bytes(value)
        register = Signal(field.width)
        self.sync += If(enable, register.eq(value))
        return register
