"""WebDAV COPY and MOVE (RFC 4918 sections 9.8, 9.9) against litedav-host: each status the
methods answer, the CalDAV checks a copy into a calendar passes like a PUT (RFC 4791 section
5.3.2.1), ETags and sync-collection reports of both collections (RFC 6578), collections, and
what a restart finds. The MOVE's atomicity across a power cut is tested on the store itself
(tests/host/test_store.c, test_move_power_cut)."""
import contextlib
import secrets

import pytest

from caldav_checks import HOME, Dav, calendar, ics, multistatus, precondition, propfind, put, responses, tag
from caldav_report_checks import sync
from test_host_server import host_build, start_server, dav_target  # noqa: F401


@pytest.fixture(scope="module")
def store_file(tmp_path_factory):
    return str(tmp_path_factory.mktemp("copymove") / "store.flash")


def start(store_file, *args):
    srv = start_server("--store", store_file, "--user", "alice:wonderland", *args)
    return srv


@pytest.fixture(scope="module")
def server(host_build, store_file):
    srv = start(store_file)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


@contextlib.contextmanager
def collection(dav, label):
    """A new plain WebDAV collection (MKCOL), deleted on the way out."""
    path = f"{HOME}{label}-{secrets.token_hex(3)}/"
    assert dav("MKCOL", path).status == 201
    try:
        yield path
    finally:
        dav("DELETE", path)


def copy(dav, method, src, dst, **headers):
    return dav(method, src, headers={"Destination": dst, **headers})


def body(dav, path):
    r = dav("GET", path)
    return r.status, r.data


def test_copy_move_statuses(target):
    dav = Dav(target)
    with collection(dav, "plain") as col, collection(Dav(target), "other") as other:
        src = f"{col}src.txt"
        assert dav("PUT", src, "source body").status == 201
        assert dav("PUT", f"{other}taken.txt", "taken").status == 201
        # 201 Created: nothing was there
        r = copy(dav, "COPY", src, f"{other}new.txt")
        assert r.status == 201, r.data
        assert body(dav, f"{other}new.txt") == (200, b"source body")
        assert body(dav, src) == (200, b"source body")
        # 204 No Content: overwritten (Overwrite defaults to T, section 10.6)
        r = copy(dav, "COPY", src, f"{other}taken.txt")
        assert r.status == 204, r.data
        assert body(dav, f"{other}taken.txt") == (200, b"source body")
        # 412: Overwrite F and the destination exists; nothing changes
        assert dav("PUT", f"{other}taken.txt", "taken").status == 204
        for method in ("COPY", "MOVE"):
            r = copy(dav, method, src, f"{other}taken.txt", Overwrite="F")
            assert r.status == 412, (method, r.status)
        assert body(dav, f"{other}taken.txt") == (200, b"taken")
        assert body(dav, src) == (200, b"source body")
        r = copy(dav, "COPY", src, f"{other}free.txt", Overwrite="F")
        assert r.status == 201
        # 409: the destination's parent collection does not exist
        for method in ("COPY", "MOVE"):
            r = copy(dav, method, src, f"{HOME}no-such-collection/x.txt")
            assert r.status == 409, (method, r.status)
        # 403: source and destination are the same
        for method in ("COPY", "MOVE"):
            assert copy(dav, method, src, src).status == 403, method
            assert copy(dav, method, col, col).status == 403, method
        # 502: a Destination on another server (another host, port or scheme)
        for dest in (f"http://elsewhere.example{other}x.txt",
                     f"http://127.0.0.1:{target.port + 1}{other}x.txt",
                     f"https://127.0.0.1:{target.port}{other}x.txt",
                     f"ftp://127.0.0.1:{target.port}{other}x.txt"):
            for method in ("COPY", "MOVE"):
                r = copy(dav, method, src, dest)
                assert r.status == 502, (method, dest, r.status)
                assert r.reason == "Bad Gateway"
        # an absolute URI of this server is fine (the scheme and host in any case)
        r = copy(dav, "COPY", src, f"http://127.0.0.1:{target.port}{other}abs.txt")
        assert r.status == 201, r.data
        r = copy(dav, "COPY", src, f"HTTP://127.0.0.1:{target.port}{other}abs.txt")
        assert r.status == 204, r.data
        # 403: outside the user's own DAV space (another user's, or not /dav/ at all)
        for dest in ("/dav/alice/x.txt", "/static/x.txt", "/dav/", HOME):
            for method in ("COPY", "MOVE"):
                r = copy(dav, method, src, dest)
                assert r.status == 403, (method, dest, r.status)
        # 400: no Destination, or a bad Overwrite
        assert dav("COPY", src).status == 400
        assert copy(dav, "COPY", src, f"{other}y.txt", Overwrite="maybe").status == 400
        # 404: no source
        assert copy(dav, "MOVE", f"{col}none.txt", f"{other}y.txt").status == 404
        # 412: a conditional header about the source fails
        r = copy(dav, "MOVE", src, f"{other}y.txt", **{"If-Match": '"00000000"'})
        assert r.status == 412
        # MOVE: the source goes, the destination has its body
        r = copy(dav, "MOVE", src, f"{other}moved.txt")
        assert r.status == 201, r.data
        assert dav("GET", src).status == 404
        assert body(dav, f"{other}moved.txt") == (200, b"source body")
        r = copy(dav, "MOVE", f"{other}moved.txt", f"{other}taken.txt")
        assert r.status == 204
        assert dav("GET", f"{other}moved.txt").status == 404
        assert body(dav, f"{other}taken.txt") == (200, b"source body")
    dav.close()


def test_allow_lists_copy_and_move(target):
    dav = Dav(target)
    for path in (HOME, "/dav/"):
        r = dav("OPTIONS", path)
        allow = {m.strip() for m in r.getheader("Allow").split(",")}
        assert {"COPY", "MOVE"} <= allow, allow
    r = dav("POST", HOME)  # a method /dav/ does not take: 405 with the same Allow list
    assert r.status == 405
    assert {"COPY", "MOVE"} <= {m.strip() for m in r.getheader("Allow").split(",")}
    dav.close()


def test_copy_into_calendar_is_checked(target):
    """RFC 4791 section 5.3.2.1: what a COPY or MOVE puts into a calendar passes the checks of a
    PUT: valid calendar data, one resource per UID."""
    dav = Dav(target)
    with calendar(dav, "cmcal") as cal, calendar(Dav(target), "cmcal2") as cal2, \
            collection(Dav(target), "plain") as col:
        assert dav("PUT", f"{col}junk.ics", "not a calendar").status == 201
        for method in ("COPY", "MOVE"):
            r = copy(dav, method, f"{col}junk.ics", f"{cal}junk.ics")
            assert precondition(r) == [tag("C", "valid-calendar-data")], method
        assert dav("GET", f"{col}junk.ics").status == 200
        assert put(dav, f"{cal}a.ics", ics("uid-a")).status == 201
        # a copy in the same calendar repeats the UID
        r = copy(dav, "COPY", f"{cal}a.ics", f"{cal}b.ics")
        assert precondition(r) == [tag("C", "no-uid-conflict")]
        # into another calendar that has the UID under another name: refused
        assert put(dav, f"{cal2}other.ics", ics("uid-a")).status == 201
        r = copy(dav, "MOVE", f"{cal}a.ics", f"{cal2}a.ics")
        assert precondition(r) == [tag("C", "no-uid-conflict")]
        # over the very resource that has it: fine
        r = copy(dav, "COPY", f"{cal}a.ics", f"{cal2}other.ics")
        assert r.status == 204, r.data
        # a MOVE inside one calendar (a rename) keeps the one UID
        r = copy(dav, "MOVE", f"{cal}a.ics", f"{cal}renamed.ics")
        assert r.status == 201, r.data
        assert dav("GET", f"{cal}a.ics").status == 404
        r = dav("GET", f"{cal}renamed.ics")
        assert r.status == 200 and r.getheader("Content-Type").startswith("text/calendar")
        # a valid calendar object from a plain collection into a calendar
        assert dav("PUT", f"{col}ev.ics", ics("uid-plain")).status == 201
        assert copy(dav, "MOVE", f"{col}ev.ics", f"{cal}ev.ics").status == 201
    dav.close()


def test_etags_and_sync_of_both_collections(target):
    """A MOVE changes both collections as a DELETE and a PUT would (RFC 6578): the source's
    sync-collection reports the member gone (404), the destination's reports the new one with
    its new ETag, which GET and PROPFIND agree on."""
    dav = Dav(target)
    with calendar(dav, "syncsrc") as src, calendar(Dav(target), "syncdst") as dst:
        r = put(dav, f"{src}m.ics", ics("uid-m"))
        etag = r.getheader("ETag")
        _, t_src = sync(dav, src)
        _, t_dst = sync(dav, dst)
        ctag_src = propfind(dav, src, ["CS:getctag"])[src]["props"][tag("CS", "getctag")][1].text
        assert copy(dav, "MOVE", f"{src}m.ics", f"{dst}m.ics").status == 201
        got, _ = sync(dav, src, t_src)
        assert got == {f"{src}m.ics": {"status": 404, "props": {}}}, got
        got, _ = sync(dav, dst, t_dst)
        assert list(got) == [f"{dst}m.ics"]
        new_etag = got[f"{dst}m.ics"]["props"][tag("D", "getetag")][1].text
        assert new_etag != etag
        assert dav("GET", f"{dst}m.ics").getheader("ETag") == new_etag
        assert propfind(dav, src, ["CS:getctag"])[src]["props"][tag("CS", "getctag")][1].text != ctag_src
        # COPY: only the destination changes
        _, t_src = sync(dav, src)
        _, t_dst = sync(dav, dst)
        assert copy(dav, "COPY", f"{dst}m.ics", f"{src}back.ics").status == 201
        got, _ = sync(dav, dst, t_dst)
        assert got == {}
        got, _ = sync(dav, src, t_src)
        assert list(got) == [f"{src}back.ics"]
    dav.close()


def test_collections(target):
    """COPY of a collection with Depth 0 (the collection alone) and infinity (members and the
    collections below); MOVE (Depth infinity only) renames the tree, members and properties
    kept; Overwrite T replaces a destination collection, F refuses it."""
    dav = Dav(target)
    with collection(dav, "tree") as tree:
        src = f"{tree}src/"
        assert dav("MKCOL", src).status == 201
        assert dav("MKCOL", f"{src}sub/").status == 201
        assert dav("PUT", f"{src}a.txt", "a").status == 201
        assert dav("PUT", f"{src}sub/b.txt", "b").status == 201
        # Depth 1 is not a COPY depth; a MOVE of a collection is infinity only; refused
        # before an existing destination is touched
        assert copy(dav, "COPY", src, f"{tree}d1/", Depth="1").status == 400
        assert copy(dav, "MOVE", src, f"{tree}d0/", Depth="0").status == 400
        assert dav("PUT", f"{tree}kept.txt", "kept").status == 201
        assert copy(dav, "MOVE", src, f"{tree}kept.txt", Depth="0").status == 400
        assert copy(dav, "COPY", src, f"{tree}kept.txt", Depth="1").status == 400
        assert body(dav, f"{tree}kept.txt") == (200, b"kept")
        # a collection over an object: the object goes
        assert copy(dav, "COPY", src, f"{tree}kept.txt", Depth="0").status == 204
        assert dav("GET", f"{tree}kept.txt").status == 405  # a collection now
        assert dav("PROPFIND", f"{tree}kept.txt/", headers={"Depth": "0"}).status == 207
        # into itself
        assert copy(dav, "COPY", src, f"{src}sub/inner/").status == 403
        assert copy(dav, "COPY", src, f"{tree}shallow/", Depth="0").status == 201
        assert dav("GET", f"{tree}shallow/a.txt").status == 404
        assert dav("PROPFIND", f"{tree}shallow/", headers={"Depth": "0"}).status == 207
        assert copy(dav, "COPY", src, f"{tree}deep/").status == 201
        assert body(dav, f"{tree}deep/a.txt") == (200, b"a")
        assert body(dav, f"{tree}deep/sub/b.txt") == (200, b"b")
        assert body(dav, f"{src}sub/b.txt") == (200, b"b")
        # Overwrite F onto a collection; T replaces it (its old members go)
        assert copy(dav, "MOVE", src, f"{tree}shallow/", Overwrite="F").status == 412
        assert dav("PUT", f"{tree}shallow/old.txt", "old").status == 201
        assert copy(dav, "MOVE", src, f"{tree}shallow/").status == 204
        assert dav("GET", f"{tree}shallow/old.txt").status == 404
        assert body(dav, f"{tree}shallow/sub/b.txt") == (200, b"b")
        assert dav("PROPFIND", src, headers={"Depth": "0"}).status == 404
        assert dav("GET", f"{src}sub/b.txt").status == 404
        # a collection cannot go where its parent is missing, nor into a calendar
        assert copy(dav, "COPY", f"{tree}deep/", f"{tree}none/deep/").status == 409
        with calendar(Dav(target), "nocoll") as cal, calendar(Dav(target), "inner") as cal2:
            assert copy(dav, "COPY", f"{tree}deep/", f"{cal}deep/").status == 403
            # a calendar into a calendar: RFC 4791 section 5.3.2.1
            r = copy(dav, "MOVE", cal2, f"{cal}inner/")
            assert precondition(r) == [tag("C", "calendar-collection-location-ok")]
    dav.close()


def test_calendar_move_keeps_properties(target):
    dav = Dav(target)
    with calendar(dav, "props") as cal:
        body_ = (f'<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:displayname>Work</D:displayname>'
                 f'</D:prop></D:set></D:propertyupdate>')
        assert dav("PROPPATCH", cal, body_).status == 207
        assert put(dav, f"{cal}e.ics", ics("uid-e")).status == 201
        moved = cal[:-1] + "-moved/"
        assert copy(dav, "MOVE", cal, moved).status == 201
        try:
            props = propfind(dav, moved, ["D:displayname", "D:resourcetype"])[moved]["props"]
            assert props[tag("D", "displayname")][1].text == "Work"
            assert props[tag("D", "resourcetype")][1].find("C:calendar", {"C": "urn:ietf:params:xml:ns:caldav"}) \
                is not None
            assert dav("GET", f"{moved}e.ics").status == 200
        finally:
            assert copy(dav, "MOVE", moved, cal).status == 201
    dav.close()


def test_full_store_507(host_build, tmp_path):
    """507 Insufficient Storage when the copy does not fit (RFC 4918 section 11.5)."""
    srv = start(str(tmp_path / "small.flash"), "--store-size", "1")
    try:
        target = dav_target(srv)
        dav = Dav(target)
        assert dav("MKCOL", f"{HOME}full/").status == 201
        big = "x" * 60000
        for i in range(40):
            r = dav("PUT", f"{HOME}full/{i}.bin", big)
            if r.status == 507:
                break
            assert r.status == 201, r.status
        else:
            pytest.fail("a 1 MiB store took 40 objects of 60 kB")
        for method in ("COPY", "MOVE"):
            r = copy(dav, method, f"{HOME}full/0.bin", f"{HOME}full/copy.bin")
            assert r.status == 507, (method, r.status)
        assert dav("GET", f"{HOME}full/0.bin").status == 200
        assert dav("GET", f"{HOME}full/copy.bin").status == 404
        dav.close()
    finally:
        srv.stop()


def test_collection_copy_that_runs_out_of_room_is_207(host_build, tmp_path):
    """A collection's COPY whose member does not fit, once the destination collection is made: a
    207 naming that member's destination with 507 (RFC 4918 section 9.8.8: an error on a resource
    other than the Request-URI), the members copied before it there, the source untouched."""
    srv = start(str(tmp_path / "small.flash"), "--store-size", "1")
    try:
        target = dav_target(srv)
        dav = Dav(target)
        big = "x" * 60000
        names = [f"{i}.bin" for i in range(6)]
        assert dav("MKCOL", f"{HOME}src/").status == 201
        for n in names:
            assert dav("PUT", f"{HOME}src/{n}", big).status == 201
        assert dav("MKCOL", f"{HOME}fill/").status == 201
        for i in range(40):
            r = dav("PUT", f"{HOME}fill/{i}.bin", big)
            if r.status == 507:
                break
            assert r.status == 201, r.status
        else:
            pytest.fail("a 1 MiB store took 40 more objects of 60 kB")
        for j in range(2):  # room for about two of the six
            assert dav("DELETE", f"{HOME}fill/{j}.bin").status == 204
        r = copy(dav, "COPY", f"{HOME}src/", f"{HOME}dst/")
        got = responses(multistatus(r))
        assert len(got) == 1, got
        (href, entry), = got.items()
        assert href.startswith(f"{HOME}dst/") and href[len(f"{HOME}dst/"):] in names, href
        assert entry["status"] == 507
        copied = [n for n in names if dav("GET", f"{HOME}dst/{n}").status == 200]
        assert copied and len(copied) < len(names) and f"{HOME}dst/{copied[0]}" != href
        assert dav("GET", href).status == 404
        assert all(dav("GET", f"{HOME}src/{n}").status == 200 for n in names)
        dav.close()
    finally:
        srv.stop()


def test_restart_keeps_moves(host_build, tmp_path):
    """What a MOVE did is what the store replays after a restart."""
    store = str(tmp_path / "restart.flash")
    srv = start(store)
    try:
        dav = Dav(dav_target(srv))
        assert dav("MKCALENDAR", f"{HOME}r/").status == 201
        assert put(dav, f"{HOME}r/a.ics", ics("uid-r")).status == 201
        assert copy(dav, "MOVE", f"{HOME}r/a.ics", f"{HOME}r/b.ics").status == 201
        etag = dav("GET", f"{HOME}r/b.ics").getheader("ETag")
        assert copy(dav, "MOVE", f"{HOME}r/", f"{HOME}r2/").status == 201
        dav.close()
    finally:
        srv.stop()
    srv = start(store)
    try:
        dav = Dav(dav_target(srv))
        assert dav("GET", f"{HOME}r2/a.ics").status == 404
        r = dav("GET", f"{HOME}r2/b.ics")
        assert r.status == 200 and r.getheader("ETag") == etag
        assert dav("PROPFIND", f"{HOME}r/", headers={"Depth": "0"}).status == 404
        dav.close()
    finally:
        srv.stop()
