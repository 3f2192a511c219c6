#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""TCP segmentation offload (TSO) for the offload NIC's TX path: TxDMA -> TSO -> TxChecksum.

A TSO "frame" on `sink` is a header template (Ethernet, optional 802.1Q tag, IPv4 with options,
TCP with options: `hdr_len` bytes) followed by up to 65535 payload bytes. TSO emits one frame per
`mss` payload bytes (the last one shorter; a header-only frame if there is no payload), each the
template with, per RFC 791 3.1 and RFC 793 3.1:

- IPv4 total length = IP header + TCP header + the segment's payload,
- IPv4 identification = template ID + segment index (mod 2**16),
- TCP sequence number = template sequence number + payload byte offset (mod 2**32),
- TCP flags: FIN and PSH only on the last segment, CWR only on the first (RFC 3168 6.1.2: CWR
  goes on the first new segment), the others as in the template,

and `ip_csum` = `l4_csum` = 1, so that TxChecksum fills in both checksums (TSO leaves the
template's checksum fields as they are). Frames with `tso` = 0 pass through unchanged, one beat per
cycle.

The payload length is not known before the chain ends, and the IPv4 total length comes before the
payload, so TSO is store-and-forward per segment: the whole chain is written as it arrives into
one block RAM ring; a segment is sent once all its bytes are in (or the chain has ended). The ring
is laid out by frame word (4 bytes): words 0..31 are written once per chain and hold the header
template (128 bytes at most) and the start of the payload; later words wrap around the rest of the
RAM. Each segment is read back as header words, then a 64-bit window over the ring shifted by the
segment's byte offset mod 4, merged on the header's last partial word with the template.

Bad TSO input is dropped, whole, and counted (`error` pulses, `errors` counts): `hdr_len` outside
54..128, `mss` = 0 or above `max_mss` (a segment must fit in the ring: 1912 bytes with the default
512-word RAM, more than an Ethernet MTU of 1500 needs), a frame that ends inside its header, a
template that is not Ethernet [802.1Q] IPv4 TCP with IHL >= 5, data offset >= 5 and
`hdr_len` = L3 offset + IP header + TCP header. A chain longer than `max_chain_length` (128 +
65536 bytes) is cut there: the rest is dropped, the segments from then on carry `error`, and it
counts as one error.

`error` bits on input beats: a segment carries `error` (all four bits, on all its beats) when an
error was seen on any beat of the chain before it is sent, which includes every beat of the
segment and of the header. Segments already sent cannot be recalled.
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

# Per-frame parameters of the TSO -> TxChecksum stream.
tx_checksum_request_layout = [
    ("ip_csum", 1),
    ("l4_csum", 1),
]

def tx_offload_description(dw=32):
    return EndpointDescription(eth_phy_description(dw).payload_layout, tx_offload_layout)

def tx_checksum_request_description(dw=32):
    return EndpointDescription(eth_phy_description(dw).payload_layout, tx_checksum_request_layout)

# Constants ----------------------------------------------------------------------------------------

tso_min_header_length = mac_header_length + ipv4_header_length + tcp_header_length # 54
tso_max_header_length = 128
tso_template_words    = tso_max_header_length//4
tso_max_chain_length  = tso_max_header_length + 2**16 # Longer chains are cut (counters' range).

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
    ["sequence_high", "sequence_low", "data_offset"]}
tso_patched_fields = {
    "total_length":   ("l3", ipv4_header_fields["total_length"]),
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
    """TCP segmentation offload; see the module docstring. `ring_words` 32-bit words of block RAM
    (a power of two) hold the template and the segments in flight; `max_mss` follows from it."""
    def __init__(self, ring_words=512):
        dw = 32
        self.sink   = sink   = stream.Endpoint(tx_offload_description(dw))
        self.source = source = stream.Endpoint(tx_checksum_request_description(dw))
        self.error  = Signal()   # One-cycle pulse: a bad TSO frame is dropped or a chain cut.
        self.errors = Signal(16) # Count of those, wrapping.

        assert ring_words & (ring_words - 1) == 0 and ring_words >= 4*tso_template_words
        payload_words = ring_words - tso_template_words
        # A segment spans at most (mss + 3 + 3)//4 + 1 words (header end and segment offset both
        # unaligned) and must fit in the wrapping part of the ring while it is sent.
        self.max_mss = max_mss = 4*(payload_words - 2)

        # # #

        addr_bits = log2_int(ring_words)
        ring      = Memory(dw, ring_words)
        write     = ring.get_port(write_capable=True)
        read      = ring.get_port(has_re=True)
        self.specials += ring, write, read

        def ring_next(addr):
            """Ring address of the next frame word: after the last word, back to the first word
            past the template."""
            return Mux(addr == ring_words - 1, tso_template_words, addr + 1)

        # Shared by both sides, per chain. --------------------------------------------------------
        hdr_len    = Signal(8)
        mss        = Signal(bits_for(max_mss))
        # Frame bytes written to the ring = Cat(in_tail, in_word): every beat but the last is full,
        # the last one may leave `in_tail` bytes in word `in_word`.
        in_tail    = Signal(2)
        in_word    = Signal(15)
        in_bytes   = Signal(17)
        frame_done = Signal()   # The chain's last byte is in the ring (or the chain was cut).
        error_seen = Signal()   # An input beat had `error` set.
        header_ok  = Signal()   # Set by the input side once the template is checked, cleared by
                                # the output side when it has sent the last segment.
        # Frame words the output side still needs start at `keep_word` (0 when idle); the input
        # side stays less than `payload_words` ahead of it. Both are taken mod 2**10: the distance
        # is always below 2**9.
        keep_word  = Signal(10)
        out_idle   = Signal()

        header_words = hdr_len[2:]  # Full words of the template.
        header_tail  = hdr_len[:2]  # Template bytes in the word shared with the payload.

        # Input side: sink -> ring, header fields, checks. ------------------------------------------
        beat_bytes = Signal(3)
        self.comb += If(sink.last & (sink.last_be != 0),
            beat_bytes.eq(Mux(sink.last_be[3], 4, Mux(sink.last_be[2], 3, Mux(sink.last_be[1], 2, 1))))
        ).Else(
            beat_bytes.eq(4)
        )
        in_bytes_next = Signal(17)
        in_word_next  = Signal(15)
        room          = Signal(10)
        has_room      = Signal()
        writing       = Signal()
        accept        = Signal()
        self.comb += [
            in_bytes.eq(Cat(in_tail, in_word)),
            in_word_next.eq(in_word + 1),
            in_bytes_next.eq(Mux(beat_bytes[2], Cat(C(0, 2), in_word_next), Cat(beat_bytes[:2], in_word))),
            room.eq(in_word[:10] - keep_word),
            has_room.eq(room < payload_words),
            accept.eq(sink.valid & sink.ready),
            write.dat_w.eq(sink.data),
            write.we.eq(writing & accept),
        ]
        self.sync += If(writing & accept,
            If(beat_bytes[2], in_word.eq(in_word_next)).Else(in_tail.eq(beat_bytes[:2])),
            write.adr.eq(ring_next(write.adr)),
            If(sink.error != 0, error_seen.eq(1)),
        )

        # Template fields, captured as their word goes by (see RxChecksum for the 802.1Q trick:
        # the EtherType is read at word 3, and again at word 4 if it was a tag).
        vlan       = Signal()
        l3_word    = Signal(3)
        l4_word    = Signal(5)
        capturing  = Signal()
        l3_fields  = {}
        l4_fields  = {}
        self.comb += l3_word.eq(3 + (vlan & (in_word[:6] > 3)))
        self.sync += If(capturing & accept & (in_word[:6] == 3),
            vlan.eq(reverse_bytes(sink.data[:16]) == ethernet_type_vlan)
        )
        # The template's ID and sequence number go straight into the segments' counters.
        seq_number = Signal(32)
        ident    = Signal(16)
        targets  = {"identification": ident, "sequence_high": seq_number[16:],
            "sequence_low": seq_number[:16]}
        # Fields only compared with a constant are stored as the comparison's result.
        expected = {"ethertype": ethernet_type_ip, "version": 4, "protocol": tcp_protocol}
        for name, field in tso_l3_fields.items():
            l3_fields[name] = self.capture(capturing & accept, in_word[:6], l3_word, field,
                targets.get(name), expected.get(name))
        self.comb += l4_word.eq(3 + vlan + l3_fields["ihl"])
        for name, field in tso_l4_fields.items():
            l4_fields[name] = self.capture(capturing & accept, in_word[:6], l4_word, field,
                targets.get(name))

        l3_offset  = Signal(5)
        header_bad = Signal()
        self.comb += [
            l3_offset.eq(mac_header_length + vlan_tag_length*vlan),
            header_bad.eq(
                ~l3_fields["ethertype"] | ~l3_fields["version"] | ~l3_fields["protocol"] |
                (l3_fields["ihl"] < ipv4_header_length//4) |
                (l4_fields["data_offset"] < tcp_header_length//4) |
                (l3_offset + Cat(C(0, 2), l3_fields["ihl"]) +
                    Cat(C(0, 2), l4_fields["data_offset"]) != hdr_len)),
        ]
        params_bad = Signal()
        self.comb += params_bad.eq(
            (sink.hdr_len < tso_min_header_length) | (sink.hdr_len > tso_max_header_length) |
            (sink.mss == 0) | (sink.mss > max_mss))

        last_seen  = Signal()
        self.sync += If(self.error, self.errors.eq(self.errors + 1))
        pass_mode = Signal()
        advance   = Signal() # The output register takes a new beat (or a bubble).
        self.comb += advance.eq(~source.valid | source.ready)

        self.input_fsm = input_fsm = FSM(reset_state="IDLE")
        input_fsm.act("IDLE",
            If(sink.valid & out_idle,
                If(~sink.tso,
                    # A plain frame's first beat goes through at once: no bubble between frames.
                    pass_mode.eq(1),
                    sink.ready.eq(advance),
                    If(accept & ~sink.last, NextState("PASS"))
                ).Elif(params_bad,
                    self.error_pulse(),
                    NextState("DISCARD")
                ).Else(
                    NextValue(hdr_len, sink.hdr_len),
                    NextValue(mss, sink.mss),
                    NextValue(in_tail, 0),
                    NextValue(in_word, 0),
                    NextValue(write.adr, 0),
                    NextValue(frame_done, 0),
                    NextValue(error_seen, 0),
                    NextState("HEADER")
                )
            )
        )
        input_fsm.act("PASS",
            pass_mode.eq(1),
            sink.ready.eq(advance),
            If(accept & sink.last, NextState("IDLE"))
        )
        input_fsm.act("HEADER",
            writing.eq(1),
            capturing.eq(1),
            sink.ready.eq(has_room),
            If(accept,
                If(in_bytes_next[:8] >= hdr_len, # Below 132 in the header.
                    NextValue(last_seen, sink.last),
                    NextState("CHECK")
                ).Elif(sink.last, # The frame ends inside its header.
                    self.error_pulse(),
                    NextState("IDLE")
                )
            )
        )
        input_fsm.act("CHECK",
            If(header_bad,
                self.error_pulse(),
                If(last_seen, NextState("IDLE")).Else(NextState("DISCARD"))
            ).Else(
                NextValue(header_ok, 1),
                If(last_seen,
                    NextValue(frame_done, 1),
                    NextState("IDLE")
                ).Else(
                    NextState("PAYLOAD")
                )
            )
        )
        input_fsm.act("PAYLOAD",
            writing.eq(1),
            sink.ready.eq(has_room),
            If(accept,
                If(sink.last,
                    NextValue(frame_done, 1),
                    NextState("IDLE")
                ).Elif(in_word_next == tso_max_chain_length//4,
                    NextValue(frame_done, 1),
                    NextValue(error_seen, 1),
                    self.error_pulse(),
                    NextState("DISCARD")
                )
            )
        )
        input_fsm.act("DISCARD",
            sink.ready.eq(1),
            If(accept & sink.last, NextState("IDLE"))
        )

        # Output side: segments from the ring. ----------------------------------------------------
        # Per segment: `seg_byte` is the frame byte where its payload starts; `base_word`/`base_addr`
        # the frame word/ring address of the first window word, `shift` the window's byte shift.
        seg_byte  = Signal(17)
        seg_next  = Signal(17)
        base_word = Signal(10)
        base_addr = Signal(addr_bits)
        shift     = Signal(2)
        first     = Signal()
        last_seg  = Signal()
        seg_error = Signal()
        out_last  = Signal(11) # Index of the segment's last byte: hdr_len + payload - 1.
        total_len = Signal(16)
        self.comb += total_len.eq(out_last + 1 - l3_offset)
        seg_len   = Signal(11)
        ready     = Signal()
        is_last   = Signal()
        beyond    = Signal(18) # Bytes in past the end of a full segment; negative if fewer.
        self.comb += [
            seg_next.eq(seg_byte + mss),
            beyond.eq(in_bytes - seg_next),
            ready.eq(frame_done | ~beyond[17]),
            is_last.eq(frame_done & (beyond[17] | (beyond == 0))),
            seg_len.eq(Mux(is_last, mss + beyond[:11], mss)),
        ]
        ow       = Signal(9) # Output word the next read is for.
        rd_addr  = Signal(addr_bits)
        rd_word  = Signal(10) # Frame word at rd_addr (mod 2**10).
        reading  = Signal()
        # While a segment's payload is read, the words behind the read pointer are freed. The next
        # segment's first window word is at most 2 words behind the last word this one reads.
        self.comb += keep_word.eq(Mux(reading, rd_word - 3, base_word))
        last_ow  = Signal(9)
        self.comb += last_ow.eq(out_last[2:])

        # Reads issued now (stage A) have their data in `read.dat_r` at the next advance (stage B).
        KIND_HEADER, KIND_TAIL, KIND_PREFETCH, KIND_PAYLOAD = range(4)
        a_valid = Signal()
        a_kind  = Signal(2)
        b_valid = Signal()
        b_kind  = Signal(2)
        b_last  = Signal()
        b_merge = Signal()
        header_phase = Signal()
        self.comb += [
            read.re.eq(advance),
            read.adr.eq(Mux(header_phase, ow, rd_addr)),
        ]
        patch_select = {}
        # Word of the output frame relative to the start of each header (headers are < 64 words).
        relative = {"l3": Signal(6), "l4": Signal(6)}
        self.comb += [
            relative["l3"].eq(ow[:6] - (3 + vlan)),
            relative["l4"].eq(ow[:6] - l4_word),
        ]
        for name, (header, field) in tso_patched_fields.items():
            word, _, _ = field_position(field)
            patch_select[name] = Signal(name=f"patch_{name}")
            self.sync += If(advance, patch_select[name].eq(a_valid & (a_kind == KIND_HEADER) &
                (ow[6:] == 0) & (relative[header] == word)))
        self.sync += If(advance,
            b_valid.eq(a_valid),
            b_kind.eq(a_kind),
            b_last.eq(ow == last_ow),
            b_merge.eq(ow == header_words),
        )
        step     = Signal(17)
        addr_sum = Signal(addr_bits + 1)
        self.comb += [
            step.eq(shift + mss),
            addr_sum.eq(base_addr + step[2:]),
        ]

        self.output_fsm = output_fsm = FSM(reset_state="IDLE")
        self.comb += out_idle.eq(output_fsm.ongoing("IDLE") & ~header_ok & ~b_valid)
        output_fsm.act("IDLE",
            If(header_ok,
                NextValue(seg_byte, hdr_len),
                NextValue(base_word, header_words),
                NextValue(base_addr, header_words),
                NextValue(shift, 0),
                NextValue(first, 1),
                NextState("WAIT")
            )
        )
        output_fsm.act("WAIT",
            If(ready,
                NextValue(last_seg, is_last),
                NextValue(out_last, hdr_len + seg_len - 1),
                NextValue(seg_error, error_seen),
                NextValue(ow, 0),
                NextValue(rd_addr, base_addr),
                NextValue(rd_word, base_word),
                NextState("HEADER")
            )
        )
        output_fsm.act("HEADER",
            header_phase.eq(1),
            a_valid.eq(1),
            a_kind.eq(KIND_HEADER),
            If(advance,
                NextValue(ow, ow + 1),
                If(ow == header_words - 1,
                    If(ow == last_ow,
                        NextState("NEXT")
                    ).Elif(header_tail != 0,
                        NextState("TAIL")
                    ).Else(
                        NextState("PREFETCH")
                    )
                )
            )
        )
        output_fsm.act("TAIL",
            header_phase.eq(1),
            a_valid.eq(1),
            a_kind.eq(KIND_TAIL),
            If(advance, NextState("PREFETCH"))
        )
        output_fsm.act("PREFETCH",
            reading.eq(1),
            a_valid.eq(1),
            a_kind.eq(KIND_PREFETCH),
            If(advance,
                NextValue(rd_addr, ring_next(rd_addr)),
                NextValue(rd_word, rd_word + 1),
                NextState("PAYLOAD")
            )
        )
        output_fsm.act("PAYLOAD",
            reading.eq(1),
            a_valid.eq(1),
            a_kind.eq(KIND_PAYLOAD),
            If(advance,
                NextValue(rd_addr, ring_next(rd_addr)),
                NextValue(rd_word, rd_word + 1),
                NextValue(ow, ow + 1),
                If(ow == last_ow, NextState("NEXT"))
            )
        )
        output_fsm.act("NEXT",
            reading.eq(1),
            # Waits for the segment's last word to leave stage B: it still uses this segment's
            # fields.
            If(advance,
                NextValue(seg_byte, seg_next),
                NextValue(shift, step[:2]),
                NextValue(base_word, base_word + step[2:]),
                NextValue(base_addr, addr_sum[:addr_bits] +
                    Mux(addr_sum[addr_bits], tso_template_words, 0)),
                NextValue(seq_number, seq_number + mss),
                NextValue(ident, ident + 1),
                NextValue(first, 0),
                If(last_seg,
                    NextValue(base_word, 0),
                    NextValue(header_ok, 0),
                    NextState("IDLE")
                ).Else(
                    NextState("WAIT")
                )
            )
        )

        # Stage B -> output register. -------------------------------------------------------------
        template_tail = Signal(dw) # The template's last partial word.
        window        = Signal(dw) # Previous payload read, shifted in.
        self.sync += If(advance & b_valid,
            If(b_kind == KIND_TAIL, template_tail.eq(read.dat_r)),
            If((b_kind == KIND_PREFETCH) | (b_kind == KIND_PAYLOAD), window.eq(read.dat_r)),
        )
        wide    = Cat(window, read.dat_r)
        shifted = Signal(dw)
        self.comb += Case(shift, {s: shifted.eq(wide[8*s:8*s + dw]) for s in range(4)})
        payload_word = Signal(dw)
        for lane in range(4):
            self.comb += payload_word[8*lane:8*lane + 8].eq(
                Mux(b_merge & (lane < header_tail), template_tail[8*lane:8*lane + 8],
                    shifted[8*lane:8*lane + 8]))

        flags_clear = Signal(8)
        self.comb += flags_clear.eq(Mux(last_seg, 0, tcp_flag_fin | tcp_flag_psh) |
            Mux(first, 0, tcp_flag_cwr))
        header_word = Signal(dw)
        flags_lane  = field_position(tcp_header_fields["flags"])[1]
        patch_values = {
            "total_length":   total_len,
            "identification": ident,
            "sequence_high":  seq_number[16:],
            "sequence_low":   seq_number[:16],
            "flags":          read.dat_r[8*flags_lane:8*flags_lane + 8] & ~flags_clear,
        }
        self.comb += header_word.eq(read.dat_r)
        for name, (_, field) in tso_patched_fields.items():
            _, lane, nbytes = field_position(field)
            value = patch_values[name]
            if nbytes > 1:
                value = reverse_bytes(value)
            self.comb += If(patch_select[name], header_word[8*lane:8*(lane + nbytes)].eq(value))

        last_be = Signal(4)
        self.comb += Case(out_last[:2], {i: last_be.eq(1 << i) for i in range(4)})
        self.sync += If(advance,
            If(pass_mode,
                source.valid.eq(sink.valid),
                source.last.eq(sink.last),
                source.payload.eq(sink.payload),
                source.ip_csum.eq(sink.ip_csum),
                source.l4_csum.eq(sink.l4_csum),
            ).Else(
                source.valid.eq(b_valid & ((b_kind == KIND_HEADER) | (b_kind == KIND_PAYLOAD))),
                source.last.eq(b_last),
                source.data.eq(Mux(b_kind == KIND_HEADER, header_word, payload_word)),
                source.last_be.eq(Mux(b_last, last_be, 0)),
                source.error.eq(Replicate(seg_error, 4)),
                source.ip_csum.eq(1),
                source.l4_csum.eq(1),
            )
        )

    def error_pulse(self):
        return self.error.eq(1)

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
