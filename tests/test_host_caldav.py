"""CalDAV end to end against litedav-host (the whole firmware, ASan/UBSan):
the shared CalDAV checks (caldav_suite.py, also run on the simulated SoC and
the LM3S port in QEMU), then what only the host build does: users given on
the command line, office data loaded and read back, and a restart on the same
--store file. About 30 s (most of it the first build).
"""
import pytest

from caldav_checks import HOME, Dav, ics, precondition, propfind, put, tag
from caldav_report_checks import report, sync
from caldav_suite import *  # noqa: F401,F403  (the shared CalDAV checks, run against this target)
from test_host_server import SANITIZER_REPORT, host_build, start_server, dav_target  # noqa: F401
from litedav.bench.office_data import user_items

EXTRA_USERS = ["alice:wonderland"] + [f"user{i:03d}:pw{i}" for i in range(5)]
KEEP = HOME + "keep/"  # what test_restart_keeps_everything finds again after the restart


@pytest.fixture(scope="module")
def store_file(tmp_path_factory):
    return str(tmp_path_factory.mktemp("caldav") / "store.flash")


def start(store_file):
    args = ["--store", store_file]
    for u in EXTRA_USERS:
        args += ["--user", u]
    srv = start_server(*args)
    return srv


@pytest.fixture(scope="module")
def server(host_build, store_file):
    srv = start(store_file)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


def test_users_from_the_command_line(target):
    """A user given with --user next to the compiled-in demo user: each sees only their own tree."""
    alice = Dav(target, "alice", "wonderland")
    assert Dav(target, "alice", "demo")("PROPFIND", "/dav/alice/", headers={"Depth": "0"}).status == 401
    assert alice("PROPFIND", HOME, headers={"Depth": "0"}).status == 403
    assert alice("GET", HOME + "work/x.ics").status == 403
    assert alice("PUT", HOME + "work/x.ics", ics("x")).status == 403
    assert alice("MKCALENDAR", "/dav/alice/cal/").status == 201
    assert put(alice, "/dav/alice/cal/x.ics", ics("x")).status == 201
    assert Dav(target)("GET", "/dav/alice/cal/x.ics").status == 403
    # /dav/ lists only the caller's own home
    assert sorted(propfind(alice, "/dav/", ["D:resourcetype"], depth="1")) == ["/dav/", "/dav/alice/"]
    r = alice("GET", "/.well-known/caldav")
    assert r.status == 301 and r.getheader("Location") == "/dav/alice/"


def test_office_data_round_trip(target):
    """5 users x 200 realistic items through PUT, read back by GET and by a
    calendar-query that returns calendar-data."""
    for i in range(5):
        user = f"user{i:03d}"
        dav = Dav(target, user, f"pw{i}")
        assert dav("MKCALENDAR", f"/dav/{user}/office/").status == 201
        items = user_items(user)
        for name, _, text in items:
            r = put(dav, f"/dav/{user}/office/{name}", text)
            assert r.status == 201, (name, r.status, r.data)
        for name, _, text in items[::20]:
            assert dav("GET", f"/dav/{user}/office/{name}").data.decode() == text
        body = ('<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
                '<D:getetag/><C:calendar-data/></D:prop><C:filter><C:comp-filter name="VCALENDAR">'
                '<C:comp-filter name="VTODO"/></C:comp-filter></C:filter></C:calendar-query>')
        got = report(dav, f"/dav/{user}/office/", body)
        todos = {f"/dav/{user}/office/{n}": t for n, k, t in items if k == "VTODO"}
        assert set(got) == set(todos)
        for href, entry in got.items():
            assert entry["props"][tag("C", "calendar-data")][1].text == todos[href]


def etags(listing):
    return {h: {k: (c, e.text) for k, (c, e) in v["props"].items()} for h, v in listing.items()}


def test_restart_keeps_everything(server, store_file, target):
    """Objects, ETags, properties (one set, one removed), a deletion and the sync history are all
    on the --store file: a new server on it answers as the old one did."""
    dav = Dav(target)
    assert dav("MKCALENDAR", KEEP).status == 201
    for n in range(4):
        assert put(dav, f"{KEEP}{n}.ics", ics(f"keep-{n}")).status == 201
    assert dav("DELETE", f"{KEEP}3.ics").status == 204
    patch = ('<D:propertyupdate xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set>'
             '<D:prop><D:displayname>Kept</D:displayname><C:calendar-description>Shared &amp; busy'
             '</C:calendar-description></D:prop></D:set></D:propertyupdate>')
    assert dav("PROPPATCH", KEEP, patch).status == 207
    remove = ('<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><D:displayname/></D:prop>'
              '</D:remove></D:propertyupdate>')
    assert dav("PROPPATCH", KEEP, remove).status == 207
    listing = propfind(dav, KEEP, ["D:getetag"], depth="1")
    assert len(listing) == 4
    _, token = sync(dav, KEEP)
    dav.close()

    code = server.stop()
    out = server.output()
    assert code == 0 and not SANITIZER_REPORT.search(out), out[-4000:]
    again = start(store_file)
    try:
        dav = Dav(dav_target(again))
        assert etags(propfind(dav, KEEP, ["D:getetag"], depth="1")) == etags(listing)
        for n in range(3):
            assert dav("GET", f"{KEEP}{n}.ics").data.decode() == ics(f"keep-{n}")
        assert dav("GET", f"{KEEP}3.ics").status == 404
        p = propfind(dav, KEEP, ["D:displayname", "C:calendar-description"])[KEEP]["props"]
        assert p[tag("D", "displayname")][0] == 404  # removed by the last PROPPATCH
        assert p[tag("C", "calendar-description")][1].text == "Shared & busy"
        # the token from before the restart is still valid and nothing changed since
        assert sync(dav, KEEP, token) == ({}, token)
        # the UID digests are RAM only: after the remount a duplicate UID is still found
        assert precondition(put(dav, f"{KEEP}dup.ics", ics("keep-2"))) == [tag("C", "no-uid-conflict")]
        assert dav("GET", "/dav/user004/office/user004-0199.ics").status == 403
        u4 = Dav(dav.target, "user004", "pw4")
        assert u4("GET", "/dav/user004/office/user004-0199.ics").data.decode() == \
            user_items("user004")[199][2]
    finally:
        again.stop()
        out = again.output()
    assert not SANITIZER_REPORT.search(out), out[-4000:]
