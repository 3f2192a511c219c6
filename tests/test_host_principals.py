"""Principal search (RFC 3744) against litedav-host: DAV:principal-collection-set on every
resource (section 5.8), the principal-search-property-set REPORT (section 9.5) and the
principal-property-search REPORT (section 9.4: property-search with caseless substring match,
test="anyof"/"allof", DAV:prop, apply-to-principal-collection-set, Depth 0 only), each user finding
their own principal and no one else's, and 400 with a reason for what the sections do not allow.
A second user (--user) shows what one user's search cannot see."""
import xml.etree.ElementTree as ET

import pytest

from caldav_checks import HOME, NS, Dav, calendar, ics, multistatus, propfind, put, responses, tag
from test_host_server import host_build, start_server, dav_target  # noqa: F401

OTHER, OTHER_PASSWORD = "bob", "bob-secret"
OTHER_HOME = f"/dav/{OTHER}/"
ADDRESS_SET = "urn:ietf:params:xml:ns:caldav"


@pytest.fixture(scope="module")
def server(host_build):
    srv = start_server("--user", f"{OTHER}:{OTHER_PASSWORD}")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


def search(dav, path, searches="", props="<D:displayname/>", attrs="", tail="", depth="0"):
    """A principal-property-search REPORT; searches: ((props xml, match), ...) or raw xml."""
    if not isinstance(searches, str):
        searches = "".join(f"<D:property-search><D:prop>{p}</D:prop><D:match>{m}</D:match></D:property-search>"
                           for p, m in searches)
    prop = "" if props is None else f"<D:prop>{props}</D:prop>"
    body = (f'<?xml version="1.0"?><D:principal-property-search xmlns:D="DAV:" xmlns:C="{ADDRESS_SET}"'
            f'{attrs}>{searches}{prop}{tail}</D:principal-property-search>')
    return dav("REPORT", path, body, {"Depth": depth, "Content-Type": "application/xml"})


def found(r):
    """The hrefs of a search's 207 and their displaynames."""
    out = {}
    for href, entry in responses(multistatus(r)).items():
        name = entry["props"].get(tag("D", "displayname"))
        out[href] = name[1].text if name and name[0] == 200 else None
    return out


def bad(r, words):
    assert r.status == 400, (r.status, r.data)
    assert words in r.data.decode(), r.data


# ---- section 5.8 -------------------------------------------------------------------------------

def test_principal_collection_set_on_every_resource(target):
    """Section 5.8: the collection holding the principals, /dav/, on the root, a home (the
    principal), a calendar and a calendar object."""
    dav = Dav(target)
    with calendar(dav, "pcs") as cal:
        assert put(dav, cal + "e.ics", ics("pcs-e")).status == 201
        for path in ("/dav/", HOME, cal, cal + "e.ics"):
            props = propfind(dav, path, ["D:principal-collection-set"])[path]["props"]
            code, el = props[tag("D", "principal-collection-set")]
            assert code == 200, path
            assert [h.text for h in el.findall("D:href", NS)] == ["/dav/"], path


# ---- section 9.5 -------------------------------------------------------------------------------

def test_principal_search_property_set(target):
    """Section 9.5: a DAV:principal-search-property-set body (200, not a multistatus) naming each
    searchable property with a description; only Depth 0 and an empty request element."""
    dav = Dav(target)
    body = '<?xml version="1.0"?><D:principal-search-property-set xmlns:D="DAV:"/>'
    r = dav("REPORT", "/dav/", body, {"Depth": "0"})
    assert r.status == 200, (r.status, r.data)
    assert r.getheader("Content-Type").startswith("application/xml")
    root = ET.fromstring(r.data)
    assert root.tag == tag("D", "principal-search-property-set")
    listed = {}
    for psp in root.findall("D:principal-search-property", NS):
        names = [p.tag for p in psp.find("D:prop", NS)]
        assert len(names) == 1
        desc = psp.find("D:description", NS)
        assert desc is not None and desc.text and desc.text.strip()
        listed[names[0]] = desc.text
    assert set(listed) == {tag("D", "displayname"), tag("C", "calendar-user-address-set")}
    # the same from the principal itself; refused with Depth 1 or a non-empty request
    assert dav("REPORT", HOME, body, {"Depth": "0"}).data == r.data
    bad(dav("REPORT", "/dav/", body, {"Depth": "1"}), "Depth: 0")
    bad(dav("REPORT", "/dav/", '<D:principal-search-property-set xmlns:D="DAV:"><D:prop/>'
            '</D:principal-search-property-set>', {"Depth": "0"}), "Depth: 0")


# ---- section 9.4 -------------------------------------------------------------------------------

def test_search_by_displayname(target):
    """Section 9.4: a substring of DAV:displayname, matched caselessly, finds the user's principal
    with the properties DAV:prop asks for; one that is not in it finds nothing."""
    dav = Dav(target)
    for match in ("demo", "EM", "d", " Mo "):  # the match string's white space is trimmed
        r = search(dav, "/dav/", [("<D:displayname/>", match)],
                   props="<D:displayname/><C:calendar-home-set/><D:getetag/>")
        got = responses(multistatus(r))
        assert list(got) == [HOME], match
        props = got[HOME]["props"]
        assert props[tag("D", "displayname")][1].text == "demo"
        assert props[tag("C", "calendar-home-set")][1].find("D:href", NS).text == HOME
        assert props[tag("D", "getetag")][0] == 404  # a principal has none (RFC 4918 section 9.1)
    for match in ("demox", "bob", "dmo"):
        assert found(search(dav, "/dav/", [("<D:displayname/>", match)])) == {}, match


def test_search_by_calendar_user_address(target):
    """The other searchable property: CALDAV:calendar-user-address-set (the principal's URL)."""
    dav = Dav(target)
    assert found(search(dav, "/dav/", [("<C:calendar-user-address-set/>", "/DAV/demo/")])) == {HOME: "demo"}
    assert found(search(dav, "/dav/", [("<C:calendar-user-address-set/>", OTHER_HOME)])) == {}


def test_search_test_attribute(target):
    """test="allof" (the default) needs every property-search to match, test="anyof" one of them;
    the properties of one property-search must all match."""
    dav = Dav(target)
    hit, miss = ("<D:displayname/>", "dem"), ("<D:displayname/>", "nobody")
    assert found(search(dav, "/dav/", [hit, miss])) == {}
    assert found(search(dav, "/dav/", [hit, miss], attrs=' test="allof"')) == {}
    assert found(search(dav, "/dav/", [hit, miss], attrs=' test="anyof"')) == {HOME: "demo"}
    assert found(search(dav, "/dav/", [miss, miss], attrs=' test="anyof"')) == {}
    assert found(search(dav, "/dav/", [hit, ("<C:calendar-user-address-set/>", "/dav/")])) == {HOME: "demo"}
    both = "<D:displayname/><C:calendar-user-address-set/>"
    assert found(search(dav, "/dav/", [(both, "demo")])) == {HOME: "demo"}
    assert found(search(dav, "/dav/", [(both, "/dav/")])) == {}  # not in the displayname


def test_list_all_sees_only_oneself(target):
    """No property-search lists every principal the user may see: their own. Another user's
    principal is not disclosed (the server answers 403 for another's tree)."""
    demo, bob = Dav(target), Dav(target, OTHER, OTHER_PASSWORD)
    assert found(search(demo, "/dav/")) == {HOME: "demo"}
    assert found(search(bob, "/dav/")) == {OTHER_HOME: OTHER}
    assert found(search(demo, "/dav/", [("<D:displayname/>", OTHER)])) == {}
    assert demo("PROPFIND", OTHER_HOME, None, {"Depth": "0"}).status == 403


def test_search_scope(target):
    """Without apply-to-principal-collection-set the Request-URI and its members are searched: the
    principal from /dav/, the server's root and the home, not from a calendar; with it, the
    principal collection /dav/ wherever the REPORT is sent."""
    dav = Dav(target)
    with calendar(dav, "scope") as cal:
        for path in ("/dav/", "/", HOME):
            assert found(search(dav, path)) == {HOME: "demo"}, path
        assert found(search(dav, cal)) == {}
        apply = "<D:apply-to-principal-collection-set/>"
        assert found(search(dav, cal, tail=apply)) == {HOME: "demo"}
        assert found(search(dav, cal, [("<D:displayname/>", "de")], tail=apply)) == {HOME: "demo"}


def test_search_without_prop_and_python_caldav_form(target):
    """No DAV:prop: the principal's allprop properties. python-caldav's search_principals names
    the properties beside an empty DAV:prop: they are returned as DAV:prop's."""
    dav = Dav(target)
    props = responses(multistatus(search(dav, "/dav/", props=None)))[HOME]["props"]
    assert props[tag("D", "displayname")][1].text == "demo"
    assert tag("D", "resourcetype") in props
    r = search(dav, "/", [("<D:displayname/>", "demo")], props="",
               tail="<C:calendar-home-set/><D:displayname/>")
    props = responses(multistatus(r))[HOME]["props"]
    assert set(props) == {tag("C", "calendar-home-set"), tag("D", "displayname")}
    assert props[tag("C", "calendar-home-set")][1].find("D:href", NS).text == HOME
    # an empty DAV:prop followed by apply-to-principal-collection-set stays empty
    r = search(dav, "/dav/", props="", tail="<D:apply-to-principal-collection-set/>")
    entry = responses(multistatus(r))[HOME]
    assert entry["props"] == {}


def test_search_bad_requests(target):
    """400 with a reason: another Depth (the section defines Depth 0 only), a property-search
    without prop or match, a property that is not searchable, a test that is neither anyof nor
    allof."""
    dav = Dav(target)
    bad(search(dav, "/dav/", depth="1"), "Depth: 0")
    bad(search(dav, "/dav/", "<D:property-search><D:match>x</D:match></D:property-search>"), "prop and a match")
    bad(search(dav, "/dav/", "<D:property-search><D:prop><D:displayname/></D:prop></D:property-search>"),
        "prop and a match")
    bad(search(dav, "/dav/", "<D:property-search><D:prop/><D:match>x</D:match></D:property-search>"),
        "prop and a match")
    bad(search(dav, "/dav/", [("<D:getetag/>", "x")]), "Not a searchable property")
    bad(search(dav, "/dav/", [("<D:displayname/><D:owner/>", "x")]), "Not a searchable property")
    bad(search(dav, "/dav/", attrs=' test="some"'), "anyof or allof")
    # a Request-URI that does not exist
    assert search(dav, HOME + "no-such-collection/").status == 404
    assert dav("REPORT", HOME + "none.ics", '<D:principal-search-property-set xmlns:D="DAV:"/>',
               {"Depth": "0"}).status == 404
