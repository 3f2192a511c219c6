"""CalDAV on the simulated SoC (the store in a RAM flash): the shared CalDAV
checks (caldav_suite.py), the same that run against the host build and the
LM3S port in QEMU. The simulator runs about 1000 times slower than the
hardware, so the target is `quick`: the checks that repeat (sync paging,
concurrent clients' rounds) do fewer rounds."""
import pytest

from caldav_checks import app_limits
from caldav_suite import *  # noqa: F401,F403  (the shared CalDAV checks, run against this target)
from http_checks import Target

TIMEOUT = 120  # wall seconds: the simulator runs far slower than real time
SIM_CLOCK_HZ = 125_000_000


@pytest.fixture(scope="module")
def target(appliance):
    return Target(port=appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT, quick=True,
                  **app_limits())
