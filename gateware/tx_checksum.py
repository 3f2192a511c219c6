#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""TX checksum insertion for the offload NIC, and the lengths and flags TSO cannot write.

The IPv4 header checksum (RFC 791) and the TCP (RFC 793) or UDP (RFC 768) checksum precede the
bytes they cover, so frames are stored and forwarded: a block-RAM FIFO holds the frame while the
ChecksumParser (shared with RxChecksum) sums it, a two-entry FIFO holds its results, and the
fields are overwritten as the frame leaves. The FIFO holds two maximum frames, so that frame N+1 is
summed while frame N is sent, one beat per cycle on both sides.

Being store-and-forward, TxChecksum also finishes TSO's cut-through segments (gateware/tso.py): with
`ip_length` it writes the IPv4 total length from the frame's length, and it sets the TCP flags
given in `tcp_flags` on the frame's last beat (TSO: FIN and PSH on a chain's last segment), both
covered by the checksums it writes.
"""

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.stream import EndpointDescription

from migen.genlib.fifo import SyncFIFOBuffered

from liteeth.common import eth_phy_description, mac_header_length, ipv4_header_fields

from .checksum import ChecksumParser, eth_min_frame_no_fcs, header_position, rx_l4_fields, tcp_header_length

# Layouts ------------------------------------------------------------------------------------------

# Per-frame requests (docs/nic.md: TSO -> TxChecksum): held constant over the frame, `tcp_flags`
# read on its last beat.
tx_checksum_param_layout = [
    ("ip_csum",   1), # Insert the IPv4 header checksum.
    ("l4_csum",   1), # Insert the TCP or UDP checksum (with the IPv4 pseudo-header).
    ("ip_length", 1), # Write the IPv4 total length: the frame ends with the datagram (TCP only).
    ("tcp_flags", 8), # OR these into the TCP flags (with l4_csum; TCP only).
]

def tx_checksum_description(dw=32):
    return EndpointDescription(eth_phy_description(dw).payload_layout, tx_checksum_param_layout)

# What the output side needs to patch one frame.
tx_checksum_result_layout = [
    ("ip_checksum",  16),
    ("l4_checksum",  16),
    ("total_length", 12), # Frames longer than 4096 bytes are not stored.
    ("tcp_flags",     8),
    ("write_ip",      1),
    ("write_length",  1),
    ("write_l4",      1),
    ("vlan",          1), # The IPv4 header starts on frame beat 3 + vlan, lane 2.
    ("l4_beat",       5), # Frame beat of the TCP/UDP checksum field.
    ("l4_high",       1), # The field is in lanes 2 and 3 (TCP), not 0 and 1 (UDP).
]

# TX Checksum --------------------------------------------------------------------------------------

class TxChecksum(LiteXModule):
    """Writes the IPv4 header checksum (`ip_csum`) and the TCP/UDP checksum (`l4_csum`; UDP's 0 is
    sent as 0xFFFF, RFC 768) of Ethernet frames with at most one 802.1Q tag. The checksum fields
    already in the frame are ignored (summed as zeros). A frame that is not IPv4, is truncated or
    whose lengths disagree (IHL, total length, and with `l4_csum` the TCP data offset or UDP
    length) leaves unchanged, as does the L4 checksum of a fragment or of another protocol.

    With `ip_length` the total length field is ignored and written: frame length - L3 offset; a
    frame with `ip_length` that is not TCP leaves unchanged. `tcp_flags` are set along with the
    TCP checksum.

    Frames longer than `cut_through_beats` beats cannot be stored whole: they leave unchanged as
    soon as that many beats are in, so the core never waits for a frame end it has no room for.
    `error` is kept as one bit per beat: a beat with any error bit leaves with all four. The lanes
    after a frame's last byte leave as zeros.

    Frames shorter than 60 bytes leave padded to 60 with zeros (IEEE 802.3 minimum frame without
    FCS), so the MAC's own padding is not needed: LiteEth's 32-bit padding inserter (the boards'
    sys_clk datapath) sends a short frame's last word whole, garbage lanes included, and after a
    frame of 57 to 59 bytes it does not reset its byte counter, so the next short frame leaves
    unpadded (a runt).
    """
    def __init__(self, fifo_depth=1024, cut_through_beats=512):
        dw = 32
        assert 2*cut_through_beats <= fifo_depth and 4*cut_through_beats <= 2**12
        self.sink   = sink   = stream.Endpoint(tx_checksum_description(dw))
        self.source = source = stream.Endpoint(eth_phy_description(dw))

        # # #

        self.parser    = parser    = ChecksumParser(zero_checksum_fields=True, length_from_frame=True,
            pipelined_sums=True)
        # 36 bits a beat (two DP16KD): data, error, last, and the last beat's last lane.
        self.data_fifo = data_fifo = SyncFIFOBuffered(dw + 4, fifo_depth)
        self.results   = results   = stream.SyncFIFO(tx_checksum_result_layout, 2)

        # Input: every beat into the data FIFO and the parser. ------------------------------------
        # The lanes after the last byte of a frame are stored as zeros: they are sent as padding
        # (below) when the frame is shorter than 60 bytes, and must not carry what the DMA left
        # there (other buffer bytes).
        stall     = Signal()
        accept    = Signal()
        last_lane = Signal(2)
        data      = Signal(dw)
        self.comb += [
            last_lane.eq(Mux(sink.last_be[3] | (sink.last_be == 0), 3,
                Mux(sink.last_be[2], 2, Mux(sink.last_be[1], 1, 0)))),
            [data[8*i:8*(i + 1)].eq(Mux(sink.last & (last_lane < i), 0, sink.data[8*i:8*(i + 1)]))
                for i in range(1, 4)],
            data[:8].eq(sink.data[:8]),
            data_fifo.we.eq(sink.valid & ~stall),
            data_fifo.din.eq(Cat(data, sink.error != 0, sink.last, last_lane)),
            sink.ready.eq(data_fifo.writable & ~stall),
            accept.eq(sink.valid & sink.ready),
            parser.sink.valid.eq(accept),
            parser.sink.last.eq(sink.last),
            parser.sink.payload.eq(sink.payload),
            parser.datagram_is_frame.eq(sink.ip_length),
            parser.l4_extra.eq(Mux(sink.l4_csum, sink.tcp_flags, 0)),
        ]
        want_ip     = Signal()
        want_l4     = Signal()
        want_length = Signal()
        tcp_flags   = Signal(8)
        self.sync += If(accept & sink.last,
            want_ip.eq(sink.ip_csum),
            want_l4.eq(sink.l4_csum),
            want_length.eq(sink.ip_length),
            tcp_flags.eq(sink.tcp_flags),
        )

        # Results: decided the cycle after the last beat (the parser's flags), sent three cycles
        # later (its pipelined sums are folded by then). No other last beat is taken meanwhile, and
        # no beat while the result waits for room: a new frame's third beat would clear the sums.
        decided  = Signal()
        summing  = Signal()
        folding  = Signal()
        finished = Signal()
        entry    = Record(tx_checksum_result_layout)
        p        = parser
        l4_ok    = Signal()
        l4_wrong = Signal() # With ip_length: TCP only.
        self.comb += [
            l4_wrong.eq(want_length & ~p.is_tcp),
            l4_ok.eq(want_l4 & p.l4_check & ~p.l4_truncated & ~p.l4_bad & ~l4_wrong),
        ]
        udp_beat, udp_lane = header_position(rx_l4_fields["udp_checksum"])
        tcp_beat, tcp_lane = header_position(rx_l4_fields["tcp_checksum"])
        assert (udp_lane, tcp_lane) == (0, 2)
        self.sync += [
            decided.eq(accept & sink.last),
            summing.eq(decided),
            folding.eq(summing),
            If(folding, finished.eq(1)),
            If(decided,
                entry.write_ip.eq(want_ip & p.l3_ok & ~l4_wrong &
                    ~(want_l4 & p.l4_check & (p.l4_truncated | p.l4_bad))),
                entry.write_length.eq(want_length & p.l3_ok & ~l4_wrong &
                    ~(want_l4 & p.l4_check & (p.l4_truncated | p.l4_bad))),
                entry.write_l4.eq(l4_ok),
                entry.total_length.eq(p.total_length),
                entry.tcp_flags.eq(tcp_flags),
                entry.vlan.eq(p.vlan),
                entry.l4_beat.eq(mac_header_length//4 + p.vlan + p.ihl +
                    Mux(p.is_tcp, tcp_beat, udp_beat)),
                entry.l4_high.eq(p.is_tcp),
            ),
        ]

        # Frames longer than cut_through_beats: an early result that changes nothing.
        frame_beats = Signal(max=cut_through_beats)
        early_push  = Signal() # Waiting for room in `results`.
        early_sent  = Signal() # The current (or last) frame's result went early.
        self.sync += [
            If(accept,
                If(sink.last,
                    frame_beats.eq(0)
                ).Elif(frame_beats != cut_through_beats - 1,
                    frame_beats.eq(frame_beats + 1)
                ).Else(
                    early_push.eq(~early_sent),
                    early_sent.eq(1),
                )
            ),
            If(early_push & results.sink.ready, early_push.eq(0)),
            If(finished & (early_sent | results.sink.ready),
                finished.eq(0),
                early_sent.eq(0),
            ),
        ]

        # Zero is tested on ~l4_sum, not on l4_checksum itself: Migen's combinational blocks use
        # non-blocking assignments, so reading l4_checksum there would be a combinational loop
        # (simulators settle it; nextpnr's timing analysis refuses it).
        l4_inverted = Signal(16)
        l4_checksum = Signal(16)
        self.comb += [
            l4_inverted.eq(~p.l4_sum),
            l4_checksum.eq(l4_inverted),
            If(p.is_udp & (l4_inverted == 0), l4_checksum.eq(0xffff)), # RFC 768.
            results.sink.valid.eq(early_push | (finished & ~early_sent)),
            If(~early_push,
                results.sink.payload.eq(entry),
                results.sink.ip_checksum.eq(~p.header_sum),
                results.sink.l4_checksum.eq(l4_checksum),
            ),
            # A result without room stalls from `folding` on: the sums run a cycle behind the beats,
            # so a beat 2 taken while `folding` would clear them the cycle after `finished`.
            stall.eq(((decided | summing | folding) & sink.last) |
                ((early_push | ((folding | finished) & ~early_sent)) & ~results.sink.ready)),
        ]

        # Output: a frame leaves once its result is known; the fields are patched on the way. ------
        out_data  = data_fifo.dout[:dw]
        out_error = data_fifo.dout[dw]
        out_last  = data_fifo.dout[dw + 1]
        out_lane  = data_fifo.dout[dw + 2:]
        res = results.source
        out_beat = Signal(5) # Saturating: beyond every patched field.
        l3_beat  = mac_header_length//4
        ip_beat, ip_lane = header_position(ipv4_header_fields["checksum"])
        tl_beat, tl_lane = header_position(ipv4_header_fields["total_length"])
        assert ip_lane == 0 and tl_lane == 0
        flags_offset = 13 # RFC 793 3.1: the flags are TCP header byte 13, lane 3 of the beat
        assert (2 + flags_offset)//4 == tcp_beat - 1 and (2 + flags_offset) % 4 == 3 # before the checksum.
        pad_beats    = eth_min_frame_no_fcs//4 # 15: frames shorter than 60 bytes are padded here.
        assert eth_min_frame_no_fcs % 4 == 0
        padding      = Signal()
        pad_end      = Signal()
        self.comb += pad_end.eq(padding & (out_beat == pad_beats - 1))
        patch_ip     = Signal()
        patch_length = Signal()
        patch_l4     = Signal()
        patch_flags  = Signal()
        self.comb += [
            source.valid.eq(data_fifo.readable & res.valid),
            data_fifo.re.eq(source.ready & res.valid),
            res.ready.eq(data_fifo.readable & data_fifo.re & out_last),
            source.last.eq(out_last),
            source.last_be.eq(Mux(out_last, 1 << out_lane, 0)),
            source.error.eq(Replicate(out_error, 4)),
            source.data.eq(out_data),
            patch_ip.eq(res.write_ip & (out_beat == l3_beat + ip_beat + res.vlan)),
            patch_length.eq(res.write_length & (out_beat == l3_beat + tl_beat + res.vlan)),
            patch_l4.eq(res.write_l4 & (out_beat == res.l4_beat)),
            patch_flags.eq(res.write_l4 & res.l4_high & (out_beat == res.l4_beat - 1)),
            # Checksums and lengths are big-endian: the high byte goes first, in the lower lane.
            If(patch_ip,
                source.data[:16].eq(reverse_bytes(res.ip_checksum))
            ).Elif(patch_length,
                source.data[:16].eq(reverse_bytes(Cat(res.total_length, C(0, 4))))
            ).Elif(patch_l4 & ~res.l4_high,
                source.data[:16].eq(reverse_bytes(res.l4_checksum))
            ),
            If(patch_l4 & res.l4_high, source.data[16:].eq(reverse_bytes(res.l4_checksum))),
            If(patch_flags, source.data[24:].eq(out_data[24:] | res.tcp_flags)),
            # Padding: a frame shorter than 60 bytes goes on with zero beats up to beat 14, lane 3.
            If(padding,
                source.valid.eq(1),
                data_fifo.re.eq(0),
                res.ready.eq(0),
                source.data.eq(0),
                source.error.eq(0),
                source.last.eq(pad_end),
                source.last_be.eq(Mux(pad_end, 1 << 3, 0)),
            ).Elif(out_last & (out_beat < pad_beats - 1),
                source.last.eq(0),
                source.last_be.eq(0),
            ).Elif(out_last & (out_beat == pad_beats - 1),
                source.last_be.eq(1 << 3), # The lanes after the frame's end are zeros.
            ),
        ]
        self.sync += If(source.valid & source.ready,
            If(~padding & out_last & (out_beat < pad_beats - 1), padding.eq(1)),
            If(pad_end, padding.eq(0)),
        )
        self.sync += If(source.valid & source.ready,
            If(source.last, out_beat.eq(0)).Elif(out_beat != 2**len(out_beat) - 1, out_beat.eq(out_beat + 1))
        )
