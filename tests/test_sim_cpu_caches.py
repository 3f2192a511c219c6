"""The ideal SoC with a generated VexRiscv (soc/vexriscv_netlist.py: litedav-soc --cpu-icache
--cpu-dcache): 8 KiB caches, and a data cache the offload driver invalidates line by line
(LITEDAV_DCACHE_LINE_INVALIDATE) instead of whole. A line left stale would hand lwIP bytes of an
earlier frame: the shared HTTP checks run on it, 1 MiB goes through /bulk and back, and small
PUTs of different bytes follow each other on one connection, each into pool buffers whose lines
the CPU has just read (lwIP's pool hands back the buffer freed last).

The SoC is its own Verilator build (build/sim-offload-cpu-caches), booted once for this module.
"""
import base64
import os
import random

import pytest

from http_checks import Target
from http_checks import (  # noqa: F401  (collected here, in this order)
    test_status_page,
    test_static_file_and_head,
    test_parallel_keepalive_clients,
    test_pipelined_requests,
)
from bulk_checks import test_bulk_round_trip_1mib  # noqa: F401
from sim_boot import booted

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120
SIM_CLOCK_HZ = 125_000_000
CACHE_BYTES = 8192
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))


@pytest.fixture(scope="module")
def cpu_caches_appliance():
    from litedav.sim.run import build
    # no profile-guided pass: it makes the model faster, not different, and CI builds it once
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LITEDAV_SIM_PGO", "0")
        build_dir = build(os.path.join(TOP, "build", "sim-offload-cpu-caches"), nic="offload",
                          soc_args=("--cpu-icache", str(CACHE_BYTES), "--cpu-dcache", str(CACHE_BYTES)))
    with open(os.path.join(build_dir, "software", "include", "generated", "soc.h")) as f:
        soc_h = f.read()
    assert "LITEDAV_DCACHE_LINE_INVALIDATE" in soc_h
    with open(os.path.join(build_dir, "gateware", "build_sim.sh")) as f:
        assert "build/vexriscv/standard-i8192-d8192-" in f.read()
    yield from booted(build_dir, "simulator", fresh_flash=True)


@pytest.fixture(scope="module")
def target(cpu_caches_appliance):
    return Target(port=cpu_caches_appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT)


def test_driver_invalidates_lines_not_the_cache():
    """The firmware of this SoC issues the line invalidation (rs1 other than x0, rs2 the line
    count) and never the whole-cache one LiteX's flush_cpu_dcache() encodes (0x0000500f)."""
    import subprocess
    elf = os.path.join(TOP, "build", "sim-offload-cpu-caches", "firmware", "litedav.elf")
    text = subprocess.run(["riscv64-unknown-elf-objdump", "-d", "--section=.text", elf],
                          capture_output=True, text=True, check=True).stdout
    words = [line.split("\t")[1].strip() for line in text.splitlines()
             if line.count("\t") >= 2 and ":" in line.split("\t")[0]]
    line_invalidations = [w for w in words if len(w) == 8 and int(w, 16) & 0xfe00707f == 0x0000500f
                          and (int(w, 16) >> 15) & 31]
    assert line_invalidations
    assert "0000500f" not in words


def test_small_puts_of_different_bytes_back_to_back(target):
    rng = random.Random(SEED)
    conn = target.connection()
    for i in range(40):
        payload = rng.randbytes(rng.randrange(64, 3000))
        conn.request("PUT", "/bulk", body=payload,
                     headers={**AUTH, "Content-Type": "application/octet-stream"})
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 204, f"PUT #{i}"
        conn.request("GET", "/bulk")
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200
        assert body == payload, f"PUT #{i} ({len(payload)} bytes) came back different"
    conn.close()
