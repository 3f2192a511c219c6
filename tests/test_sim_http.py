"""End-to-end: real HTTP clients against the firmware running on the simulated SoC.

The checks live in http_checks.py, shared with the native host server's tests,
and in http_body_checks.py (request bodies, 100-continue, 413, OPTIONS).
"""
import pytest

from http_checks import Target, apachebench
from http_checks import (  # noqa: F401  (collected here, in this order)
    test_status_page,
    test_static_file_and_head,
    test_parallel_keepalive_clients,
    test_pipelined_requests,
    test_malformed_request_gets_error_and_server_keeps_serving,
)
from http_body_checks import (  # noqa: F401  (request bodies and the handler interface)
    test_options,
    test_bodies_drained_on_keepalive_pipelined,
    test_body_split_across_writes,
    test_content_too_large,
    test_expect_100_continue,
    test_body_framing_errors,
    test_unknown_method_501,
    test_status_page_streamed,
)

TIMEOUT = 120  # wall seconds; the simulator runs far slower than real time
SIM_CLOCK_HZ = 100_000_000


@pytest.fixture(scope="module")
def target(appliance):
    return Target(port=appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT)


def test_apachebench_200_requests_20_concurrent(target):
    apachebench(target, requests=200, concurrency=20)
