"""Every shared HTTP check (http_checks.py, http_body_checks.py), collected by a target's test
module with `from http_suite import *`; that module provides the `target` fixture (the simulated
SoC, the host build, QEMU...). Listed in the order pytest runs them."""
from http_checks import (
    test_status_page,
    test_static_file_and_head,
    test_parallel_keepalive_clients,
    test_pipelined_requests,
    test_malformed_request_gets_error_and_server_keeps_serving,
)
from http_body_checks import (
    test_options,
    test_bodies_drained_on_keepalive_pipelined,
    test_body_split_across_writes,
    test_content_too_large,
    test_expect_100_continue,
    test_body_framing_errors,
    test_unknown_method_501,
    test_status_page_streamed,
)

CHECKS = (
    test_status_page, test_static_file_and_head, test_parallel_keepalive_clients,
    test_pipelined_requests, test_malformed_request_gets_error_and_server_keeps_serving,
    test_options, test_bodies_drained_on_keepalive_pipelined, test_body_split_across_writes,
    test_content_too_large, test_expect_100_continue, test_body_framing_errors,
    test_unknown_method_501, test_status_page_streamed,
)
__all__ = [check.__name__ for check in CHECKS]
