#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""Stream drivers shared by the cocotb tests, in the manner of cocotbext-axi's AxiStreamSource and
AxiStreamSink, for LiteX stream endpoints of the LiteEth PHY layout (valid, ready, last, data,
last_be, error, and the params of each core).

The harness packs the streams of a core into two wide signals, as harness.py explains: `drive`
(what the testbench writes: valid and fields of the core's sinks, ready of its sources) and
`monitor` (what each edge transferred: valid & ready of every stream, the fields of the sources,
and any other signal the test watches). `Ports` describes that packing once for both processes:
pytest's, which builds the Migen harness, and the simulator's, where the drivers run.

    PORTS = Ports(inputs={"sink": Stream(ETH_PHY_32, [("ip_csum", 1)])},
                  outputs={"source": Stream(ETH_PHY_32)}, monitor=[("error", 1)])

    # Migen harness (pytest's process):
    self.drive, self.monitor = PORTS.harness(self, {"sink": dut.sink, "source": dut.source},
        monitor={"error": dut.error})

    # Testbench (cocotb's process):
    bus    = StreamBus(dut, PORTS)
    source = StreamSource(bus, "sink", rng)          # drives the core's sink
    sink   = StreamSink(bus, "source")               # takes the core's source
    source.set_pause_generator(random_pauses(rng, 0.3))   # idle cycles between beats
    sink.set_pause_generator(random_pauses(rng, 0.5))     # backpressure
    source.send_nowait(StreamFrame(data, {"ip_csum": 1}, error=True))
    while sink.empty():
        await bus.step()                             # one clock cycle
    frame = sink.recv_nowait()                       # .data, .params, .beats

`bus.step()` is one cycle: it waits for the edge, reads `monitor` once, lets every driver see what
moved, lets every driver choose what it drives for the next edge and writes `drive` once (only when
it changed). `step()` is `sample()` then `drive()`, for a testbench that has work between the two.
"""

import itertools
from collections import deque

from cocotb.triggers import RisingEdge

# The payload of LiteEth's PHY-side streams (`eth_phy_description(32)`): the first byte of the
# frame in data[0:8]; on the last beat `last_be` is one-hot on the last valid byte, 0 before.
ETH_PHY_32 = [("data", 32), ("last_be", 4), ("error", 4)]


def random_pauses(rng, probability):
    """A pause generator that pauses each cycle with `probability` (never, without drawing from
    `rng`, for 0)."""
    if not probability:
        return itertools.repeat(False)
    return (rng.random() < probability for _ in itertools.count())


# Packing ------------------------------------------------------------------------------------------

class Stream:
    """The fields of one stream endpoint the harness packs besides valid and ready: `last` (with
    `last=False`, every beat is an item of its own), the payload and the params (`(name, width)`
    lists, as in the core's EndpointDescription). With `params_on_last_beat` the params are valid
    on the last beat only (RxChecksum's status): a StreamSource puts garbage there on the others."""
    def __init__(self, payload, params=(), last=True, params_on_last_beat=False):
        self.payload = list(payload)
        self.params  = list(params)
        self.last    = last
        self.params_on_last_beat = params_on_last_beat
        self.fields  = ([("last", 1)] if last else []) + self.payload + self.params
        self.width   = sum(width for _, width in self.fields)
        self.offsets = {}
        offset = 0
        for name, width in self.fields:
            self.offsets[name] = (offset, (1 << width) - 1)
            offset += width
        self.params_offset = offset - sum(width for _, width in self.params)
        self.params_width  = self.width - self.params_offset

    def pack(self, values):
        """The fields (a dict; missing fields are 0) as one int, the first field in the low bits."""
        packed = 0
        for name, value in values.items():
            offset, mask = self.offsets[name]
            if value & ~mask:
                raise ValueError(f"{name} = {value:#x} does not fit in its {mask.bit_length()} bits")
            packed |= value << offset
        return packed

    def unpack(self, packed):
        return {name: packed >> offset & mask for name, (offset, mask) in self.offsets.items()}

    def check(self, endpoint):
        """The Migen `endpoint` carries exactly this payload and these params."""
        description = endpoint.description
        for kind, ours, theirs in (("payload", self.payload, description.payload_layout),
                                   ("params", self.params, description.param_layout)):
            theirs = sorted((field[0], field[1]) for field in theirs)
            assert sorted(ours) == theirs, f"{kind} {ours} declared for an endpoint with {theirs}"


class Ports:
    """The packing of a harness's `drive` and `monitor` signals, LSB first:

    - drive: for each input stream (a sink of the core, driven by a StreamSource) valid and its
      fields; for each output stream (a source of the core, taken by a StreamSink) ready.
    - monitor, registered at each edge: for each input stream valid & ready; for each output stream
      valid & ready and its fields; then the `monitor` fields, `(name, width)`, other signals of
      the core registered with them (zero-extended to `width`).
    """
    def __init__(self, inputs=None, outputs=None, monitor=()):
        self.inputs  = dict(inputs or {})
        self.outputs = dict(outputs or {})
        self.monitor = list(monitor)
        self.drive_offsets   = {} # Stream name -> offset of its valid (inputs) or ready (outputs).
        self.monitor_offsets = {} # Stream name -> offset of its transfer bit, then its fields.
        drive = monitor_bits = 0
        for name, stream in self.inputs.items():
            self.drive_offsets[name] = drive
            self.monitor_offsets[name] = monitor_bits
            drive += 1 + stream.width
            monitor_bits += 1
        for name, stream in self.outputs.items():
            self.drive_offsets[name] = drive
            self.monitor_offsets[name] = monitor_bits
            drive += 1
            monitor_bits += 1 + stream.width
        self.fields = {}
        for name, width in self.monitor:
            self.fields[name] = (monitor_bits, (1 << width) - 1)
            monitor_bits += width
        self.drive_width, self.monitor_width = drive, monitor_bits

    def get(self, monitor, name):
        """A `monitor` field from a value of the monitor signal."""
        offset, mask = self.fields[name]
        return monitor >> offset & mask

    def harness(self, module, endpoints, monitor=None):
        """Add the packed ports to the Migen `module` (a test harness): `endpoints` maps each stream
        name to the core's endpoint, `monitor` each monitor field to a signal. Returns the Signals
        (drive, monitor), for build_verilog."""
        from migen import C, Cat, Signal

        monitor = monitor or {}
        assert set(endpoints) == set(self.inputs) | set(self.outputs), "one endpoint per stream"
        assert set(monitor) == set(self.fields), "one signal per monitor field"
        drive_parts, monitor_parts = [], []
        for name, stream in self.inputs.items():
            endpoint = endpoints[name]
            stream.check(endpoint)
            drive_parts += [endpoint.valid] + [getattr(endpoint, field) for field, _ in stream.fields]
            monitor_parts.append(endpoint.valid & endpoint.ready)
        for name, stream in self.outputs.items():
            endpoint = endpoints[name]
            stream.check(endpoint)
            drive_parts.append(endpoint.ready)
            monitor_parts += [endpoint.valid & endpoint.ready] + [getattr(endpoint, field) for field, _ in stream.fields]
        for name, width in self.monitor:
            signal = monitor[name]
            assert len(signal) <= width, f"monitor field {name}: {len(signal)} bits, more than {width}"
            monitor_parts += [signal, C(0, width - len(signal))] if len(signal) < width else [signal]
        drive_signal   = Signal(self.drive_width, name="drive")
        monitor_signal = Signal(self.monitor_width, name="monitor")
        assert len(Cat(*drive_parts)) == self.drive_width and len(Cat(*monitor_parts)) == self.monitor_width
        module.comb += Cat(*drive_parts).eq(drive_signal)
        module.sync += monitor_signal.eq(Cat(*monitor_parts))
        return drive_signal, monitor_signal


# Clocking -----------------------------------------------------------------------------------------

class StreamBus:
    """The packed ports of a harness (dut.drive, dut.monitor), stepped once per sys_clk cycle for
    every StreamSource and StreamSink attached to it. `monitor` holds the monitor value of the last
    cycle (its `Ports.monitor` fields: `get(name)`)."""
    def __init__(self, dut, ports):
        self.ports    = ports
        self.monitor  = 0
        self._edge    = RisingEdge(dut.sys_clk)
        self._drive   = dut.drive
        self._monitor = dut.monitor
        self._written = None
        self._sources, self._sinks = [], []

    def _attach(self, driver, name):
        is_source = isinstance(driver, StreamSource)
        streams = self.ports.inputs if is_source else self.ports.outputs
        assert name in streams, f"no {'input' if is_source else 'output'} stream {name} in the ports"
        attached = self._sources if is_source else self._sinks
        assert all(other.name != name for other in attached), f"stream {name} has a driver already"
        attached.append(driver)
        return streams[name], self.ports.drive_offsets[name], self.ports.monitor_offsets[name]

    def get(self, name):
        return self.ports.get(self.monitor, name)

    async def sample(self):
        """Wait for the next edge; tell every driver what moved at it. Returns the monitor value."""
        await self._edge
        return self._sample()

    def _sample(self):
        monitor = self.monitor = int(self._monitor.value)
        for driver in self._sources:
            driver._sample(monitor)
        for driver in self._sinks:
            driver._sample(monitor)
        return monitor

    def drive(self):
        """Let every driver choose its inputs for the next edge (sources first, then sinks: the
        order in which they draw from a shared random generator); write them at once (see
        harness.py)."""
        value = 0
        for driver in self._sources:
            value |= driver._drive()
        for driver in self._sinks:
            value |= driver._drive()
        if value != self._written:
            self._drive.setimmediatevalue(value)
            self._written = value

    async def step(self):
        """One clock cycle: sample(), then drive(). Returns the monitor value."""
        await self._edge
        monitor = self._sample()
        self.drive()
        return monitor


# Frames -------------------------------------------------------------------------------------------

class StreamFrame:
    """One frame on a stream: `data` (bytes), `params` (a dict, the same on every beat; for a
    received frame, the params of its last beat), `error` (to send: one error bit on a random byte
    of a random beat). `beats` holds the field values (dicts) of each beat, filled in by the
    StreamSource that sends the frame or by the StreamSink that received it."""
    def __init__(self, data=b"", params=None, error=False):
        self.data   = data
        self.params = params or {}
        self.error  = error
        self.beats  = []


class StreamSource:
    """Drives the input stream `name` (a sink of the core) with the frames it is sent, in order.

    Beats carry garbage in the byte lanes after the end of the frame; between beats (idle or
    paused) valid is 0 and every field holds garbage that the core must ignore. `rng` draws the
    garbage and the error bits. The pause generator (set_pause_generator(), as in cocotbext-axi:
    True pauses) is advanced on each cycle where a beat could start (a beat is waiting and the
    previous one was taken), so a random generator gives idle cycles between beats and a pattern
    counts beat slots; a beat that is valid stays valid until it is taken.

    After each edge: `transferred` is the frame whose beat was taken at it (or None), `stalled`
    says a beat was offered and not taken; `beats_sent` counts the beats taken."""
    def __init__(self, bus, name, rng):
        self.name, self.rng = name, rng
        self.stream, offset, self._transfer_bit = bus._attach(self, name)
        self._drive_offset = offset
        lanes = [width for field, width in self.stream.payload if field == "data"]
        assert self.stream.last and lanes and {"last_be", "error"} <= {f for f, _ in self.stream.payload}, \
            "a StreamSource drives LiteEth PHY-layout streams (last, data, last_be, error)"
        self._lanes = lanes[0]//8
        self._queue = deque()
        self._frame = None       # Frame whose beats are being sent,
        self._packed = []        # its beats as driven,
        self._next_beat = 0      # and the next of them to offer.
        self._valid = False      # A beat is offered for the coming edge.
        self._value = 0          # What is driven for the coming edge (valid in bit 0).
        self._pause = None
        self.transferred = None
        self.stalled = False
        self.beats_sent = 0

    def set_pause_generator(self, generator=None):
        self._pause = generator

    def send_nowait(self, frame):
        """Queue `frame`; its beats (`frame.beats`) are made now, drawing from `rng`."""
        self._queue.append((frame, self._beats(frame)))

    def idle(self):
        """Every frame sent has been taken whole."""
        return not self._queue and self._frame is None

    def _beats(self, frame):
        """Set frame.beats; return the beats packed."""
        data, lanes, rng, stream = frame.data, self._lanes, self.rng, self.stream
        assert data, "a frame has at least one byte"
        assert set(frame.params) == {name for name, _ in stream.params}, \
            f"{self.name}: params {sorted(frame.params)}, the stream has {[name for name, _ in stream.params]}"
        count = -(-len(data)//lanes)
        error_beat = rng.randrange(count) if frame.error else -1
        params = stream.pack(frame.params) # In place, above the payload.
        frame.beats, packed_beats = [], []
        for index in range(count):
            chunk = data[lanes*index:lanes*(index + 1)]
            last = index == count - 1
            beat = {
                "last":    int(last),
                "data":    int.from_bytes(chunk + rng.randbytes(lanes - len(chunk)), "little"),
                "last_be": 1 << (len(chunk) - 1) if last else 0,
            }
            if stream.params_on_last_beat and not last:
                beat_params = rng.getrandbits(stream.params_width) << stream.params_offset
            else:
                beat_params = params
            beat["error"] = 1 << rng.randrange(len(chunk)) if index == error_beat else 0
            packed = stream.pack(beat) | beat_params
            frame.beats.append(stream.unpack(packed))
            packed_beats.append(packed)
        return packed_beats

    def _sample(self, monitor):
        if monitor >> self._transfer_bit & 1:
            assert self._valid, f"{self.name}: a transfer without a beat offered"
            self.transferred, self.stalled, self._valid = self._frame, False, False
            self.beats_sent += 1
            if self._next_beat == len(self._packed):
                self._frame = None
        else:
            self.transferred, self.stalled = None, self._valid

    def _drive(self):
        if not self._valid:
            if (self._frame is not None or self._queue) and not (self._pause and next(self._pause)):
                if self._frame is None:
                    (self._frame, self._packed), self._next_beat = self._queue.popleft(), 0
                self._value = self._packed[self._next_beat] << 1 | 1
                self._next_beat += 1
                self._valid = True
            elif self._value & 1:
                self._value = self.rng.getrandbits(self.stream.width) << 1 # Idle: garbage.
        return self._value << self._drive_offset


class StreamSink:
    """Takes the output stream `name` (a source of the core): assembles its beats into StreamFrames
    (one per beat without `last`), received with recv_nowait() in order. The pause generator
    (set_pause_generator(), True pauses) sets ready to 0 for the cycles it says, advanced every
    cycle. A frame's `data` is the bytes of its beats up to the last valid byte; that `last_be` is
    one-hot on the last beat and 0 on the others is checked as the beats arrive.

    After each edge: `ready` says ready was 1 at it, `transferred` is the beat (a dict of its
    fields) taken at it, or None; `beats_received` counts the beats taken."""
    def __init__(self, bus, name):
        self.name = name
        self.stream, offset, self._transfer_bit = bus._attach(self, name)
        self._ready_bit = 1 << offset
        self._fields_offset = self._transfer_bit + 1
        self._lanes = dict(self.stream.payload).get("data", 0)//8
        self._frames = deque()
        self._beats = []
        self._pause = None
        self._ready = False      # Driven for the coming edge.
        self.ready = False
        self.transferred = None
        self.beats_received = 0

    def set_pause_generator(self, generator=None):
        self._pause = generator

    def recv_nowait(self):
        return self._frames.popleft()

    def empty(self):
        """No frame received whole is waiting for recv_nowait()."""
        return not self._frames

    def idle(self):
        """No frame has part of its beats received."""
        return not self._beats

    def _sample(self, monitor):
        self.ready = self._ready
        if not monitor >> self._transfer_bit & 1:
            self.transferred = None
            return
        beat = self.transferred = self.stream.unpack(monitor >> self._fields_offset)
        self.beats_received += 1
        self._beats.append(beat)
        if self.stream.last and not beat["last"]:
            if "last_be" in beat:
                assert beat["last_be"] == 0, f"{self.name}: last_be {beat['last_be']:#06b} before the last beat"
            return
        frame = StreamFrame(params={name: beat[name] for name, _ in self.stream.params})
        frame.beats, self._beats = self._beats, []
        if self._lanes and "last_be" in beat:
            last_be = beat["last_be"]
            assert last_be in [1 << lane for lane in range(self._lanes)], \
                f"{self.name}: last_be {last_be:#06b} on the last beat"
            lanes = self._lanes
            frame.data = b"".join(b["data"].to_bytes(lanes, "little") for b in frame.beats)
            frame.data = frame.data[:lanes*(len(frame.beats) - 1) + last_be.bit_length()]
        self._frames.append(frame)

    def _drive(self):
        self._ready = self._pause is None or not next(self._pause)
        return self._ready_bit if self._ready else 0
