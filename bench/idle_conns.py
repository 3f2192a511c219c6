"""Cost of a keep-alive request against the number of idle keep-alive connections.

The libcurl "hiper" experiment measured select()-style designs whose cost per call grows
with the idle connections they carry. This benchmark boots the simulated SoC, opens idle
keep-alive connections in steps (0, 100, 1,000, 4,000 by default: each has made one request
and stays open without a word), and at every step measures the CPU cycles per small GET of
`ab -k -c 10` on other connections. Cycles are the SoC's busy cycles (status page): main-loop
turns that handled a frame or ran lwIP's timers, whose walks over every connection are what
idle connections cost.

    python3 -m litedav.bench.idle_conns [--counts 0 100 1000 4000] [--requests N] [--out DIR]
                                        [--soc ideal|colorlight_i5]

Writes section "idle_connections" of DIR/latest.json and latest.md and DIR/idle_connections.png
(default bench/results/), after every step (the rows so far) and at the end; a board model
(--soc colorlight_i5, docs/board_model.md, at its own PHY unless --phy) has its own section,
"idle_connections_colorlight_i5", and plot. tests/test_sim_idle_conns.py uses open_idle() and still_open().
"""

import argparse
import errno
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

from litedav.bench.lm3s_instructions import merge_section
from litedav.sim.config import BOARD_MODEL_NICS, BOARD_MODEL_PHYS, IDEAL_SOC

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "idle_connections"
SMALL_PATH = "/static/task.ics"
# Connections opened at once: a wave the SoC's receive slots absorb (bench/README.md, waves
# of new connections); each wave's requests are answered before the next opens.
WAVE = 8


def read_status(port, timeout=300):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=timeout) as r:
        body = r.read().decode()
    return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", body, re.M)}


def _request_bytes(path):
    return f"GET {path} HTTP/1.1\r\nHost: litedav\r\nConnection: keep-alive\r\n\r\n".encode()


def _read_response(sock):
    """One HTTP/1.1 response with a Content-Length: (status, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed by the server after {len(data)} bytes of a response head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = re.search(rb"^content-length:\s*(\d+)", head, re.I | re.M)
    if not length:
        raise ValueError(f"response without Content-Length: {head[:200]!r}")
    while len(body) < int(length.group(1)):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed by the server inside a response body")
        body += chunk
    return status, body


def get(sock, path=SMALL_PATH):
    """A keep-alive GET on an open socket: (status, body)."""
    sock.sendall(_request_bytes(path))
    return _read_response(sock)


def open_idle(port, count, request="each", timeout=300, wave=WAVE, log=None):
    """Open count connections to 127.0.0.1:port, in waves of `wave`. request "each": every
    connection sends one keep-alive GET of SMALL_PATH and reads its answer (status 200
    required), so it is an idle keep-alive client afterwards; "wave": only the last of each
    wave does (it paces the waves: the SoC has seen the wave's connections when it answers);
    None: none. Returns the sockets, left open."""
    if request not in ("each", "wave", None):
        raise ValueError(f"request={request!r}: 'each', 'wave' or None")
    socks = []
    try:
        while len(socks) < count:
            batch = []
            for _ in range(min(wave, count - len(socks))):
                s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                batch.append(s)
            if request:
                for s in batch if request == "each" else batch[-1:]:
                    s.sendall(_request_bytes(SMALL_PATH))
                for s in batch if request == "each" else batch[-1:]:
                    status, _ = _read_response(s)
                    if status != 200:
                        raise RuntimeError(f"GET {SMALL_PATH} on idle connection {len(socks)}: {status}")
            socks += batch
            if log and len(socks) % 500 == 0:
                log(f"{len(socks)} idle connections open")
    except BaseException:
        close_all(socks)
        raise
    return socks


def still_open(sock):
    """True if the server has neither closed nor reset the connection (nothing to read)."""
    timeout = sock.gettimeout()
    sock.setblocking(False)  # with a timeout set, Python's recv would wait for data first
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError as e:
        if e.errno in (errno.ECONNRESET, errno.EPIPE):
            return False
        raise
    finally:
        sock.settimeout(timeout)


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def close_in_waves(socks, wave=WAVE, timeout=300):
    """Close the connections a wave at a time: each client sends its FIN (shutdown) and waits
    for the server's before the next wave goes. Closing 1,000 at once overruns the SoC's two
    receive slots: most FINs are dropped and wait out slirp's retransmission backoff, seconds
    of simulated time (a 1,000-connection burst had closed 217 after 100 M cycles).
    Returns how many connections ended otherwise (reset, timeout, or data instead of EOF)."""
    failed = 0
    for i in range(0, len(socks), wave):
        batch = socks[i:i + wave]
        for s in batch:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        for s in batch:
            try:
                s.settimeout(timeout)
                if s.recv(1) != b"":
                    failed += 1
            except OSError:
                failed += 1
            finally:
                s.close()
    return failed


def wait_status(port, done, timeout, poll_s=1.0):
    """Read the status page until done(status) holds; returns the last status."""
    deadline = time.time() + timeout
    while True:
        st = read_status(port)
        if done(st) or time.time() > deadline:
            return st
        time.sleep(poll_s)


def status_cost(port, timeout=300):
    """Busy cycles one status read adds to a before/after difference."""
    costs = []
    for _ in range(3):
        a, b = read_status(port, timeout), read_status(port, timeout)
        costs.append(b["busy_cycles"] - a["busy_cycles"])
    return min(costs)


def keepalive_cost(port, requests, concurrency):
    """ab -k on SMALL_PATH: busy cycles and simulated time per request, from the status page."""
    overhead = status_cost(port)
    before = read_status(port)
    out = subprocess.run(["ab", "-q", "-k", "-n", str(requests), "-c", str(concurrency), "-s", "300",
                          f"http://127.0.0.1:{port}{SMALL_PATH}"], capture_output=True, text=True)
    after = read_status(port)
    failed = re.search(r"^Failed requests:\s+(\d+)", out.stdout, re.M)
    if out.returncode != 0 or not failed:
        sys.exit(f"ab failed:\n{out.stdout}\n{out.stderr}")
    n = after["requests"] - before["requests"] - 1  # the second status read is a request too
    busy = after["busy_cycles"] - before["busy_cycles"] - overhead
    return {"requests": n, "failed": int(failed.group(1)),
            "cpu_cycles_per_request": round(busy / n),
            "uptime_cycles_per_request": round((after["uptime_cycles"] - before["uptime_cycles"]) / n),
            "status_read_cycles": overhead}


def _relative(rows):
    base = rows[0]["cpu_cycles_per_request"] if rows and rows[0]["idle_connections"] == 0 else None
    for row in rows:
        row["vs_no_idle"] = round(row["cpu_cycles_per_request"] / base, 4) if base else None


def section(soc):
    """The ideal SoC's section keeps its old name; each board model has its own."""
    return SECTION if soc == IDEAL_SOC else f"{SECTION}_{soc}"


def measure(counts, requests, concurrency, nic="liteeth", phy="gmii", build_dir=None, log=print,
            on_row=None, soc=IDEAL_SOC):
    """on_row(partial result): called after every step (a 4,000-connection step takes half an
    hour of wall time; the rows before it are kept if it is cut short)."""
    from litedav.sim.run import SimOptions, Simulator, build, default_build_dir, free_port, read_build_commit
    board = None if soc == IDEAL_SOC else soc
    build_dir = build_dir or default_build_dir(nic, board=board)
    build(build_dir, nic=nic, board=board)
    commit = read_build_commit(build_dir)
    rows = []
    socks = []
    t0 = time.time()
    with Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True, phy=phy,
                                         peer_pid=os.getpid())) as sim:
        sim.wait_ready()
        st = read_status(sim.port)
        hz = st["sys_clk_hz"]
        keepalive_cost(sim.port, requests, concurrency)  # warm-up: caches, ARP, the first PCBs
        try:
            for count in sorted(counts):
                socks += open_idle(sim.port, count - len(socks), log=log)
                # idle ones give their HTTP state back after two quiet polls (httpd.c on_poll)
                # and are parked; measure once they have (the status read holds one state)
                wait_status(sim.port, lambda s: s["conns_open"] <= 1, 600)
                row = {"idle_connections": count, **keepalive_cost(sim.port, requests, concurrency)}
                st = read_status(sim.port)
                row["tcp_established"] = st.get("tcp_established")
                row["conns_idle"] = st.get("conns_idle")
                row["conns_open"] = st.get("conns_open")
                row["idle_closed_by_server"] = sum(not still_open(s) for s in socks)
                rows.append(row)
                log(f"{count} idle: {row['cpu_cycles_per_request']} cycles/request "
                    f"({row['requests']} requests, {row['failed']} failed)")
                _relative(rows)
                if on_row:
                    on_row({"soc": soc, "nic": nic, "phy": phy, "sys_clk_hz": hz, "commit": commit,
                            "concurrency": concurrency, "wall_s": round(time.time() - t0), "rows": rows})
        finally:
            close_all(socks)
    _relative(rows)
    return {"soc": soc, "nic": nic, "phy": phy, "sys_clk_hz": hz, "commit": commit,
            "concurrency": concurrency, "wall_s": round(time.time() - t0), "rows": rows}


def md_markers(soc):
    name = section(soc)
    return f"<!-- {name} begin (written by litedav.bench.idle_conns) -->", f"<!-- {name} end -->"


def soc_text(soc):
    return "ideal SoC" if soc == IDEAL_SOC else f"{soc} board model"


def markdown(result):
    mhz = result["sys_clk_hz"] / 1e6
    soc = result.get("soc", IDEAL_SOC)  # rows written before the board models: the ideal SoC's
    begin, end = md_markers(soc)
    commit = f"; commit {result['commit']}" if result.get("commit") else ""
    lines = [begin,
             f"\n**Keep-alive small GET (`ab -k -c {result['concurrency']}`) vs idle keep-alive connections, "
             f"{result['nic']} at {result['phy'].upper()}, {soc_text(soc)}: VexRiscv at {mhz:g} MHz{commit}**\n",
             "| idle connections | CPU cycles/request | vs 0 idle | requests (failed) | idle ones the server closed |",
             "|---|---|---|---|---|"]
    for r in result["rows"]:
        vs = f"{(r['vs_no_idle'] - 1) * 100:+.1f}%" if r["vs_no_idle"] else "-"
        lines.append(f"| {r['idle_connections']:,} | {r['cpu_cycles_per_request']:,} | {vs} | "
                     f"{r['requests']} ({r['failed']}) | {r['idle_closed_by_server']} |")
    lines.append(end)
    return "\n".join(lines) + "\n"


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["idle_connections"] for r in result["rows"]]
    ys = [r["cpu_cycles_per_request"] for r in result["rows"]]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    ax.plot(xs, ys, marker="o", label="LiteDAV (lwIP + httpd on the SoC)")
    if ys:
        ax.hlines([ys[0] * 1.05], min(xs), max(xs), colors="gray", linestyles="dashed",
                  label="+5% over 0 idle (the goal)")
    ax.set_xlabel("idle keep-alive connections")
    ax.set_ylabel("CPU cycles per keep-alive request")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Cost per request vs idle connections (hiper-style), {soc_text(result.get('soc', IDEAL_SOC))}, "
                 f"VexRiscv {result['sys_clk_hz'] / 1e6:g} MHz, {result['phy'].upper()}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_path(out, soc):
    return os.path.join(out, "idle_connections.png" if soc == IDEAL_SOC else f"idle_connections-{soc}.png")


def merge_reports(result, out):
    """The SoC's section of out/latest.json and out/latest.md (section()); other sections are kept."""
    soc = result.get("soc", IDEAL_SOC)
    merge_section(out, section(soc), result, markdown(result), *md_markers(soc))
    plot(result, plot_path(out, soc))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="idle_conns", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", type=int, nargs="+", default=[0, 100, 1000, 4000],
                        help="idle keep-alive connections to measure at (opened cumulatively)")
    parser.add_argument("--requests", type=int, default=1000, help="keep-alive requests per step")
    parser.add_argument("--concurrency", type=int, default=10, help="ab -c of the measured requests")
    parser.add_argument("--nic", default=None, choices=("liteeth", "offload"),
                        help="default: LiteEth on the ideal SoC, a board model's own NIC")
    parser.add_argument("--phy", default=None, choices=("gmii", "mii"),
                        help="wire rate (default: GMII on the ideal SoC, a board model's own PHY)")
    parser.add_argument("--soc", default=IDEAL_SOC, choices=[IDEAL_SOC, *BOARD_MODEL_PHYS],
                        help="the ideal SoC or a board model (docs/board_model.md)")
    parser.add_argument("--build-dir", default=None,
                        help="simulator build (default: the SoC's and NIC's own, build/sim[-offload] or "
                             "build/sim-<board>[-offload])")
    parser.add_argument("--out", default=os.path.join(TOP, "bench", "results"), help="output directory")
    args = parser.parse_args(argv)
    if any(c < 0 for c in args.counts):
        parser.error("--counts must be 0 or more")
    os.makedirs(args.out, exist_ok=True)
    phy = args.phy or ("gmii" if args.soc == IDEAL_SOC else BOARD_MODEL_PHYS[args.soc])
    nic = args.nic or ("liteeth" if args.soc == IDEAL_SOC else BOARD_MODEL_NICS[args.soc])
    result = measure(args.counts, args.requests, args.concurrency, nic, phy,
                     os.path.abspath(args.build_dir) if args.build_dir else None,
                     log=lambda m: print(f"[idle_conns] {m}", flush=True),
                     on_row=lambda partial: merge_reports(partial, args.out), soc=args.soc)
    merge_reports(result, args.out)
    print(markdown(result))


if __name__ == "__main__":
    main()
