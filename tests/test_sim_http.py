"""End-to-end: real HTTP clients against the firmware running on the simulated SoC.

The checks live in http_checks.py, shared with the native host server's tests,
and in http_body_checks.py (request bodies, 100-continue, 413, OPTIONS).
"""
import pytest

from http_checks import Target, apachebench
from http_suite import *  # noqa: F401,F403  (the shared checks, run against this target)
from bulk_checks import (  # noqa: F401  (1 MiB through /bulk, byte for byte)
    test_bulk_round_trip_1mib,
    test_bulk_refuses_without_credentials_or_too_large,
)

TIMEOUT = 120  # wall seconds; the simulator runs far slower than real time
SIM_CLOCK_HZ = 125_000_000


@pytest.fixture(scope="module")
def target(appliance):
    return Target(port=appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT)


def test_apachebench_200_requests_20_concurrent(target):
    apachebench(target, requests=200, concurrency=20)


# crt0 clears .bss, and 2.7 MB of it cleared a byte at a time (picolibc's memset) cost
# ~15 M cycles of every simulated boot; the firmware's word memset and the no-init buffers
# (lwipopts.h LWIP_DECLARE_MEMORY_ALIGNED, app_port_config.h LITEDAV_NOINIT) brought it to
# ~0.4 M, and the whole boot to ~4.5 M (most of it the store's mount of the 16 MiB flash).
BOOT_CYCLES_MAX = 8_000_000
BEFORE_MAIN_CYCLES_MAX = 1_000_000


def test_boot_cycles(appliance):
    """The firmware prints 'boot: N cycles from reset to serving (M before main)'."""
    import re
    lines = [m for m in (re.search(r"^boot: (\d+) cycles from reset to serving \((\d+) before main\)", line)
                         for line in appliance.console) if m]
    assert lines, "no 'boot:' line on the console: " + " | ".join(appliance.console[-10:])
    boot, before_main = (int(g) for g in lines[-1].groups())
    assert before_main <= BEFORE_MAIN_CYCLES_MAX, f"crt0 took {before_main} cycles (.data copy, .bss clear)"
    assert boot <= BOOT_CYCLES_MAX, f"boot took {boot} cycles ({before_main} before main)"
