#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""TCP segmentation offload (TSO) for the offload NIC's TX path: TxDMA -> TSO -> TxChecksum.

A TSO "frame" on `sink` is a header template (Ethernet, optional 802.1Q tag, IPv4 with options,
TCP with options: `hdr_len` bytes) followed by any number of payload bytes. TSO emits one frame per
`mss` payload bytes (the last one shorter; a header-only frame if there is no payload), each the
template with, per RFC 791 3.1 and RFC 793 3.1:

- IPv4 identification = template ID + segment index (mod 2**16),
- TCP sequence number = template sequence number + payload byte offset (mod 2**32),
- TCP flags: CWR only on the first segment (RFC 3168 6.1.2: CWR goes on the first new segment),
  FIN and PSH cleared (TxChecksum sets them back on the last segment, see below), the others as
  in the template.

TSO is cut-through: a segment's length, and whether it is the last, are only known at its end, so
TSO writes neither. Every segment asks TxChecksum (store-and-forward anyway) for `ip_length` (write
the IPv4 total length from the frame's length), `ip_csum` and `l4_csum`, and the last segment's
last beat carries `tcp_flags`: the template's FIN and PSH, for TxChecksum to set. TSO leaves the
template's total length and checksum fields as they are. Frames with `tso` = 0 pass through
unchanged, one beat per cycle.

The template is written into a 32-word memory as it arrives, checked, then replayed for every
segment; the payload goes through a two-beat window shifted by the segment's byte offset mod 4, one
beat per cycle, the header's last partial word merged with the template. The input waits while a
header is replayed: the output sends a beat on every cycle of a chain but one per chain (the check).

Bad TSO input is dropped, whole, before any of it leaves, and counted (`error` pulses, `errors`
counts): `hdr_len` outside 54..128, `mss` = 0 or above `max_mss` (the longest segment must fit in
TxChecksum's store: 128 + 1920 = 2048 bytes), a frame that ends inside its header, a template that
is not Ethernet [802.1Q] IPv4 TCP with IHL >= 5, data offset >= 5 and `hdr_len` = L3 offset + IP
header + TCP header. The chain length is not limited.

`error` bits on input beats: an output beat carries `error` (all four bits) once an input beat
with `error` set has been used for it or for an earlier beat of the chain; so the last beat of
every segment that holds bytes from (or after) such a beat has it.
"""

from litex.gen import *

from litex.soc.interconnect import stream
from litex.soc.interconnect.stream import EndpointDescription
from litex.soc.interconnect.packet import HeaderField

from liteeth.common import (eth_phy_description, mac_header_length, ethernet_type_ip,
    ipv4_header_fields, ipv4_header_length)

from .checksum import ethernet_type_vlan, vlan_tag_length, tcp_protocol, tcp_header_length

# Layouts ------------------------------------------------------------------------------------------

# Per-frame parameters of the TxDMA -> TSO stream (docs/nic.md).
tx_offload_layout = [
    ("ip_csum",  1), # Insert the IPv4 header checksum.
    ("l4_csum",  1), # Insert the TCP or UDP checksum (with the IPv4 pseudo-header).
    ("tso",      1), # Segment: the first `hdr_len` bytes are the header template.
    ("hdr_len",  8), # Length of the first descriptor of the chain = header template length.
    ("mss",     16), # TCP payload bytes per segment (TSO only).
]

# Per-frame parameters of the TSO -> TxChecksum stream (gateware/tx_checksum.py has the meaning).
tx_checksum_request_layout = [
    ("ip_csum",   1),
    ("l4_csum",   1),
    ("ip_length", 1),
    ("tcp_flags", 8), # Read on the last beat.
]

def tx_offload_description(dw=32):
    return EndpointDescription(eth_phy_description(dw).payload_layout, tx_offload_layout)

def tx_checksum_request_description(dw=32):
    return EndpointDescription(eth_phy_description(dw).payload_layout, tx_checksum_request_layout)

# Constants ----------------------------------------------------------------------------------------

tso_min_header_length = mac_header_length + ipv4_header_length + tcp_header_length # 54
tso_max_header_length = 128
tso_template_words    = tso_max_header_length//4
tso_header_tail       = 2 # hdr_len mod 4 of every good template.
tso_max_mss           = 2048 - tso_max_header_length # TxChecksum stores frames up to 2048 bytes.

tcp_flag_fin = 0x01
tcp_flag_psh = 0x08
tcp_flag_cwr = 0x80

# Header fields, relative to the start of the IPv4 header (l3) or of the TCP header (l4), as
# LiteEth HeaderFields. Both headers start in byte lane 2: l3 is at 14 or 18, and the IPv4 header
# is a multiple of 4 bytes long. TSO reads `tso_l3_fields`/`tso_l4_fields` from the template and
# rewrites `tso_patched_fields` in every segment.
tcp_header_fields = {
    "sequence_high": HeaderField(4,  0, 16), # RFC 793 3.1, split so that each half is in one word.
    "sequence_low":  HeaderField(6,  0, 16),
    "data_offset":   HeaderField(12, 4, 4),
    "flags":         HeaderField(13, 0, 8),
}
tso_l3_fields = {
    "ethertype":      HeaderField(-2, 0, 16), # The (inner) EtherType, just before the L3 header.
    "version":        ipv4_header_fields["version"],
    "ihl":            ipv4_header_fields["ihl"],
    "protocol":       ipv4_header_fields["protocol"],
    "identification": ipv4_header_fields["identification"],
}
tso_l4_fields = {name: tcp_header_fields[name] for name in
    ["sequence_high", "sequence_low", "data_offset", "flags"]}
tso_patched_fields = {
    "identification": ("l3", ipv4_header_fields["identification"]),
    "sequence_high":  ("l4", tcp_header_fields["sequence_high"]),
    "sequence_low":   ("l4", tcp_header_fields["sequence_low"]),
    "flags":          ("l4", tcp_header_fields["flags"]),
}

def field_position(field):
    """(word offset, byte lane, bytes) of a field of a header that starts in lane 2."""
    lane   = (2 + field.byte) % 4
    nbytes = (field.offset + field.width + 7)//8
    assert lane + nbytes <= 4
    return (2 + field.byte)//4, lane, nbytes

# TSO ----------------------------------------------------------------------------------------------

class TSO(LiteXModule):
    """TCP segmentation offload; see the module docstring."""
    def __init__(self, max_mss=tso_max_mss):
        dw = 32
        self.sink    = sink   = stream.Endpoint(tx_offload_description(dw))
        self.source  = source = stream.Endpoint(tx_checksum_request_description(dw))
        self.error   = Signal()   # One-cycle pulse: a bad TSO frame is dropped.
        self.errors  = Signal(16) # Count of those, wrapping.
        self.max_mss = max_mss

        # # #

        template = Memory(dw, tso_template_words)
        write    = template.get_port(write_capable=True)
        read     = template.get_port()
        self.specials += template, write, read

        # Ethernet (14 or 18 bytes), IPv4 and TCP (multiples of 4): a good template ends in lane 1 of
        # its last word, which it shares with the payload.
        hdr_len      = Signal(8)
        mss          = Signal(16)
        header_words = Signal(6) # Full words of the template.
        tail         = tso_header_tail
        self.comb += header_words.eq(hdr_len[2:])

        advance  = Signal() # The output register takes a new beat (or a bubble).
        self.comb += advance.eq(~source.valid | source.ready)
        sink_lane = Signal(2) # Last valid byte lane of the beat on sink.
        self.comb += sink_lane.eq(Mux(~sink.last | sink.last_be[3] | (sink.last_be == 0), 3,
            Mux(sink.last_be[2], 2, Mux(sink.last_be[1], 1, 0))))
        self.sync += If(self.error, self.errors.eq(self.errors + 1))

        # Template: written word by word, its fields captured as they go by (see RxChecksum for the
        # 802.1Q trick: the EtherType is read at word 3, and again at word 4 if it was a tag).
        in_word   = Signal(6)
        capturing = Signal()
        vlan      = Signal()
        l3_word   = Signal(3)
        l4_word   = Signal(5)
        self.comb += [
            write.adr.eq(in_word),
            write.dat_w.eq(sink.data),
            write.we.eq(capturing & sink.valid),
            l3_word.eq(3 + (vlan & (in_word > 3))),
        ]
        self.sync += If(capturing & sink.valid & (in_word == 3),
            vlan.eq(reverse_bytes(sink.data[:16]) == ethernet_type_vlan))
        # The template's ID and sequence number go straight into the segments' counters.
        seq_number = Signal(32)
        ident      = Signal(16)
        tcp_flags  = Signal(8)
        targets  = {"identification": ident, "sequence_high": seq_number[16:],
            "sequence_low": seq_number[:16], "flags": tcp_flags}
        # Fields only compared with a constant are stored as the comparison's result.
        expected = {"ethertype": ethernet_type_ip, "version": 4, "protocol": tcp_protocol}
        capture  = capturing & sink.valid
        l3_fields, l4_fields = {}, {}
        for name, field in tso_l3_fields.items():
            l3_fields[name] = self.capture(capture, in_word, l3_word, field, targets.get(name),
                expected.get(name))
        self.comb += l4_word.eq(3 + vlan + l3_fields["ihl"])
        for name, field in tso_l4_fields.items():
            l4_fields[name] = self.capture(capture, in_word, l4_word, field, targets.get(name))

        l3_offset  = Signal(5)
        header_bad = Signal()
        params_bad = Signal()
        self.comb += [
            l3_offset.eq(mac_header_length + vlan_tag_length*vlan),
            header_bad.eq(
                ~l3_fields["ethertype"] | ~l3_fields["version"] | ~l3_fields["protocol"] |
                (l3_fields["ihl"] < ipv4_header_length//4) |
                (l4_fields["data_offset"] < tcp_header_length//4) |
                (l3_offset + Cat(C(0, 2), l3_fields["ihl"]) +
                    Cat(C(0, 2), l4_fields["data_offset"]) != hdr_len)),
            params_bad.eq(
                (sink.hdr_len < tso_min_header_length) | (sink.hdr_len > tso_max_header_length) |
                (sink.hdr_len[:2] != tso_header_tail) | (sink.mss == 0) | (sink.mss > max_mss)),
        ]

        # Payload window. The next payload bytes are the top `shift` lanes of `prev` (a beat taken
        # earlier), then the beat on sink: output lane l < shift is prev lane 4 - shift + l, lane
        # l >= shift is sink lane l - shift. `shift` = (hdr_len - segment start) mod 4, so it moves
        # by -mss per segment. At a segment's end its next byte may already be in prev (lane 1 or
        # 2) although the header's last word needs it where sink's bytes go: then prev stands in
        # for sink (`prev_as_cur`) for that word, whose payload lanes are 2 and 3 only.
        prev        = Signal(dw)
        prev_last   = Signal() # prev is the chain's last beat ...
        prev_lane   = Signal(2) # ... and this is its last valid lane.
        prev_as_cur = Signal()
        shift       = Signal(2)
        cur_here    = Signal()
        cur_last    = Signal()
        cur_lane    = Signal(2)
        self.comb += [
            cur_here.eq(prev_as_cur | sink.valid),
            cur_last.eq(Mux(prev_as_cur, prev_last, sink.last)),
            cur_lane.eq(Mux(prev_as_cur, prev_lane, sink_lane)),
        ]
        window   = Signal(dw)
        pair     = Cat(prev, sink.data)
        tso_word = Signal() # The output word is a segment's (not a plain frame's: window = sink).
        self.comb += [
            Case(Mux(tso_word, shift, 0), {s: window.eq(pair[8*(4 - s):8*(8 - s)]) for s in range(4)}),
            If(prev_as_cur, Case(shift[0], {s: window[16:].eq(prev[8*(2 - s):8*(4 - s)]) for s in range(2)})),
        ]

        # Per segment: payload bytes still to send, the first payload word (merged with the
        # template's last partial word), the first segment, an error seen on the chain.
        seg_left   = Signal(16)
        first_word = Signal()
        first_seg  = Signal()
        error_seen = Signal()

        # The payload word on offer: it ends at the segment's end or at the chain's.
        start_lane     = Signal(2)
        seg_in_word    = Signal(4)
        seg_fits       = Signal() # The segment ends in this word ...
        seg_end_lane   = Signal(2) # ... at this lane.
        pending_last   = Signal() # The chain ends in prev's pending lanes.
        chain_sum      = Signal(3)
        chain_in_word  = Signal()
        chain_end_lane = Signal(2)
        word_lane      = Signal(2)
        seg_done       = Signal()
        chain_done     = Signal()
        uses_cur       = Signal() # The word takes bytes from the beat on sink (or prev for it).
        end_source     = Signal(2) # Lane of the segment's last byte in the beat it comes from.
        self.comb += [
            start_lane.eq(Mux(first_word, tail, 0)),
            seg_in_word.eq(seg_left[:3] + start_lane),
            seg_fits.eq((seg_left[3:] == 0) & (seg_in_word <= 4)),
            seg_end_lane.eq(start_lane + seg_left[:2] - 1),
            pending_last.eq(prev_last & ~prev_as_cur),
            chain_sum.eq(Mux(pending_last, prev_lane, cur_lane) + shift),
            chain_in_word.eq(pending_last | (cur_here & cur_last & ~chain_sum[2])),
            chain_end_lane.eq(chain_sum[:2]),
            If(seg_fits & (~chain_in_word | (seg_end_lane < chain_end_lane)),
                word_lane.eq(seg_end_lane)
            ).Elif(chain_in_word,
                word_lane.eq(chain_end_lane)
            ).Else(
                word_lane.eq(3)
            ),
            seg_done.eq(seg_fits | chain_in_word),
            chain_done.eq(chain_in_word & (~seg_fits | (chain_end_lane <= seg_end_lane))),
            uses_cur.eq(~pending_last & ~(seg_fits & (seg_end_lane < shift))),
            end_source.eq(seg_end_lane - shift),
        ]

        # Output word: template lanes (patched) or window lanes.
        ow        = Signal(6) # Template word on the read port's output.
        ow_next   = Signal(6)
        step      = Signal()  # ow moves to ow_next.
        self.comb += read.adr.eq(Mux(step, ow_next, ow))
        replaying = Signal()
        header_word  = Signal(dw)
        flags_lane   = field_position(tcp_header_fields["flags"])[1]
        flags_clear  = Signal(8)
        self.comb += flags_clear.eq(tcp_flag_fin | tcp_flag_psh | Mux(first_seg, 0, tcp_flag_cwr))
        patch_values = {
            "identification": ident,
            "sequence_high":  seq_number[16:],
            "sequence_low":   seq_number[:16],
            "flags":          read.dat_r[8*flags_lane:8*flags_lane + 8] & ~flags_clear,
        }
        relative = {"l3": Signal(6), "l4": Signal(6)}
        self.comb += [
            relative["l3"].eq(ow - (3 + vlan)),
            relative["l4"].eq(ow - l4_word),
            header_word.eq(read.dat_r),
        ]
        for name, (header, field) in tso_patched_fields.items():
            word, lane, nbytes = field_position(field)
            value = patch_values[name]
            if nbytes > 1:
                value = reverse_bytes(value)
            self.comb += If(relative[header] == word, header_word[8*lane:8*(lane + nbytes)].eq(value))
        out_data = Signal(dw)
        for lane in range(4):
            self.comb += out_data[8*lane:8*lane + 8].eq(Mux(replaying | (tso_word & first_word & (lane < tail)),
                header_word[8*lane:8*lane + 8], window[8*lane:8*lane + 8]))

        out_valid = Signal()
        out_last  = Signal()
        out_lane  = Signal(2)
        out_flags = Signal() # Set the template's FIN and PSH: the chain's last beat.
        emit      = Signal()
        self.comb += emit.eq(advance & out_valid)
        self.sync += If(advance,
            source.valid.eq(out_valid),
            source.last.eq(out_last),
            source.data.eq(out_data),
            If(tso_word,
                source.last_be.eq(Mux(out_last, 1 << out_lane, 0)),
                source.error.eq(Replicate(error_seen | (~replaying & uses_cur & ~prev_as_cur &
                    (sink.error != 0)), 4)),
                source.ip_csum.eq(1),
                source.l4_csum.eq(1),
                source.ip_length.eq(1),
                source.tcp_flags.eq(Mux(out_flags, tcp_flags & (tcp_flag_fin | tcp_flag_psh), 0)),
            ).Else(
                source.last_be.eq(sink.last_be),
                source.error.eq(sink.error),
                source.ip_csum.eq(sink.ip_csum),
                source.l4_csum.eq(sink.l4_csum),
                source.ip_length.eq(0),
                source.tcp_flags.eq(0),
            )
        )

        # Takes the beat on sink into prev (or lets prev, standing in for it, stay).
        def take_cur():
            return [
                sink.ready.eq(~prev_as_cur),
                NextValue(prev_as_cur, 0),
                If(~prev_as_cur,
                    NextValue(prev, sink.data),
                    NextValue(prev_last, sink.last),
                    NextValue(prev_lane, sink_lane),
                    If(sink.error != 0, NextValue(error_seen, 1)),
                ),
            ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(sink.valid,
                If(~sink.tso,
                    # A plain frame's first beat goes through at once: no bubble between frames.
                    out_valid.eq(1),
                    out_last.eq(sink.last),
                    sink.ready.eq(advance),
                    If(emit & ~sink.last, NextState("PASS"))
                ).Elif(params_bad,
                    self.error.eq(1),
                    NextState("DISCARD")
                ).Else(
                    NextValue(hdr_len, sink.hdr_len),
                    NextValue(mss, sink.mss),
                    NextValue(in_word, 0),
                    NextValue(error_seen, 0),
                    NextValue(prev_last, 0),
                    NextValue(prev_as_cur, 0),
                    NextValue(first_seg, 1),
                    NextState("HEADER")
                )
            )
        )
        fsm.act("PASS",
            out_valid.eq(sink.valid),
            out_last.eq(sink.last),
            sink.ready.eq(advance),
            If(emit & sink.last, NextState("IDLE"))
        )
        at_tail = Signal()
        self.comb += at_tail.eq(in_word == header_words)
        fsm.act("HEADER",
            capturing.eq(1),
            If(sink.valid,
                If(at_tail,
                    # The beat shared by the header and the payload stays on sink for segment 0,
                    # unless the chain ends in it.
                    If(sink.last & (sink_lane < tail),
                        sink.ready.eq(1),
                        If(sink_lane < tail - 1,
                            self.error.eq(1),
                            NextState("IDLE")
                        ).Else(
                            NextValue(prev_last, 1),
                            NextValue(prev_lane, sink_lane),
                            If(sink.error != 0, NextValue(error_seen, 1)),
                            NextState("CHECK")
                        )
                    ).Else(
                        NextState("CHECK")
                    )
                ).Else(
                    sink.ready.eq(1),
                    NextValue(in_word, in_word + 1),
                    If(sink.error != 0, NextValue(error_seen, 1)),
                    If(sink.last, # The frame ends inside its header.
                        self.error.eq(1),
                        NextState("IDLE")
                    )
                )
            )
        )
        fsm.act("CHECK",
            NextValue(shift, 0),
            NextValue(seg_left, mss),
            NextValue(first_word, 1),
            If(header_bad,
                self.error.eq(1),
                If(prev_last, NextState("IDLE")).Else(NextState("DISCARD"))
            ).Else(
                NextState("REPLAY")
            )
        )
        last_header_word = Signal()
        self.comb += last_header_word.eq(ow == header_words - 1)
        fsm.act("REPLAY",
            replaying.eq(1),
            tso_word.eq(1),
            out_valid.eq(1),
            step.eq(advance),
            # The word after the full ones is the template's partial one, merged with the payload.
            ow_next.eq(ow + 1),
            If(advance & last_header_word, NextState("PAYLOAD"))
        )
        fsm.act("PAYLOAD",
            tso_word.eq(1),
            out_valid.eq(~uses_cur | cur_here),
            out_last.eq(seg_done),
            out_lane.eq(word_lane),
            out_flags.eq(chain_done),
            step.eq(emit & first_word),
            ow_next.eq(0),
            If(emit,
                # A beat with error that gave bytes to this word marks the rest of the chain.
                If(uses_cur & ~prev_as_cur & (sink.error != 0), NextValue(error_seen, 1)),
                NextValue(first_word, 0),
                NextValue(seg_left, seg_left - (4 - start_lane)),
                If(~seg_done | chain_done,
                    If(uses_cur, take_cur()),
                    If(chain_done, NextState("IDLE"))
                ).Else(
                    # The next segment: its first byte must be where the header's last word
                    # takes it from: sink, or prev if it is in lane 3 there (or prev standing in
                    # for sink, lanes 1 and 2).
                    If(uses_cur,
                        If((end_source == 3) | (tail <= end_source), take_cur())
                    ).Elif((end_source != 3) & (tail > end_source),
                        NextValue(prev_as_cur, 1)
                    ),
                    NextValue(shift, shift - mss[:2]),
                    NextValue(seg_left, mss),
                    NextValue(first_word, 1),
                    NextValue(first_seg, 0),
                    NextValue(seq_number, seq_number + mss),
                    NextValue(ident, ident + 1),
                    NextState("REPLAY")
                )
            )
        )
        fsm.act("DISCARD",
            sink.ready.eq(1),
            If(sink.valid & sink.last, NextState("IDLE"))
        )
        self.sync += If(step, ow.eq(ow_next))

    def capture(self, enable, word, base_word, field, register=None, expected=None):
        """Register `field` of a header whose byte 0 is in lane 2 of frame word `base_word`, from
        the beat on sink, as its word goes by (into `register` if given; only whether it equals
        `expected` if given)."""
        offset, lane, nbytes = field_position(field)
        value = self.sink.data[8*lane:8*(lane + nbytes)][field.offset:field.offset + field.width]
        if field.width > 8:
            value = reverse_bytes(value)
        if expected is not None:
            value = value == expected
        if register is None:
            register = Signal(len(value))
        self.sync += If(enable & (word == base_word + offset), register.eq(value))
        return register
