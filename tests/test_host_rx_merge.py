"""Host (Linux) unit test of the offload driver's receive merging
(firmware/ports/litex/rx_merge.c, compiled unchanged) on lwIP's real pbufs,
under ASan/UBSan.

Builds the `rx-merge` target of firmware/ports/host (output in build/host/;
lwIP from `make deps`) and runs test_rx_merge: table-driven cases on real
Ethernet/IPv4/TCP frames, then seeded random frame sequences from 1-3 flows
fed through the driver's RX loop and checked against rx_merge.c's rules (per
flow payload bytes in = out, duplicate ACKs handed on, ACKs never going back,
merging whenever allowed, no pbuf leaked). It must exit 0 and end with
"N passed, 0 failed".

LITEDAV_FUZZ=1 selects the long random run (LITEDAV_RX_MERGE_SEQUENCES
sequences, default 1,000,000); LITEDAV_SEED sets its seed (default 12345).
"""
import os

import pytest

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")

FUZZ_LONG = os.environ.get("LITEDAV_FUZZ") == "1"
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
SEQUENCES = int(os.environ.get("LITEDAV_RX_MERGE_SEQUENCES", "1000000")) if FUZZ_LONG else 10_000
TIMEOUT = 7200 if FUZZ_LONG else 60



@pytest.fixture(scope="module")
def rx_merge_build():
    # lwIP is 29 files: build them in parallel
    proc = run(["make", "-C", PORT, "-j", str(os.cpu_count() or 2), "OUT=" + OUT, "rx-merge"],
               timeout=300)
    assert proc.returncode == 0, "rx-merge build failed:\n" + proc.stdout
    return OUT


def test_rx_merge(rx_merge_build):
    proc = run([os.path.join(rx_merge_build, "test_rx_merge"), str(SEED), str(SEQUENCES)],
               timeout=TIMEOUT)
    lines = proc.stdout.rstrip("\n").splitlines()
    last = lines[-1] if lines else ""
    assert proc.returncode == 0, f"test_rx_merge exited {proc.returncode}:\n{proc.stdout}"
    m = SUMMARY.match(last)
    assert m, f"last line is not 'N passed, M failed': {last!r}\n{proc.stdout}"
    assert int(m.group(2)) == 0, proc.stdout
    # the random part checks every frame and segment many times over
    assert int(m.group(1)) >= 100 * SEQUENCES, proc.stdout
