"""Host (Linux) tests of the flash store (firmware/app/store/) on the NOR
flash model (firmware/ports/host/flash_file.c), under ASan/UBSan.

Builds the `store` target of firmware/ports/host (output in build/host/) and
runs test_store (unit tests) and torture_store (random operations against a
model with power cuts at random points, including mid-record and
mid-compaction, then remount and check). Each must exit 0 and end with
"N passed, 0 failed"; the torture prints how many power cuts it survived.

LITEDAV_FUZZ=1 selects the long torture run (LITEDAV_STORE_CYCLES power-cut
cycles, default 20,000); LITEDAV_SEED sets its seed (default 12345).
"""
import os
import re

import pytest

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")
SCRATCH = os.path.join(OUT, "store-scratch")

FUZZ_LONG = os.environ.get("LITEDAV_FUZZ") == "1"
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
CYCLES = int(os.environ.get("LITEDAV_STORE_CYCLES", "20000")) if FUZZ_LONG else 600
TIMEOUT = 7200 if FUZZ_LONG else 60
CUTS = re.compile(r"^power cuts survived: (\d+) \((\d+) while compacting\)", re.M)


@pytest.fixture(scope="module")
def store_build():
    proc = run(["make", "-C", PORT, "OUT=" + OUT, "store"], timeout=180)
    assert proc.returncode == 0, "store build failed:\n" + proc.stdout
    os.makedirs(SCRATCH, exist_ok=True)
    return OUT


def check_program(cmd, timeout):
    proc = run(cmd, timeout)
    lines = proc.stdout.rstrip("\n").splitlines()
    last = lines[-1] if lines else ""
    assert proc.returncode == 0, f"{cmd[0]} exited {proc.returncode}:\n{proc.stdout}"
    m = SUMMARY.match(last)
    assert m, f"{cmd[0]}: last line is not 'N passed, M failed': {last!r}\n{proc.stdout}"
    assert int(m.group(2)) == 0 and int(m.group(1)) > 0, proc.stdout
    return int(m.group(1)), proc.stdout


def test_store_unit(store_build):
    passed, _ = check_program([os.path.join(store_build, "test_store"), SCRATCH], timeout=60)
    assert passed >= 700


def test_store_power_cut_torture(store_build):
    _, out = check_program([os.path.join(store_build, "torture_store"), SCRATCH,
                            str(SEED), str(CYCLES)], timeout=TIMEOUT)
    m = CUTS.search(out)
    assert m, out
    cuts, compacting = int(m.group(1)), int(m.group(2))
    # nearly every cycle ends in a cut (a cycle ends uncut only after 2,000 operations)
    assert cuts >= CYCLES * 9 // 10, out
    assert compacting >= CYCLES // 10, out
