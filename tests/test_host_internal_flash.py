"""Host test of the LM3S9B95 internal-flash driver
(firmware/ports/lm3s9b95/internal_flash.c), under ASan/UBSan.

Builds the `internal-flash` target of firmware/ports/host: the driver file,
unchanged, with its register accessors pointed at a software model of the
Stellaris flash controller (tests/host/flash_ctrl_model.c: write key, busy
bits, NOR programming, 1 KiB erase, protected blocks). test_internal_flash
drives it through flash.h (aligned, unaligned and partial-word programs, the
NOR/page/range errors, protection), against the RAM flash (flash_ram.c) for
a seeded random sequence, and with the store (firmware/app/store/) on top, including a
remount as after a reset. It must exit 0 and end with "N passed, 0 failed".

LITEDAV_FUZZ=1 runs longer sequences; LITEDAV_SEED sets the seed (default 1).
"""
import os
import re

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")

FUZZ_LONG = os.environ.get("LITEDAV_FUZZ") == "1"
SEED = os.environ.get("LITEDAV_SEED", "1")
RANDOM_OPS, STORE_OPS = (2_000_000, 200_000) if FUZZ_LONG else (20_000, 3_000)
TIMEOUT = 3600 if FUZZ_LONG else 120
STORE_LINE = re.compile(r"^store: (\d+) puts, (\d+) streamed puts, (\d+) deletes, (\d+) blocks compacted", re.M)


def test_internal_flash_driver_on_controller_model():
    proc = run(["make", "-C", PORT, "OUT=" + OUT, "internal-flash"], timeout=180)
    assert proc.returncode == 0, "build failed:\n" + proc.stdout
    proc = run([os.path.join(OUT, "test_internal_flash"), SEED, str(RANDOM_OPS), str(STORE_OPS)],
               timeout=TIMEOUT)
    lines = proc.stdout.rstrip("\n").splitlines()
    assert proc.returncode == 0, proc.stdout
    m = SUMMARY.match(lines[-1] if lines else "")
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= 100, proc.stdout
    store = STORE_LINE.search(proc.stdout)
    assert store, proc.stdout
    # the workload wrapped the 128-block ring several times (compaction erased blocks)
    assert int(store.group(4)) >= 128, proc.stdout
