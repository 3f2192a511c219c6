"""RFC 6528 initial sequence numbers (firmware/app/net/tcp_isn.h), on the host under ASan/UBSan:
SipHash-2-4 against its authors' vectors, ISNs that are a function of the connection and a 4 us
clock with no counter between neighbouring connections, and a key that the first frames'
arrival times change. The SoC's use of them is covered by every simulator test that connects."""
import os

from test_host_parser import check_program, host_build  # noqa: F401


def test_tcp_isn_unit(host_build):
    assert check_program([os.path.join(host_build, "test_tcp_isn")], timeout=60) >= 70
