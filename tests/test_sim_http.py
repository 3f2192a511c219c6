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
