"""The sim's fault-injecting link (sim/modules/slirp_ethernet/faults.c).

1. The link alone, compiled natively with a driver (tests/host/fault_link_driver.c): every
   fault kind does what it says to the frame, the counters match what came out, the rates
   hold, and the same seed gives the same faults.
2. CalDAV over a lossy link: several concurrent clients run mixed transactions (PUT, GET,
   REPORT calendar-multiget, DELETE of calendar objects) against the simulated SoC while the
   link drops, reorders, duplicates, truncates and corrupts frames both ways; every
   transaction must succeed with every body byte-exact, and the module's counters must show
   that every fault kind happened in each direction.

Time: every frame lost that TCP's fast retransmission cannot recover costs a retransmission
timeout, lwIP's 1-3 s or slirp's 1-6 s. In simulated time itself that is 125-750 M cycles, minutes
of wall time each at the simulator's speed. Part 2 therefore runs both TCP ends' clocks at
TIMER_SCALE times simulated time: slirp's (litedav-sim --slirp-clock-scale, 32 by default) and the
firmware's lwIP clock (--lwip-clock-scale, patched into the run's image). Their timers keep their
ratio, and every protocol path is the one of a real link, only the waits are 32 times shorter. The
figures say so: simulated seconds are cycles / sys_clk, with the timers scaled.

`make test` runs a short part 2 (FAST_TRANSACTIONS by FAST_CLIENTS, until every fault kind has
happened both ways); LITEDAV_FAULT_TRANSACTIONS and LITEDAV_FAULT_CLIENTS set a longer one
(`make soak`: 1,000 transactions by 20 clients, figures in bench/results/reliability.{json,md}).
"""
import base64
import http.client
import json
import os
import random
import shutil
import subprocess
import threading
import time
import traceback
import xml.etree.ElementTree as ET

import pytest

import reliability_report

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(TOP, "sim", "modules", "slirp_ethernet")
KINDS = ("drop", "duplicate", "reorder", "bad_fcs", "bad_checksum", "truncate")

# The link: 5% drop, 1% reorder, 1% duplicate, 0.5% corruption (each corruption kind,
# truncation included, at 0.5%).
RATES = {"drop": 0.05, "reorder": 0.01, "duplicate": 0.01,
         "bad_fcs": 0.005, "bad_checksum": 0.005, "truncate": 0.005}


# -- 1. the link alone --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("gcc not found")
    exe = str(tmp_path_factory.mktemp("faults") / "fault_link_driver")
    subprocess.run(["gcc", "-Wall", "-Werror", "-O2", "-I", MODULE, "-o", exe,
                    os.path.join(TOP, "tests", "host", "fault_link_driver.c"),
                    os.path.join(MODULE, "faults.c"), "-ljson-c", "-lm"], check=True)
    return exe


def run_link(driver, tmp_path, config, frames):
    """(groups, stats, originals): groups[i] = frames delivered while frame i passed."""
    stats_path = tmp_path / "stats.json"
    out = subprocess.run([driver, json.dumps(config), str(frames), str(stats_path)], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    groups, current = [], None
    for line in out.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("pass", "end"):
            current = []
            groups.append(current)
        else:
            flags, data = rest.split()
            current.append((int(flags), bytes.fromhex(data)))
    return groups, json.loads(stats_path.read_text()), out


def reference_frames(driver, tmp_path, frames):
    groups, _, _ = run_link(driver, tmp_path, {"to_soc": {}}, frames)
    assert all(len(g) == 1 and g[0][0] == 0 for g in groups[:-1]) and not groups[-1]
    return [g[0][1] for g in groups[:-1]]


def ones_complement(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def tcp_checksum_ok(frame):
    ihl = (frame[14] & 15) * 4
    total = int.from_bytes(frame[16:18], "big")
    segment = frame[14 + ihl:14 + total]
    pseudo = frame[26:34] + bytes([0, frame[23]]) + len(segment).to_bytes(2, "big")
    return (ones_complement(frame[14:14 + ihl]) == 0xffff and
            ones_complement(pseudo + segment) == 0xffff)


def bit_difference(a, b):
    return sum(bin(x ^ y).count("1") for x, y in zip(a, b))


def classify(groups, originals):
    """Replays the link's output against the clean frames: returns the count of each fault seen."""
    seen = dict.fromkeys(KINDS, 0)
    held = None
    for i, group in enumerate(groups):
        out = list(group)
        if i == len(originals):  # "end": a held frame released by time
            assert [f for _, f in out] == ([held] if held else [])
            break
        original = originals[i]
        if held is not None and out and out[-1] == (0, held):
            out.pop()  # released behind the frame that followed it
            held = None
        if not out:
            later = next((g for g in groups[i + 1:] if g), [])
            if held is None and later and later[-1] == (0, original):
                seen["reorder"] += 1
                held = original
            else:
                seen["drop"] += 1
            continue
        flags, frame = out[0]
        if len(out) == 2:
            assert out[0] == out[1] == (0, original), f"frame {i}: two different frames out"
            seen["duplicate"] += 1
        elif flags == 2:
            assert len(frame) < len(original) and original.startswith(frame), f"frame {i}"
            seen["truncate"] += 1
        elif flags == 1:
            assert len(frame) == len(original) and bit_difference(frame, original) <= 1, f"frame {i}"
            seen["bad_fcs"] += 1
        elif frame != original:
            assert flags == 0 and bit_difference(frame, original) == 1, f"frame {i}"
            assert original[12:14] == b"\x08\x00" and not tcp_checksum_ok(frame), \
                f"frame {i}: a checksum fault must break the IP/TCP checksum"
            seen["bad_checksum"] += 1
        else:
            assert len(out) == 1 and flags == 0, f"frame {i}: {out}"
    return seen


@pytest.mark.parametrize("mode", ["random", "spread"])
def test_fault_link_does_each_fault_and_counts_it(driver, tmp_path, mode):
    frames = 4000
    originals = reference_frames(driver, tmp_path, frames)
    assert all(tcp_checksum_ok(f) for f in originals if f[12:14] == b"\x08\x00")
    config = {"seed": 7, "mode": mode, "to_soc": RATES}
    groups, stats, out = run_link(driver, tmp_path, config, frames)
    counters = stats["to_soc"]
    assert counters["frames"] == frames
    assert classify(groups, originals) == {k: counters[k] for k in KINDS}
    for kind, rate in RATES.items():
        expected = rate * frames
        assert abs(counters[kind] - expected) <= (2 if mode == "spread" else 4 * expected ** 0.5 + 2), \
            (kind, counters[kind], expected)
    assert stats["from_soc"]["frames"] == 0
    # deterministic: the same seed, the same faults; another seed, others
    assert run_link(driver, tmp_path, config, frames)[2] == out
    assert run_link(driver, tmp_path, {**config, "seed": 8}, frames)[2] != out


def test_fault_link_releases_a_held_frame_after_its_hold_time(driver, tmp_path):
    originals = reference_frames(driver, tmp_path, 50)
    groups, stats, _ = run_link(driver, tmp_path, {"seed": 3, "reorder_hold_cycles": 500,
                                                   "to_soc": {"reorder": 0.2}}, 50)
    # the driver lets 999 cycles pass after each frame: a held frame comes out on its own
    assert stats["to_soc"]["reorder"] > 0
    assert [f for g in groups for _, f in g] == originals


def test_fault_link_spares_syn_segments_when_asked(driver, tmp_path):
    frames = 2000
    originals = reference_frames(driver, tmp_path, frames)
    syn = [i for i, f in enumerate(originals) if f[12:14] == b"\x08\x00" and f[47] & 0x02]
    assert len(syn) > 100
    rates = {"drop": 0.3, "bad_fcs": 0.1, "truncate": 0.1}
    groups, stats, _ = run_link(driver, tmp_path, {"seed": 2, "spare_syn": True, "to_soc": rates}, frames)
    assert all(groups[i] == [(0, originals[i])] for i in syn)
    assert stats["spare_syn"] and stats["to_soc"]["spared_syn"] == len(syn)
    assert stats["to_soc"]["frames"] == frames - len(syn)
    groups, stats, _ = run_link(driver, tmp_path, {"seed": 2, "to_soc": rates}, frames)
    assert any(groups[i] != [(0, originals[i])] for i in syn) and stats["to_soc"]["spared_syn"] == 0


def test_fault_link_refuses_bad_configuration(driver, tmp_path):
    for config in ({"to_soc": {"lose": 0.1}}, {"to_soc": {"drop": 1.5}}, {"mode": "bursty"},
                   {"sideways": {}}):
        r = subprocess.run([driver, json.dumps(config), "1", str(tmp_path / "s.json")],
                           stderr=subprocess.PIPE, text=True)
        assert r.returncode == 2 and "bad config" in r.stderr, config


# -- 2. CalDAV over the lossy link ----------------------------------------------------------------

TIMEOUT = 900  # wall seconds per request: a lost frame costs a (scaled) retransmission timeout
TIMER_SCALE = 32  # slirp's and lwIP's clocks, x simulated time
FAST_TRANSACTIONS, FAST_CLIENTS = 24, 6
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}
SIM_CLOCK_HZ = 125_000_000


def event(uid, rng):
    """An event of 0.3 to 6 KB (a meeting with its notes): bodies of several segments let TCP
    recover most losses by fast retransmission rather than by a timeout."""
    words = ("budget", "review", "standup", "lunch", "call", "plan", "minutes", "agenda")
    notes = "".join("COMMENT:" + " ".join(rng.choice(words) for _ in range(8)) + "\r\n"
                    for _ in range(rng.choice((0, 8, 30, 90))))
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//litedav-faults//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:{uid}\r\nDTSTAMP:20261101T080000Z\r\nDTSTART:202612{rng.randrange(1, 29):02d}T"
            f"{rng.randrange(8, 18):02d}0000Z\r\nDURATION:PT1H\r\nSUMMARY:{rng.choice(words)}\r\n"
            f"{notes}END:VEVENT\r\nEND:VCALENDAR\r\n")


MULTIGET = ('<?xml version="1.0"?><C:calendar-multiget xmlns:D="DAV:" '
            'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/>'
            '</D:prop><D:href>{href}</D:href></C:calendar-multiget>')


class Client:
    """One CalDAV client on its own keep-alive connection (reopened when the server closes it)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
            try:
                self.conn.request(method, path, body=body.encode() if body else None,
                                  headers={**AUTH, **(headers or {})})
                r = self.conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # the server may close an idle keep-alive connection; a request is retried
                # only when it provably never got an answer on a connection that was reused
                self.close()
                if attempt == 2:
                    raise
                continue
            if r.getheader("Connection", "").lower() == "close":
                self.close()
            return r.status, dict(r.getheaders()), data
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def run_client(port, calendar, index, transactions, seed, results, more=lambda: False, extra=0):
    """PUT / GET / REPORT / DELETE cycles on the client's own objects, `transactions` of them,
    then up to `extra` more while more() says so; results[index] gets the count of each kind of
    transaction done, or the traceback that stopped it."""
    rng = random.Random(seed * 1000 + index)
    client = Client(port)
    live = {}  # href -> (body, etag)
    done = dict.fromkeys(("PUT", "GET", "REPORT", "DELETE"), 0)
    results[index] = done  # counted as they complete, so that progress() sees a long run's figures
    try:
        n = 0
        while n < transactions or (n < transactions + extra and more()):
            choices = ["PUT"] + (["GET", "REPORT", "DELETE"] if live else [])
            op = rng.choice(choices)
            if op == "PUT":
                href = f"{calendar}c{index}-{n}.ics"
                body = event(f"c{index}-{n}@faults", rng)
                status, headers, data = client.request("PUT", href, body, {"Content-Type": "text/calendar",
                                                                            "If-None-Match": "*"})
                assert status == 201, (op, href, status, data[:300])  # the body says why
                live[href] = (body, headers["ETag"])
            elif op == "GET":
                href = rng.choice(sorted(live))
                status, headers, data = client.request("GET", href)
                assert status == 200 and data == live[href][0].encode(), (op, href, status)
                assert headers["ETag"] == live[href][1], (op, href, headers["ETag"], live[href][1])
            elif op == "REPORT":
                href = rng.choice(sorted(live))
                status, _, data = client.request("REPORT", calendar, MULTIGET.format(href=href),
                                                 {"Depth": "1", "Content-Type": "application/xml"})
                assert status == 207, (op, href, status)
                tree = ET.fromstring(data)
                got = tree.find(".//{urn:ietf:params:xml:ns:caldav}calendar-data").text
                etag = tree.find(".//{DAV:}getetag").text
                # XML parsers turn CR LF into LF; GET checks the object byte for byte
                assert got.replace("\r\n", "\n") == live[href][0].replace("\r\n", "\n"), (op, href)
                assert etag == live[href][1], (op, href, etag, live[href][1])
            else:
                href = rng.choice(sorted(live))
                status, _, data = client.request("DELETE", href, headers={"If-Match": live[href][1]})
                assert status == 204, (op, href, status, data[:300])
                del live[href]
            done[op] += 1
            n += 1
        for href, (body, _) in sorted(live.items()):  # what is left is intact
            status, _, data = client.request("GET", href)
            assert status == 200 and data == body.encode(), ("final GET", href, status)
        results[index] = done
    except Exception:  # reported by the main thread
        results[index] = f"client {index}: {traceback.format_exc()}"
    finally:
        client.close()


def run_clients(port, calendar, transactions, clients, seed, more, extra, progress=None,
                progress_every=60):
    """`clients` threads of run_client sharing `transactions` (each may go on for `extra` more
    while more() says so); fails on any client's error. Returns (per-client counts, wall s).
    progress(counts, wall s), if given, is called every `progress_every` wall seconds while the
    clients run, with the transactions each finished client or running one has done so far."""
    results = [None] * clients
    per_client = [transactions // clients + (i < transactions % clients) for i in range(clients)]
    threads = [threading.Thread(target=run_client,
                                args=(port, calendar, i, per_client[i], seed, results, more,
                                      per_client[i] + extra))
               for i in range(clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    last = time.time()
    for t in threads:
        while t.is_alive():
            t.join(5)
            if (progress and time.time() - last >= progress_every
                    and not any(isinstance(r, str) for r in results)):  # no client has failed
                last = time.time()
                progress([r for r in results if isinstance(r, dict)], last - t0)
    failures = [r for r in results if not isinstance(r, dict)]
    if failures:
        raise ClientsFailed(failures, [r for r in results if isinstance(r, dict)], time.time() - t0)
    return results, time.time() - t0


class ClientsFailed(AssertionError):
    """Some clients of run_clients() failed: `failures` their tracebacks, `results` the counts of
    the others, `wall` seconds, so that a long run can still report what happened."""

    def __init__(self, failures, results, wall):
        super().__init__("\n".join(failures))
        self.failures, self.results, self.wall = failures, results, wall

    def mark(self, figures):
        """figures (of the clients that finished) as a failed run's: how many failed, and each
        one's client and last traceback line."""
        figures["failures"] = len(self.failures)
        figures["failed"] = [f"{f.split(':')[0]}: {f.strip().splitlines()[-1]}" for f in self.failures]
        return figures


def status_page(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("GET", "/")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


SOAK_TRANSACTIONS, SOAK_CLIENTS = 1000, 20  # the run (make soak)


def summary_md(figures):
    """The lossy-link section of the reliability report."""
    reduced = figures["planned_transactions"] < SOAK_TRANSACTIONS or figures["clients"] < SOAK_CLIENTS
    lines = [(f"**Reduced run: {figures['planned_transactions']} transactions by {figures['clients']} clients "
              f"(LITEDAV_FAULT_TRANSACTIONS / LITEDAV_FAULT_CLIENTS); make soak runs {SOAK_TRANSACTIONS:,} by "
              f"{SOAK_CLIENTS}.** " if reduced else "") +
             (f"**Failed run: {figures['failures']} of {figures['clients']} clients failed "
              f"({'; '.join(figures['failed'])}).** " if figures["failures"] else "") +
             ("" if figures["complete"] else
              f"**Interrupted run: {figures['transactions']} of {figures['planned_transactions']} transactions "
              "done when last recorded (the run records its figures as it goes); the clients' final "
              "read-back of their objects not yet done.** ") +
             f"{figures['transactions']} transactions ({', '.join(f'{n} {op}' for op, n in figures['by_method'].items())}) "
             f"by {figures['clients']} concurrent clients, {figures['failures']} failures, every body "
             f"byte-exact; {figures['simulated_seconds']} s of simulated time (cycles / sys_clk) "
             f"with both TCP ends' timers at {figures['timer_scale']} x simulated time (lwIP's and "
             f"slirp's clocks: every retransmission timeout 1/{figures['timer_scale']} as long), "
             f"{figures['wall_seconds']} s of wall time; fault seed {figures['seed']}, "
             f"{'SYN segments spared, ' if figures['spare_syn'] else 'SYN segments not spared, '}rates "
             + ", ".join(f"{k} {v:g}" for k, v in figures["rates"].items()) + ".", "",
             "| direction | frames | " + " | ".join(KINDS) + " |",
             "|---|---|" + "---|" * len(KINDS)]
    for direction, counters in figures["faults"].items():
        lines.append(f"| {direction} | {counters['frames']} | "
                     + " | ".join(str(counters[k]) for k in KINDS) + " |")
    lines += ["", f"Frames the SoC's MAC dropped for want of a receive buffer: {figures['rx_dropped']}. "
              f"Requests that waited for one of the firmware's /dav/ request contexts: {figures['dav_waited']}; "
              f"refused with 503 after the bounded wait: {figures['dav_refused']}. Connections reset or closed by "
              f"httpd's idle timeout: {figures.get('conns_timed_out', '?')}."]
    return "\n".join(lines)


def test_caldav_transactions_survive_a_lossy_link(sim_build, tmp_path):
    from litedav.sim.run import SimOptions, Simulator, free_port
    transactions = int(os.environ.get("LITEDAV_FAULT_TRANSACTIONS", FAST_TRANSACTIONS))
    clients = int(os.environ.get("LITEDAV_FAULT_CLIENTS", FAST_CLIENTS))
    seed = int(os.environ.get("LITEDAV_FAULT_SEED", 1))
    spare_syn = os.environ.get("LITEDAV_FAULT_SPARE_SYN") == "1"
    # spread: every kind is certain to happen within 1/rate frames of each direction
    sim = Simulator(sim_build, SimOptions(port=free_port(), echo=False, fresh_flash=True, faults=RATES,
                                          fault_seed=seed, fault_mode="spread", fault_spare_syn=spare_syn,
                                          fault_stats=str(tmp_path / "faults.json"),
                                          slirp_clock_scale=TIMER_SCALE, lwip_clock_scale=TIMER_SCALE))
    sim.start()
    try:
        sim.wait_ready(timeout=300)
        setup = Client(sim.port)
        calendar = "/dav/demo/faults/"
        assert setup.request("MKCALENDAR", calendar)[0] == 201
        before = status_page(sim.port)
        # until every fault kind has happened both ways (spread mode makes that certain within
        # 1/rate frames of each direction), the clients go on, up to as many transactions again
        def more():
            counters = sim.fault_counters()
            return counters is None or not all(counters[d][k] for d in ("to_soc", "from_soc") for k in KINDS)

        def figures_of(results, wall, now, counters, complete):
            done = {op: sum(r[op] for r in results) for op in ("PUT", "GET", "REPORT", "DELETE")}
            return {"transactions": sum(done.values()), "planned_transactions": transactions,
                    "clients": clients, "by_method": done, "complete": complete,
                    "failures": 0, "seed": seed, "rates": RATES, "timer_scale": TIMER_SCALE,
                    "spare_syn": spare_syn,
                    "simulated_seconds": round((int(now["uptime_cycles"]) - int(before["uptime_cycles"]))
                                               / SIM_CLOCK_HZ, 3),
                    "wall_seconds": round(wall),
                    "faults": {d: {k: counters[d][k] for k in ("frames", "spared_syn", *KINDS)}
                               for d in ("to_soc", "from_soc")},
                    "rx_dropped": int(now["rx_dropped"]) - int(before["rx_dropped"]),
                    "dav_waited": int(now["dav_waited"]) - int(before["dav_waited"]),
                    "dav_refused": int(now["dav_refused"]) - int(before["dav_refused"]),
                    "conns_timed_out": int(now["conns_timed_out"]) - int(before["conns_timed_out"])}

        def progress(results, wall):  # a long run that is stopped or dies still reports
            counters = sim.fault_counters()
            if counters is None:
                return
            figures = figures_of(results, wall, status_page(sim.port), counters, False)
            reliability_report.record("caldav_over_lossy_link", figures, summary_md(figures),
                                      title="CalDAV over a lossy link")
        soak = transactions > FAST_TRANSACTIONS and os.environ.get(reliability_report.ENV)
        try:
            results, wall = run_clients(sim.port, calendar, transactions, clients, seed, more, 8,
                                        progress=progress if soak else None, progress_every=300)
        except ClientsFailed as e:
            if soak:  # the report must not keep an earlier interim record's "0 failures"
                figures = e.mark(figures_of(e.results, e.wall, status_page(sim.port), sim.fault_counters(), False))
                reliability_report.record("caldav_over_lossy_link", figures, summary_md(figures),
                                          title="CalDAV over a lossy link")
            raise
        after = status_page(sim.port)
        setup.close()
    finally:
        # a simulator that ended by itself (a soak run once lost it after 27 minutes: every
        # client then got "connection refused") says why here
        ended = sim.proc.poll() if sim.proc else None
        sim.stop()
        print(f"\n--- simulator {'exited by itself with code ' + str(ended) if ended is not None else 'stopped'}"
              " (console, last lines) ---\n" + "\n".join(sim.console[-20:]))
    counters = sim.fault_counters()  # final, written at exit
    figures = figures_of(results, wall, after, counters, True)
    reliability_report.record("caldav_over_lossy_link", figures, summary_md(figures),
                              title="CalDAV over a lossy link")
    assert figures["transactions"] >= transactions
    for direction in ("to_soc", "from_soc"):
        for kind in KINDS:
            assert counters[direction][kind] > 0, f"no {kind} fault {direction}: {counters}"
