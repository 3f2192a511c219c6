"""CalDAV on the simulated SoC (the store in a RAM flash), with the shared
CalDAV checks (caldav_suite.py) that also run against the host build and the
LM3S port in QEMU.

The simulator runs about 1000 times slower than the hardware (a request
takes a wall second or more), so it runs the checks issue 6 names for every
target (PUT/GET/DELETE, PROPFIND, calendar-query, sync-collection,
concurrent clients) plus multiget, authentication, the python caldav
client of the README and one round trip of each method issue 32 added
(MKCALENDAR with a component set, COPY, MOVE, PROPPATCH of a dead property,
calendar-data expand, principal-property-search, a free-busy POST to the
outbox), and the target is `quick`: fewer rounds, clients and
filters (calendar-query checks its time ranges only). The other shared
checks (properties, PROPPATCH, preconditions with 64 KiB objects,
free-busy, the wait for busy contexts) run on the host build and in QEMU,
with the same firmware/app code."""
import pytest

from caldav_checks import app_limits
from caldav_suite import (  # noqa: F401  (run against this target)
    test_dav_authentication,
    test_dav_propfind_home,
    test_dav_mkcalendar_component_set,
    test_dav_copy_move_and_dead_properties,
    test_dav_put_get_delete_with_etags,
    test_caldav_calendar_multiget,
    test_caldav_calendar_query,
    test_caldav_calendar_data_expand,
    test_dav_principal_search_and_free_busy_post,
    test_dav_sync_collection,
    test_caldav_concurrent_clients,
    test_caldav_client_flow,
)
from http_checks import Target

TIMEOUT = 120  # wall seconds: the simulator runs far slower than real time
SIM_CLOCK_HZ = 125_000_000


@pytest.fixture(scope="module")
def target(appliance):
    return Target(port=appliance.port, cycles_hz=SIM_CLOCK_HZ, timeout=TIMEOUT, quick=True,
                  **app_limits())
