#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Internet checksum engines for the offload NIC: a general byte-range accumulator, the header
parser and summing front-end shared by the RX and TX checksum cores, and RX checksum verification
(TX insertion is in tx_checksum.py).

Streams use LiteEth's PHY-side layout (`eth_phy_description`): 32-bit data, 4 bytes per beat, the
first byte on the wire in data[0:8]; on the last beat `last_be` is one-hot on the last valid byte.

The checksum is the Internet checksum of RFC 1071: the ones'-complement sum of big-endian 16-bit
words. Ones'-complement addition is associative and commutative, so a frame is summed in plain binary
a beat at a time and the carries are folded back later (RFC 1071 2(C), deferred carries).
"""

from functools import reduce
from operator import add, or_

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

# Header fields read by ChecksumParser, as LiteEth HeaderFields (byte, bit offset, width) relative to
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
    "tcp_checksum":    HeaderField(16, 0, 16),
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

# Checksum Parser ----------------------------------------------------------------------------------

def header_lanes(at, start, length):
    """Per byte lane, whether the beat on sink holds one of the bytes [start, start + length) of a
    header whose byte 0 is in lane 2 and whose beat k is flagged by at[k]."""
    lanes = [[] for _ in range(4)]
    for byte in range(start, start + length):
        beat, lane = divmod(2 + byte, 4)
        lanes[lane].append(at[beat])
    return [reduce(or_, conditions, 0) for conditions in lanes]

def header_position(field):
    """(beat, lane) of the first byte of `field` in a header that starts in lane 2 of its beat 0:
    every L3 and L4 header here (14 or 18 bytes into the frame, IPv4 headers are 4*IHL bytes)."""
    return divmod(2 + field.byte, 4)

def field_range(field):
    return field.byte, (field.offset + field.width + 7)//8

def finish_fold(acc, carry):
    """acc + carry for a sum one fold away from done: acc is at most 1 when carry is 1."""
    return Cat(acc[0] ^ carry[0], acc[1] | (acc[0] & carry[0]), acc[2:])

def is_negative_zero(acc, carry):
    """Whether a sum held as acc + carry (acc + carry <= 0x10002) is 0xFFFF, the value a correct
    Internet checksum sums to (RFC 1624 3), without an adder to fold the carry."""
    return (acc[2:] == 2**14 - 1) & ((acc[:2] + carry) == 3)

class ChecksumParser(LiteXModule):
    """Front-end shared by RxChecksum and TxChecksum: parses Ethernet (at most one 802.1Q tag),
    IPv4 (with options), TCP and UDP headers and sums the IPv4 header and the TCP/UDP segment with
    its pseudo-header, from every beat presented on `sink` (it never stalls: connect the beats the
    parent accepts).

    The L3 header starts 14 or 18 bytes into the frame, in lane 2 of beat 3 or 4; IPv4 headers are
    multiples of 4 bytes, so the L4 header starts in lane 2 too. Both are tracked by beat, and every
    field sits at a fixed (beat, lane) of its header; the only counters are the frame's first beats,
    the IPv4 header length and the IPv4 datagram length.

    Two sums, each a 16-bit register plus a 2-bit deferred carry:
    - `header`: the IPv4 header;
    - `l4`: the TCP/UDP segment plus the pseudo-header (RFC 793 3.1, RFC 768): the addresses and
      protocol are summed from the header, the length as total_length + ~(4*IHL).
    With `zero_checksum_fields` the IPv4 and TCP/UDP checksum fields are summed as zeros (TX: the
    value there is not trusted). On cycles without a beat both sums add their carries, so two cycles
    after the last beat they are folded: `header_sum` and `l4_sum` are then the 16-bit ones'-
    complement sums (never 0 for an IPv4 frame).

    With `length_from_frame` (TX) the parser has two more inputs: `datagram_is_frame` (held over a
    frame) takes the IPv4 datagram to end with the frame (the total length field is ignored, and
    `total_length` is the frame's length from the L3 header on, valid the cycle after the last beat)
    and `l4_extra`, read on the last beat, is added to the L4 sum (TX: TCP flags set after the
    sum). Both are added the cycle after the last beat, so three cycles after it the carries may
    not be folded yet: `header_sum` and `l4_sum` finish the fold (the sums are then at most 1 with
    a carry of 1).

    With `pipelined_sums` (RX and TX) each beat's masked words are registered before they are added: the
    sums (and the clear on beat 2) run one cycle behind the beats, so every figure above about
    `header_sum` and `l4_sum` is one cycle later. The path from the beat's acceptance through the
    lane selection does not continue into the two adders in the same cycle.

    Outputs describe the last frame: they are valid from the cycle after its last beat until the
    first beat of the next frame (flags) or its third beat (sums, fields; one cycle more with
    `pipelined_sums`).
    """
    def __init__(self, zero_checksum_fields=False, length_from_frame=False, pipelined_sums=False):
        dw = 32
        self.pipelined_sums = pipelined_sums
        self.sink = sink = stream.Endpoint(eth_phy_description(dw))
        self.datagram_is_frame = Signal()
        self.l4_extra          = Signal(16)
        self.total_length      = total_length = Signal(16)

        self.vlan            = Signal() # One 802.1Q tag.
        self.runt            = Signal() # Shorter than 60 bytes.
        self.eth_truncated   = Signal() # Ends before the L3 header.
        self.ipv4            = Signal() # EtherType IPv4 and the frame reaches the L3 header.
        self.ip_truncated    = Signal() # Ends inside the fixed IPv4 header.
        self.l3_truncated    = Signal() # Ends before the end of the IPv4 header or datagram.
        self.header_bad      = Signal() # IHL < 5 or total_length < 4*IHL.
        self.version_ok      = Signal()
        self.fragment        = Signal() # MF set or fragment offset != 0.
        self.protocol        = Signal(8)
        self.ihl             = Signal(4)
        self.is_tcp          = Signal()
        self.is_udp          = Signal()
        self.l4_truncated    = Signal() # TCP/UDP header longer than the datagram's L4 length.
        self.l4_bad          = Signal() # TCP data offset < 5, or UDP length != L4 length.
        self.udp_no_checksum = Signal() # UDP checksum field 0 (RFC 768: none computed).
        self.l3_ok           = Signal() # IPv4 header complete and consistent (checksum aside).
        self.l4_check        = Signal() # l3_ok, TCP or UDP and not a fragment.
        self.header_sum_ok   = Signal() # The header sums to 0xFFFF.
        self.l4_sum_ok       = Signal() # The segment and pseudo-header sum to 0xFFFF.
        self.header_sum      = Signal(16)
        self.l4_sum          = Signal(16)

        # # #

        self.comb += sink.ready.eq(1)
        accept  = sink.valid
        present = valid_lanes(sink.last, sink.last_be)
        lo      = Cat(sink.data[8:16],  sink.data[0:8])   # Big-endian 16-bit word in lanes 0, 1.
        payload_byte = [sink.data[8*i:8*(i + 1)] for i in range(4)]

        # Frame position: the first beats, then beats of the L3 and L4 headers. --------------------
        beat  = Signal(4) # Index of the beat on sink in its frame, saturating.
        first = Signal()
        tag   = Signal()
        self.comb += [
            first.eq(accept & (beat == 0)),
            tag.eq((beat == 3) & (lo == ethernet_type_vlan) & present[1]),
        ]
        self.sync += If(accept,
            If(sink.last, beat.eq(0)).Elif(beat != 2**len(beat) - 1, beat.eq(beat + 1)),
            If(first, self.vlan.eq(0)),
            If(beat == 3, self.vlan.eq(tag)),
        )

        # l3_at[k]: the beat on sink is beat k of the IPv4 header (bytes 4k - 2 .. 4k + 1).
        l3_at    = Array(Signal(name=f"l3_at{k}") for k in range(6))
        l3_after = Signal(5)
        self.comb += [
            l3_at[0].eq(accept & (((beat == 3) & ~tag) | ((beat == 4) & self.vlan))),
            [l3_at[k].eq(accept & l3_after[k - 1]) for k in range(1, 6)],
        ]
        self.sync += If(accept, l3_after.eq(Mux(sink.last, 0, Cat(*[l3_at[k] for k in range(5)]))))

        def field(f):
            """(header beat, value on sink) of HeaderField `f` of a header starting in lane 2."""
            beat, lane = header_position(f)
            nbytes = (f.offset + f.width + 7)//8
            assert lane + nbytes <= 4
            value = sink.data[8*lane:8*(lane + nbytes)][f.offset:f.offset + f.width]
            return beat, reverse_bytes(value) if f.width > 8 else value

        # IPv4 header end: beat IHL holds its last two bytes in lanes 0, 1 and the L4 header from
        # lane 2 on.
        ihl_beat, ihl_now = field(rx_l3_fields["ihl"])
        assert ihl_beat == 0
        header_left = Signal(4)
        in_header   = Signal()
        header_end  = Signal()
        in_l4       = Signal()
        self.comb += header_end.eq(accept & in_header & (header_left == 0))
        self.sync += If(accept,
            If(sink.last,
                in_header.eq(0),
                in_l4.eq(0),
            ).Elif(l3_at[0],
                in_header.eq(1),
                header_left.eq(ihl_now - 1),
            ).Elif(in_header,
                header_left.eq(header_left - 1),
                If(header_left == 0, in_header.eq(0), in_l4.eq(1)),
            )
        )
        l4_at    = Array(Signal(name=f"l4_at{k}") for k in range(5))
        l4_after = Signal(4)
        self.comb += [
            l4_at[0].eq(header_end),
            [l4_at[k].eq(accept & l4_after[k - 1]) for k in range(1, 5)],
        ]
        self.sync += If(accept, l4_after.eq(Mux(sink.last, 0, Cat(*[l4_at[k] for k in range(4)]))))

        # IPv4 datagram end: total_length is on header beat 1; the datagram's last byte (header
        # byte total_length - 1) is on header beat (total_length + 1)//4, lane (total_length + 1)%4.
        # Counted down from beat 2; total_length < 7 ends it before that (a bad header anyway).
        tl_beat, tl_now = field(rx_l3_fields["total_length"])
        assert tl_beat == 1
        datagram_from_2 = Signal(17)
        datagram_left   = Signal(14)
        datagram_lane   = Signal(2)
        counting        = Signal()
        datagram_end    = Signal()
        self.comb += [
            datagram_from_2.eq(tl_now - 7),
            datagram_end.eq(accept & counting & (datagram_left == 0)),
        ]
        self.sync += If(accept,
            If(sink.last,
                counting.eq(0),
            ).Elif(l3_at[1],
                counting.eq(~datagram_from_2[16]),
                datagram_left.eq(datagram_from_2[2:16]),
                datagram_lane.eq(datagram_from_2[:2]),
            ).Elif(counting,
                datagram_left.eq(datagram_left - 1),
                If(datagram_left == 0, counting.eq(0)),
            )
        )
        # Per lane: a byte of the datagram from header beat 2 on.
        in_datagram = [counting & ((datagram_left != 0) | (datagram_lane >= i)) for i in range(4)]
        to_frame_end      = Signal() # On the frame's beats ...
        to_frame_end_last = Signal() # ... and from its last beat on.
        if length_from_frame:
            self.comb += to_frame_end.eq(self.datagram_is_frame)
            in_datagram = [Mux(to_frame_end, present[i], d) for i, d in enumerate(in_datagram)]

        # Header fields, captured as their beat passes. ---------------------------------------------
        ip_type         = Signal()
        tcp_data_offset = Signal(4)
        udp_length_ok   = Signal()
        header_length   = Signal(6)
        l4_length       = Signal(17) # Bit 16: total_length < 4*IHL.
        l4_short        = Signal()   # Below 64: compared with header sizes on 6 bits only.
        self.comb += [
            header_length.eq(self.ihl << 2),
            l4_length.eq(total_length - header_length),
            l4_short.eq(l4_length[6:16] == 0),
        ]
        captures = {
            "ethertype":       lambda v: ip_type.eq(v == ethernet_type_ip),
            "version":         lambda v: self.version_ok.eq(v == 4),
            "ihl":             lambda v: self.ihl.eq(v),
            "total_length":    lambda v: If(~to_frame_end, total_length.eq(v)),
            "fragment":        lambda v: self.fragment.eq(v[:ipv4_fragment_mf + 1] != 0),
            "protocol":        lambda v: self.protocol.eq(v),
        }
        for name, f in rx_l3_fields.items():
            beat_index, value = field(f)
            self.sync += If(l3_at[beat_index], captures[name](value))
        captures = {
            "udp_length":      lambda v: udp_length_ok.eq(v == l4_length[:16]),
            "udp_checksum":    lambda v: self.udp_no_checksum.eq(v == 0),
            "tcp_data_offset": lambda v: tcp_data_offset.eq(v),
        }
        for name, f in rx_l4_fields.items():
            if name in captures:
                beat_index, value = field(f)
                self.sync += If(l4_at[beat_index], captures[name](value))

        # Sums. -------------------------------------------------------------------------------------
        def lanes_or(*lane_lists):
            return [reduce(or_, conditions) for conditions in zip(*lane_lists)]

        # The segment: from lane 2 of the header's last beat to the datagram's last byte.
        # The header: from lane 2 of its beat 0 to lane 1 of its beat IHL.
        header_lanes_on = [accept & in_header]*2 + [l3_at[0] | (accept & in_header & ~header_end)]*2
        l4_from  = header_end | (accept & in_l4)
        segment  = [accept & in_l4 & in_datagram[i] for i in range(2)] + \
                   [l4_from & in_datagram[i] for i in range(2, 4)]
        pseudo   = lanes_or(*[header_lanes(l3_at, *field_range(ipv4_header_fields[name]))
            for name in ["total_length", "protocol", "sender_ip", "target_ip"]])
        l4_lanes_on = lanes_or(segment, pseudo)
        if zero_checksum_fields:
            ip_checksum  = header_lanes(l3_at, *field_range(ipv4_header_fields["checksum"]))
            udp_checksum = header_lanes(l4_at, *field_range(rx_l4_fields["udp_checksum"]))
            tcp_checksum = header_lanes(l4_at, *field_range(rx_l4_fields["tcp_checksum"]))
            header_lanes_on = [on & ~off for on, off in zip(header_lanes_on, ip_checksum)]
            l4_lanes_on = [on & ~(self.is_udp & u) & ~(self.is_tcp & t)
                for on, u, t in zip(l4_lanes_on, udp_checksum, tcp_checksum)]
        # The pseudo-header length is total_length - 4*IHL: total_length is summed from the header
        # and ~(4*IHL) (ones'-complement negation) is added in the free lanes of the checksum beat.
        minus_header_length = Signal(16)
        self.comb += minus_header_length.eq(Mux(l3_at[3], Cat(~header_length, C(2**10 - 1, 10)), 0))
        header_low_extra, l4_high_extra = 0, 0
        if length_from_frame:
            # The total length field counts as 0; the frame's length is added after the frame.
            length_lanes    = header_lanes(l3_at, *field_range(ipv4_header_fields["total_length"]))
            header_lanes_on = [on & ~(to_frame_end & off) for on, off in zip(header_lanes_on, length_lanes)]
            l4_lanes_on     = [on & ~(to_frame_end & off) for on, off in zip(l4_lanes_on, length_lanes)]
            # Frame length - L3 offset = 4*(beats before the last) + last lane + 1 - 14 - 4*vlan.
            beats      = Signal(10)
            last_lane  = Signal(2)
            added      = Signal()
            l4_extra   = Signal(16)
            self.comb += last_lane.eq(Mux(~present[3], Mux(present[2], 2, Mux(present[1], 1, 0)), 3))
            self.sync += [
                If(accept, beats.eq(Mux(sink.last, 0, beats + 1))),
                If(accept & sink.last & to_frame_end,
                    total_length.eq(Cat(last_lane, beats) + 1 - mac_header_length -
                        vlan_tag_length*self.vlan)),
                If(accept & sink.last, l4_extra.eq(self.l4_extra)),
                added.eq(accept & sink.last),
            ]
            self.sync += If(accept & sink.last, to_frame_end_last.eq(to_frame_end))
            # l4_extra is ORed into the TCP flags: only the bits not set already are added.
            flags_beat, flags_value = field(HeaderField(13, 0, 8)) # RFC 793 3.1.
            flags_seen = Signal(8)
            self.sync += If(l4_at[flags_beat], flags_seen.eq(flags_value))
            header_low_extra = Mux(added & to_frame_end_last, total_length, 0)
            l4_high_extra    = Mux(added & self.is_tcp, l4_extra & ~flags_seen, 0)
            minus_header_length = minus_header_length | header_low_extra

        header_acc, header_carry = self.accumulator(payload_byte, header_lanes_on, beat, header_low_extra)
        l4_acc, l4_carry = self.accumulator(payload_byte, l4_lanes_on, beat, minus_header_length,
            l4_high_extra)

        # Per-frame results. ------------------------------------------------------------------------
        reached = {
            "eth":        l3_at[0] & present[1],
            "ip":         l3_at[5] & present[1],
            "header":     header_end & present[1],
            "datagram":   (l3_at[1] & datagram_from_2[16]) |
                          (datagram_end & Array(present[i] for i in range(4))[datagram_lane]),
            "min_length": accept & (beat == (eth_min_frame_no_fcs - 1)//4) & present[3],
        }
        done = {}
        for name, condition in reached.items():
            done[name] = flag = Signal(name=f"{name}_reached")
            self.sync += [If(first, flag.eq(0)), If(condition, flag.eq(1))]

        tcp_header_bytes = Cat(C(0, 2), tcp_data_offset)
        self.comb += [
            self.runt.eq(~done["min_length"]),
            self.eth_truncated.eq(~done["eth"]),
            self.ipv4.eq(done["eth"] & ip_type),
            self.ip_truncated.eq(~done["ip"]),
            self.l3_truncated.eq(Mux(to_frame_end_last, ~done["header"],
                ~done["datagram"] | (~done["header"] & (self.ihl != 0)))),
            self.header_bad.eq((self.ihl < ipv4_header_length//4) | l4_length[16]),
            self.is_tcp.eq(self.protocol == tcp_protocol),
            self.is_udp.eq(self.protocol == udp_protocol),
            If(self.is_tcp,
                self.l4_truncated.eq(l4_short &
                    ((l4_length[:6] < tcp_header_length) | (tcp_header_bytes > l4_length[:6]))),
                self.l4_bad.eq(~self.l4_truncated & (tcp_data_offset < tcp_header_length//4)),
            ).Else(
                self.l4_truncated.eq(l4_short & (l4_length[:6] < udp_header_length)),
                self.l4_bad.eq(~self.l4_truncated & ~udp_length_ok),
            ),
            self.l3_ok.eq(self.ipv4 & ~self.ip_truncated & self.version_ok & ~self.l3_truncated &
                ~self.header_bad),
            self.l4_check.eq(self.l3_ok & ~self.fragment & (self.is_tcp | self.is_udp)),
            self.header_sum_ok.eq(is_negative_zero(header_acc, header_carry)),
            self.l4_sum_ok.eq(is_negative_zero(l4_acc, l4_carry)),
        ]
        if length_from_frame:
            self.comb += [
                self.header_sum.eq(finish_fold(header_acc, header_carry)),
                self.l4_sum.eq(finish_fold(l4_acc, l4_carry)),
            ]
        else:
            self.comb += [
                self.header_sum.eq(header_acc),
                self.l4_sum.eq(l4_acc),
            ]

    def accumulator(self, payload_byte, lanes_on, beat, extra_low_word=0, extra_high_word=0):
        """Sum of the enabled bytes of every beat (even lanes are high bytes) into a 16-bit register
        with a 2-bit deferred carry (RFC 1071 2(C)); cleared on beat 2, before any header byte."""
        masked = [Mux(on, b, 0) for on, b in zip(lanes_on, payload_byte)]
        low_word  = Cat(masked[1], masked[0]) | extra_low_word
        high_word = Cat(masked[3], masked[2]) | extra_high_word
        clear     = self.sink.valid & (beat == 2)
        if self.pipelined_sums:
            words = Signal(33)
            self.sync += words.eq(Cat(low_word, high_word, clear))
            low_word, high_word, clear = words[:16], words[16:32], words[32]
        acc   = Signal(16)
        carry = Signal(2)
        beat_sum = Signal(17, attr={("keep", "true")})
        total    = Signal(18)
        self.comb += [
            beat_sum.eq(low_word + high_word),
            total.eq(acc + carry + beat_sum),
        ]
        self.sync += If(clear,
            acc.eq(0),
            carry.eq(0),
        ).Else(
            acc.eq(total[:16]),
            carry.eq(total[16:]),
        )
        return acc, carry

# RX Checksum --------------------------------------------------------------------------------------

class RxChecksum(LiteXModule):
    """Verifies the IPv4 header checksum (RFC 791) and the TCP (RFC 793) or UDP (RFC 768) checksum,
    pseudo-header included, of Ethernet frames with at most one 802.1Q tag.

    Frames pass from `sink` to `source` unchanged, two cycles later, and the per-frame status
    (rx_checksum_status_layout) is valid on the source beat that has `last` set. A beat is accepted
    on every cycle where `source` is ready.

    The parser's sums are pipelined (ChecksumParser pipelined_sums): a beat's words are registered
    before they are added, so that the path from the MAC's FIFO through the lane selection does not
    go on into the adders' carry chains in the same cycle. The sums are therefore one cycle behind
    the parser's flags, and the beats go through two stages: on the first (`mid`) the parser's flags
    describe the frame up to that beat and are registered with it; on the second (`source`) the sums
    include it. While a last beat waits on `source` the parser has taken at most the next frame's
    first beat (no header byte: it adds nothing to the sums, which are cleared on beat 2 only).
    """
    def __init__(self):
        dw = 32
        self.sink   = sink   = stream.Endpoint(eth_phy_description(dw))
        self.source = source = stream.Endpoint(rx_checksum_description(dw))

        # # #

        self.parser = parser = ChecksumParser(pipelined_sums=True)
        mid     = stream.Endpoint(eth_phy_description(dw)) # Only valid, last and payload are used.
        advance = Signal()
        self.comb += [
            advance.eq(~source.valid | source.ready),
            sink.ready.eq(advance),
            sink.connect(parser.sink, omit={"valid", "ready"}),
            parser.sink.valid.eq(sink.valid & advance),
        ]
        self.sync += If(advance,
            mid.valid.eq(sink.valid),
            mid.last.eq(sink.last),
            mid.payload.eq(sink.payload),
            source.valid.eq(mid.valid),
            source.last.eq(mid.last),
            source.payload.eq(mid.payload),
        )

        error_seen  = Signal()
        frame_error = Signal()
        self.sync += If(sink.valid & advance,
            error_seen.eq(~sink.last & (error_seen | (sink.error != 0))),
            If(sink.last, frame_error.eq(error_seen | (sink.error != 0))),
        )

        # Stage 1: what the parser's flags say about the frame up to the beat on `mid`, registered
        # as that beat moves to `source` (the parser may then take the next frame's first beat).
        p = parser
        ip_valid = Signal()
        flags = Record([
            ("vlan", 1), ("runt", 1), ("frame_error", 1), ("protocol", 8), ("ihl", 4),
            ("ip_valid", 1), ("ipv4", 1), ("l3_ok", 1), ("l4_check", 1), ("l4_truncated", 1),
            ("l4_bad", 1), ("udp_no_checksum", 1), ("truncated", 1), ("header_bad", 1),
        ])
        self.comb += ip_valid.eq(p.ipv4 & ~p.ip_truncated)
        self.sync += If(advance,
            flags.vlan.eq(p.vlan),
            flags.runt.eq(p.runt),
            flags.frame_error.eq(frame_error),
            flags.protocol.eq(p.protocol),
            flags.ihl.eq(p.ihl),
            flags.ip_valid.eq(ip_valid),
            flags.ipv4.eq(p.ipv4),
            flags.l3_ok.eq(p.l3_ok),
            flags.l4_check.eq(p.l4_check),
            flags.l4_truncated.eq(p.l4_truncated),
            flags.l4_bad.eq(p.l4_bad),
            flags.udp_no_checksum.eq(p.is_udp & p.udp_no_checksum),
            flags.truncated.eq(p.eth_truncated | (p.ipv4 & (p.ip_truncated | p.l3_truncated))),
            flags.header_bad.eq(ip_valid & p.header_bad),
        )

        # Stage 2: the sums now include the beat on `source`.
        l3_ok = Signal()
        self.comb += [
            l3_ok.eq(flags.l3_ok & p.header_sum_ok),
            source.vlan.eq(flags.vlan),
            source.l3_offset.eq(mac_header_length + vlan_tag_length*flags.vlan),
            source.runt.eq(flags.runt),
            source.frame_error.eq(flags.frame_error),
            If(flags.ip_valid,
                source.protocol.eq(flags.protocol),
                source.l4_offset.eq(source.l3_offset + (flags.ihl << 2)),
            ),
            source.l3_status.eq(Mux(flags.ipv4, Mux(l3_ok, L3_OK, L3_BAD), L3_NOT_IPV4)),
            If(l3_ok & flags.l4_check,
                If(flags.l4_truncated | flags.l4_bad,
                    source.l4_status.eq(L4_BAD)
                ).Elif(~flags.udp_no_checksum,
                    source.l4_status.eq(Mux(p.l4_sum_ok, L4_OK, L4_BAD))
                )
            ),
            source.truncated.eq(flags.truncated | (l3_ok & flags.l4_check & flags.l4_truncated)),
            source.length_error.eq(flags.header_bad | (l3_ok & flags.l4_check & flags.l4_bad)),
        ]
