"""Every shared CalDAV check (caldav_checks.py, caldav_report_checks.py), collected by a target's
test module with `from caldav_suite import *`; that module provides the `target` fixture (an
http_checks.Target whose CalDAV fields say what its build holds). Listed in the order pytest runs
them."""
from caldav_checks import (
    test_dav_authentication,
    test_dav_discovery_from_root,
    test_dav_options_and_unsupported_methods,
    test_dav_propfind_home,
    test_dav_calendar_properties,
    test_dav_mkcalendar,
    test_dav_mkcalendar_component_set,
    test_dav_copy_move_and_dead_properties,
    test_dav_proppatch_is_atomic,
    test_dav_put_get_delete_with_etags,
    test_caldav_put_preconditions,
)
from caldav_report_checks import (
    test_caldav_calendar_multiget,
    test_caldav_calendar_query,
    test_caldav_calendar_data_expand,
    test_dav_principal_search_and_free_busy_post,
    test_caldav_free_busy_query,
    test_dav_sync_collection,
    test_dav_requests_beyond_the_contexts_wait,
    test_caldav_concurrent_clients,
    test_caldav_client_flow,
)

CHECKS = (
    test_dav_authentication, test_dav_discovery_from_root, test_dav_options_and_unsupported_methods,
    test_dav_propfind_home,
    test_dav_calendar_properties, test_dav_mkcalendar, test_dav_mkcalendar_component_set,
    test_dav_copy_move_and_dead_properties, test_dav_proppatch_is_atomic,
    test_dav_put_get_delete_with_etags, test_caldav_put_preconditions,
    test_caldav_calendar_multiget, test_caldav_calendar_query, test_caldav_calendar_data_expand,
    test_dav_principal_search_and_free_busy_post, test_caldav_free_busy_query,
    test_dav_sync_collection, test_dav_requests_beyond_the_contexts_wait,
    test_caldav_concurrent_clients, test_caldav_client_flow,
)
__all__ = [check.__name__ for check in CHECKS]
