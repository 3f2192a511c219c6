"""Dead properties (RFC 4918 section 4) against litedav-host: PROPPATCH set and remove
(section 9.2) on objects and collections, PROPFIND prop / allprop / propname (section 9.1)
returning them with their XML values (namespaces, attributes, xml:lang, section 4.3), all or
none (424 Failed Dependency, 403 for protected properties, section 16), 507 at the store's
limits, DELETE removing them, COPY and MOVE carrying them (sections 9.8, 9.9), responses kept
rendered (dav_fragments.c) never standing in for them, and a restart finding them (also through
firmware/tools/store_image.py, the independent reader of the format). The store's own tests of
the property lists, power cuts included, are tests/host/test_store.c and torture_store.c."""
import contextlib
import os
import secrets
import sys

import pytest

from caldav_checks import HOME, Dav, calendar, ics, multistatus, propfind, put, responses, tag
from caldav_report_checks import report, sync
from http_checks import TOP
from test_host_server import SANITIZER_REPORT, host_build, start_server, dav_target  # noqa: F401

sys.path.insert(0, os.path.join(TOP, "firmware", "tools"))
import store_image  # noqa: E402

NSX = "urn:x-test"       # caldav_checks.XMLNS declares it as X
NSZ = "http://ns.example.com/z/"
PROPS_MAX = 1024         # store.h STORE_PROPS_MAX: an object's property list


def x(name):
    return "{%s}%s" % (NSX, name)


@pytest.fixture(scope="module")
def store_file(tmp_path_factory):
    return str(tmp_path_factory.mktemp("deadprops") / "store.flash")


def start(store_file):
    srv = start_server("--store", store_file)
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


def patch(dav, path, *instructions, xmlns=f'xmlns:D="DAV:" xmlns:X="{NSX}"'):
    """PROPPATCH with ("set"|"remove", "<prop xml>") instructions: {tag: status}."""
    body = f'<?xml version="1.0"?><D:propertyupdate {xmlns}>' + "".join(
        f"<D:{op}><D:prop>{props}</D:prop></D:{op}>" for op, props in instructions) + "</D:propertyupdate>"
    r = dav("PROPPATCH", path, body)
    return {t: code for t, (code, _) in responses(multistatus(r))[path]["props"].items()}


def found(dav, path, *names, depth="0"):
    """PROPFIND of X: names: {name: element or None (404)} of path."""
    props = propfind(dav, path, [f"X:{n}" for n in names], depth)[path]["props"]
    return {n: props[x(n)][1] if props[x(n)][0] == 200 else None for n in names}


def whole(dav, path, mode, depth="0"):
    """PROPFIND allprop or propname: {tag: element} of the 200 propstat of each resource."""
    r = dav("PROPFIND", path, f'<D:propfind xmlns:D="DAV:"><D:{mode}/></D:propfind>', {"Depth": depth})
    return {href: {t: el for t, (code, el) in e["props"].items() if code == 200}
            for href, e in responses(multistatus(r)).items()}


def etag_of(dav, path):
    return dav("HEAD", path).getheader("ETag")


def test_set_get_remove_on_objects_and_collections(target):
    dav = Dav(target)
    with collection(dav, "plain") as col, calendar(Dav(target), "cal") as cal:
        obj = f"{col}a.txt"
        event = f"{cal}e.ics"
        assert dav("PUT", obj, "body").status == 201
        assert put(dav, event, ics("dead-1")).status == 201
        for path in (obj, event, col, cal):
            codes = patch(dav, path, ("set", "<X:one>first</X:one><X:two>second</X:two>"))
            assert codes == {x("one"): 200, x("two"): 200}, (path, codes)
            got = found(dav, path, "one", "two", "three")
            assert got["one"].text == "first" and got["two"].text == "second" and got["three"] is None
            # allprop and propname include them (sections 9.1, 14.2)
            every = whole(dav, path, "allprop")[path]
            assert every[x("one")].text == "first" and every[x("two")].text == "second"
            names = whole(dav, path, "propname")[path]
            assert x("one") in names and len(names[x("one")]) == 0 and not names[x("one")].text
            # replace one, remove the other (and one that is not there: still 200)
            codes = patch(dav, path, ("set", "<X:one>replaced</X:one>"), ("remove", "<X:two/><X:never/>"))
            assert set(codes.values()) == {200}, codes
            got = found(dav, path, "one", "two")
            assert got["one"].text == "replaced" and got["two"] is None
        # a Depth 1 listing shows each member's own
        assert dav("PUT", f"{col}b.txt", "b").status == 201
        assert patch(dav, f"{col}b.txt", ("set", "<X:one>b</X:one>")) == {x("one"): 200}
        listing = propfind(dav, col, ["X:one", "D:getetag"], depth="1")
        assert listing[obj]["props"][x("one")][1].text == "replaced"
        assert listing[f"{col}b.txt"]["props"][x("one")][1].text == "b"
        assert listing[col]["props"][x("one")][1].text == "replaced"
    dav.close()


def test_values_keep_their_xml(target):
    """Section 4.3: the value's elements, their namespaces and attributes, xml:lang (on the property
    or inherited), escaped characters and any Unicode come back as they were set."""
    dav = Dav(target)
    with collection(dav, "xml") as col:
        obj = f"{col}a.txt"
        assert dav("PUT", obj, "body").status == 201
        value = ('<Z:Author xml:lang="de"><Z:Name a="1 &amp; &quot;2&quot;">Jim &lt;x&gt; &amp; Whitehead'
                 '</Z:Name><plain xmlns="">no namespace</plain><Y:other xmlns:Y="urn:y"><Y:deep/></Y:other>'
                 '</Z:Author><Z:empty/><Z:text>\U0001F600 \u00e9t\u00e9  spaced  </Z:text>')
        codes = patch(dav, obj, ("set", value),
                      xmlns=f'xmlns:D="DAV:" xmlns:Z="{NSZ}" xml:lang="en"')
        assert set(codes.values()) == {200}
        r = dav("PROPFIND", obj, f'<D:propfind xmlns:D="DAV:"><D:prop><Z:Author xmlns:Z="{NSZ}"/>'
                f'<Z:empty xmlns:Z="{NSZ}"/><Z:text xmlns:Z="{NSZ}"/></D:prop></D:propfind>', {"Depth": "0"})
        props = responses(multistatus(r))[obj]["props"]
        lang = "{http://www.w3.org/XML/1998/namespace}lang"
        author = props["{%s}Author" % NSZ][1]
        assert author.get(lang) == "de"
        name, plain, other = list(author)
        assert name.tag == "{%s}Name" % NSZ and name.text == "Jim <x> & Whitehead"
        assert name.get("a") == '1 & "2"'
        assert plain.tag == "plain" and plain.text == "no namespace"
        assert other.tag == "{urn:y}other" and [c.tag for c in other] == ["{urn:y}deep"]
        empty = props["{%s}empty" % NSZ][1]
        assert empty.get(lang) == "en" and len(empty) == 0 and not empty.text  # inherited xml:lang
        assert props["{%s}text" % NSZ][1].text == "\U0001F600 \u00e9t\u00e9  spaced  "
    dav.close()


def test_all_or_none(target):
    """Section 9.2: one instruction that cannot be done leaves everything as it was; it gets its own
    status (403, DAV:cannot-modify-protected-property, section 16), the others 424."""
    dav = Dav(target)
    with collection(dav, "atomic") as col:
        obj = f"{col}a.txt"
        assert dav("PUT", obj, "body").status == 201
        for path in (obj, col):
            assert set(patch(dav, path, ("set", "<X:kept>old</X:kept><X:gone>here</X:gone>")).values()) == {200}
            body = (f'<D:propertyupdate xmlns:D="DAV:" xmlns:X="{NSX}"><D:set><D:prop><X:kept>new</X:kept>'
                    '<X:added>1</X:added></D:prop></D:set><D:remove><D:prop><X:gone/></D:prop></D:remove>'
                    '<D:set><D:prop><D:getetag>"x"</D:getetag><D:getlastmodified>now</D:getlastmodified>'
                    '</D:prop></D:set></D:propertyupdate>')
            r = dav("PROPPATCH", path, body)
            tree = multistatus(r)
            codes = {t: c for t, (c, _) in responses(tree)[path]["props"].items()}
            assert codes == {x("kept"): 424, x("added"): 424, x("gone"): 424,
                             tag("D", "getetag"): 403, tag("D", "getlastmodified"): 403}, codes
            errors = [e.tag for e in tree.iter("{DAV:}cannot-modify-protected-property")]
            assert len(errors) == 2, r.data
            got = found(dav, path, "kept", "added", "gone")
            assert got["kept"].text == "old" and got["added"] is None and got["gone"].text == "here"
        # resourcetype is protected too
        codes = patch(dav, col, ("set", "<X:a>1</X:a><D:resourcetype/>"))
        assert codes == {x("a"): 424, tag("D", "resourcetype"): 403}
        # the root and the homes keep no properties
        codes = patch(dav, HOME, ("set", "<X:a>1</X:a>"))
        assert codes == {x("a"): 403}
    dav.close()


def test_insufficient_storage_at_the_limit(target):
    """Section 9.2.1: 507 for the property that does not fit (an object's list holds
    STORE_PROPS_MAX bytes, a collection's shares its 1 KiB record with its owner and path), 424
    for the others, and nothing changes. Below the limit it fits."""
    dav = Dav(target)
    with collection(dav, "limit") as col:
        obj = f"{col}a.txt"
        assert dav("PUT", obj, "body").status == 201
        for path in (obj, col):
            assert set(patch(dav, path, ("set", "<X:small>s</X:small>")).values()) == {200}
            big = "v" * 400
            codes = patch(dav, path, ("set", f"<X:b1>{big}</X:b1><X:b2>{big}</X:b2><X:b3>{big}</X:b3>"))
            assert codes == {x("b1"): 424, x("b2"): 424, x("b3"): 507}, (path, codes)
            got = found(dav, path, "small", "b1", "b2", "b3")
            assert got["small"].text == "s" and got["b1"] is None and got["b2"] is None
        # an object's list up to its limit: entry heads (3), names and lengths (1 + 9 + 1 + 1 + 1)
        value = "w" * (PROPS_MAX - 3 - 1 - len(NSX) - 1 - 4 - 1 - (3 + 1 + len(NSX) + 1 + 5 + 1 + 1))
        codes = patch(dav, obj, ("set", f"<X:fill>{value}</X:fill>"))
        assert codes == {x("fill"): 200}, codes
        assert found(dav, obj, "fill")["fill"].text == value
        codes = patch(dav, obj, ("set", "<X:one-more>1</X:one-more>"))
        assert codes == {x("one-more"): 507}
        # a name longer than 255 bytes cannot be kept
        codes = patch(dav, obj, ("set", f"<X:{'n' * 256}>1</X:{'n' * 256}>"))
        assert list(codes.values()) == [507]
    dav.close()


def test_malformed_bodies_change_nothing(target):
    dav = Dav(target)
    with collection(dav, "bad") as col:
        obj = f"{col}a.txt"
        assert dav("PUT", obj, "body").status == 201
        assert set(patch(dav, obj, ("set", "<X:p>ok</X:p>")).values()) == {200}
        for bad in (f'<D:propertyupdate xmlns:D="DAV:" xmlns:X="{NSX}"><D:set><D:prop><X:p><open>'
                    '</X:p></D:prop></D:set></D:propertyupdate>',
                    '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><Q:p>undeclared</Q:p></D:prop>'
                    '</D:set></D:propertyupdate>',
                    f'<D:propertyupdate xmlns:D="DAV:" xmlns:X="{NSX}"><D:set><D:prop><X:p>&bogus;</X:p>'
                    '</D:prop></D:set></D:propertyupdate>',
                    '<D:propfind xmlns:D="DAV:"/>'):
            r = dav("PROPPATCH", obj, bad)
            assert r.status == 400, (bad, r.status)
        assert found(dav, obj, "p")["p"].text == "ok"
    dav.close()


def test_objects_keep_etag_and_body_put_keeps_properties(target):
    """A PROPPATCH changes no byte of an object: its ETag stays (responses kept rendered for
    it stay right). The collection's sync token moves and a sync-collection lists the member. A
    PUT of a new body keeps the dead properties."""
    dav = Dav(target)
    with calendar(dav, "etag") as cal:
        event = f"{cal}e.ics"
        assert put(dav, event, ics("etag-1")).status == 201
        etag = etag_of(dav, event)
        _, token = sync(dav, cal)
        listing_body = '<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:getcontenttype/></D:prop></D:propfind>'
        listing = dav("PROPFIND", cal, listing_body, {"Depth": "1"}).data  # kept rendered
        assert set(patch(dav, event, ("set", "<X:note>one</X:note>")).values()) == {200}
        assert etag_of(dav, event) == etag
        assert dav("GET", event).data.decode() == ics("etag-1")
        assert dav("PROPFIND", cal, listing_body, {"Depth": "1"}).data == listing
        changed, _ = sync(dav, cal, token)
        assert list(changed) == [event]
        # the kept responses never stand in for a request naming a dead property
        for n in range(3):
            assert set(patch(dav, event, ("set", f"<X:note>v{n}</X:note>")).values()) == {200}
            r = propfind(dav, cal, ["D:getetag", "X:note"], depth="1")
            assert r[event]["props"][x("note")][1].text == f"v{n}"
            mget = ('<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" '
                    f'xmlns:X="{NSX}"><D:prop><D:getetag/><X:note/><C:calendar-data/></D:prop>'
                    f'<D:href>{event}</D:href></C:calendar-multiget>')
            r = report(dav, cal, mget)
            assert r[event]["props"][x("note")][1].text == f"v{n}"
        assert put(dav, event, ics("etag-1", extra="SUMMARY:changed\r\n")).status == 204
        assert etag_of(dav, event) != etag
        assert found(dav, event, "note")["note"].text == "v2"
    dav.close()


def test_delete_removes_them(target):
    dav = Dav(target)
    with collection(dav, "del") as col:
        obj = f"{col}a.txt"
        assert dav("PUT", obj, "body").status == 201
        assert set(patch(dav, obj, ("set", "<X:p>1</X:p>")).values()) == {200}
        assert dav("DELETE", obj).status == 204
        assert dav("PUT", obj, "again").status == 201
        assert found(dav, obj, "p")["p"] is None
        inner = f"{col}inner/"
        assert dav("MKCOL", inner).status == 201
        assert set(patch(dav, inner, ("set", "<X:p>1</X:p>")).values()) == {200}
        assert dav("DELETE", inner).status == 204
        assert dav("MKCOL", inner).status == 201
        assert found(dav, inner, "p")["p"] is None
    dav.close()


def test_copy_and_move_carry_them(target):
    dav = Dav(target)
    with collection(dav, "src") as col, collection(Dav(target), "dst") as dst:
        obj = f"{col}a.txt"
        assert dav("PUT", obj, "body").status == 201
        assert set(patch(dav, obj, ("set", "<X:p>object</X:p>")).values()) == {200}
        assert set(patch(dav, col, ("set", "<X:p>collection</X:p>")).values()) == {200}
        # objects: COPY (the source keeps them), MOVE, over an existing destination too
        assert dav("COPY", obj, headers={"Destination": f"{dst}copy.txt"}).status == 201
        assert dav("PUT", f"{dst}taken.txt", "taken").status == 201
        assert set(patch(dav, f"{dst}taken.txt", ("set", "<X:q>old</X:q>")).values()) == {200}
        assert dav("MOVE", f"{dst}copy.txt", headers={"Destination": f"{dst}taken.txt"}).status == 204
        got = found(dav, f"{dst}taken.txt", "p", "q")
        assert got["p"].text == "object" and got["q"] is None
        assert found(dav, obj, "p")["p"].text == "object"
        # collections: COPY Depth 0 and infinity, MOVE; the members' own come along
        for depth, name in (("0", "shallow"), ("infinity", "deep")):
            r = dav("COPY", col, headers={"Destination": f"{dst}{name}/", "Depth": depth})
            assert r.status == 201, r.data
            assert found(dav, f"{dst}{name}/", "p")["p"].text == "collection"
        assert dav("GET", f"{dst}shallow/a.txt").status == 404
        assert found(dav, f"{dst}deep/a.txt", "p")["p"].text == "object"
        r = dav("MOVE", f"{dst}deep/", headers={"Destination": f"{dst}moved/"})
        assert r.status == 201
        assert found(dav, f"{dst}moved/", "p")["p"].text == "collection"
        assert found(dav, f"{dst}moved/a.txt", "p")["p"].text == "object"
    dav.close()


def test_restart_keeps_them(server, store_file, target):
    """On the --store file: a new server answers as the old one did, and store_image.py finds the
    same properties in the image."""
    dav = Dav(target)
    col = f"{HOME}kept-deadprops/"
    assert dav("MKCOL", col).status == 201
    assert dav("PUT", f"{col}a.txt", "body").status == 201
    assert set(patch(dav, f"{col}a.txt", ("set", "<X:p>object</X:p>")).values()) == {200}
    assert set(patch(dav, col, ("set", "<X:p>collection</X:p>")).values()) == {200}
    etag = etag_of(dav, f"{col}a.txt")
    dav.close()

    code = server.stop()
    out = server.output()
    assert code == 0 and not SANITIZER_REPORT.search(out), out[-4000:]
    with open(store_file, "rb") as f:
        image = store_image.read_image(f.read())
    assert image["problems"] == []
    kept = image["collections"]["w" + col]
    assert [v.endswith(b"collection") for v in kept["dead_props"]] == [True]
    assert [v.endswith(b"object") for v in kept["object_dead_props"]["a.txt"]] == [True]
    assert '"%08x"' % kept["etags"]["a.txt"] == etag
    again = start(store_file)
    try:
        dav = Dav(dav_target(again))
        assert found(dav, f"{col}a.txt", "p")["p"].text == "object"
        assert found(dav, col, "p")["p"].text == "collection"
        assert etag_of(dav, f"{col}a.txt") == etag
        dav.close()
    finally:
        again.stop()
