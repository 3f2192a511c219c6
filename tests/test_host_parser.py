"""Host (Linux) unit tests of the pure HTTP code, under ASan/UBSan: the
request-head parser, the chunked body decoder and the conditional-request
helpers.

Builds firmware/ports/host (output in build/host/) and runs its programs: the
table-driven unit tests and the seeded randomized robustness tests. Each must
exit 0 and end with the line "N passed, 0 failed". Needs only gcc with
libasan/libubsan and, for the httpd flow-control test (httpd.c on lwIP's
loopback netif with a raw-API client, pausing handlers and producers), the
lwIP sources from `make deps`; no simulator.

LITEDAV_FUZZ=1 selects the long randomized runs (LITEDAV_FUZZ_ITERATIONS
iterations each, default 5,000,000; the request-head parser's fuzzer at least
10,000,000, issue 29's bar for the parser); LITEDAV_SEED sets their seed
(default 12345). The count run is printed on each program's first line.
"""
import os

import pytest

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")

FUZZ_LONG = os.environ.get("LITEDAV_FUZZ") == "1"
FUZZ_SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
FUZZ_ITERATIONS = int(os.environ.get("LITEDAV_FUZZ_ITERATIONS", "5000000")) if FUZZ_LONG \
    else 200_000
BODY_FUZZ_ITERATIONS = FUZZ_ITERATIONS if FUZZ_LONG else 100_000
PARSER_FUZZ_ITERATIONS = max(FUZZ_ITERATIONS, 10_000_000) if FUZZ_LONG else FUZZ_ITERATIONS
FUZZ_TIMEOUT = 3600 if FUZZ_LONG else 60
FLOW_ROUNDS = 2000 if FUZZ_LONG else 40



@pytest.fixture(scope="module")
def host_build():
    proc = run(["make", "-C", PORT, "OUT=" + OUT, "all", "http-body", "httpd-flow"], timeout=300)
    assert proc.returncode == 0, "host build failed:\n" + proc.stdout
    return OUT


def check_program(cmd, timeout):
    proc = run(cmd, timeout)
    lines = proc.stdout.rstrip("\n").splitlines()
    last = lines[-1] if lines else ""
    assert proc.returncode == 0, f"{cmd[0]} exited {proc.returncode}:\n{proc.stdout}"
    m = SUMMARY.match(last)
    assert m, f"{cmd[0]}: last line is not 'N passed, M failed': {last!r}\n{proc.stdout}"
    assert int(m.group(2)) == 0 and int(m.group(1)) > 0, proc.stdout
    return int(m.group(1))


def test_parser_unit(host_build):
    passed = check_program([os.path.join(host_build, "test_http_parse")], timeout=60)
    assert passed >= 500


def test_parser_fuzz(host_build):
    passed = check_program([os.path.join(host_build, "fuzz_http_parse"),
                            str(FUZZ_SEED), str(PARSER_FUZZ_ITERATIONS)], timeout=FUZZ_TIMEOUT)
    assert passed >= PARSER_FUZZ_ITERATIONS


def test_chunked_unit(host_build):
    passed = check_program([os.path.join(host_build, "test_http_chunked")], timeout=60)
    assert passed >= 500


def test_port_string_functions(host_build):
    """The LiteX port's word-at-a-time memchr, memcmp and strlen, and the Cortex-M3 ports'
    memchr and Internet checksum, against the C library's and a sum of byte pairs."""
    passed = check_program([os.path.join(host_build, "test_port_string")], timeout=60)
    assert passed >= 30000


def test_conditional_unit(host_build):
    passed = check_program([os.path.join(host_build, "test_http_cond")], timeout=60)
    assert passed >= 80


def test_body_fuzz(host_build):
    passed = check_program([os.path.join(host_build, "fuzz_http_body"),
                            str(FUZZ_SEED), str(BODY_FUZZ_ITERATIONS)], timeout=FUZZ_TIMEOUT)
    assert passed >= BODY_FUZZ_ITERATIONS


def test_httpd_flow_control(host_build):
    passed = check_program([os.path.join(host_build, "test_httpd_flow"),
                            str(FUZZ_SEED), str(FLOW_ROUNDS)], timeout=FUZZ_TIMEOUT)
    assert passed >= 5 * FLOW_ROUNDS
