"""CalDAV end to end against litedav-host (the whole firmware, ASan/UBSan):
the python `caldav` client as calendar apps use the protocol, raw HTTP checks
of every status and precondition, office data loaded and read back, and a
restart on the same --store file. About 30 s (most of it the first build).
"""
import base64
import datetime
import http.client
import re
import xml.etree.ElementTree as ET

import caldav
import pytest

from office_data import user_items
from test_host_server import SANITIZER_REPORT, TIMEOUT, HostServer, host_build  # noqa: F401
from litedav.sim.run import free_port

NS = {"D": "DAV:", "C": "urn:ietf:params:xml:ns:caldav", "CS": "http://calendarserver.org/ns/",
      "A": "http://apple.com/ns/ical/"}
EXTRA_USERS = ["alice:wonderland"] + [f"user{i:03d}:pw{i}" for i in range(5)]

RECURRING = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//test//EN\r
BEGIN:VEVENT\r
UID:weekly-1\r
DTSTAMP:20240101T000000Z\r
DTSTART:20240101T090000Z\r
DTEND:20240101T100000Z\r
RRULE:FREQ=WEEKLY;COUNT=10\r
EXDATE:20240108T090000Z\r
SUMMARY:Weekly sync\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:weekly-1\r
DTSTAMP:20240101T000000Z\r
RECURRENCE-ID:20240115T090000Z\r
DTSTART:20240116T140000Z\r
DTEND:20240116T150000Z\r
SUMMARY:Weekly sync (moved)\r
END:VEVENT\r
END:VCALENDAR\r
"""


def ics(uid, comp="VEVENT", start="20240301T100000Z", extra=""):
    times = f"DTSTART:{start}\r\nDTEND:{start[:9]}235900Z\r\n" if comp == "VEVENT" else f"DUE:{start}\r\n"
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:{comp}\r\nUID:{uid}\r\n"
            f"DTSTAMP:20240101T000000Z\r\n{times}SUMMARY:Item {uid}\r\n{extra}END:{comp}\r\n"
            "END:VCALENDAR\r\n")


class Dav:
    """Raw HTTP with Basic credentials on one keep-alive connection."""

    def __init__(self, port, user="demo", password="demo"):
        self.port = port
        self.auth = None if user is None else \
            "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)

    def __call__(self, method, path, body=None, headers=None):
        h = dict(headers or {})
        if self.auth:
            h["Authorization"] = self.auth
        if isinstance(body, str):
            body = body.encode()
        self.conn.request(method, path, body=body, headers=h)
        r = self.conn.getresponse()
        r.data = r.read()
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        return r


def multistatus(r):
    assert r.status == 207, (r.status, r.data)
    return ET.fromstring(r.data)


def responses(tree):
    """{href: {status-or-prop: ...}}: per href, the props per propstat status."""
    out = {}
    for resp in tree.findall("D:response", NS):
        href = resp.find("D:href", NS).text
        entry = {"status": None, "props": {}}
        st = resp.find("D:status", NS)
        if st is not None:
            entry["status"] = int(st.text.split()[1])
        for ps in resp.findall("D:propstat", NS):
            code = int(ps.find("D:status", NS).text.split()[1])
            for p in ps.find("D:prop", NS):
                entry["props"][p.tag] = (code, p)
        out[href] = entry
    return out


def propfind(dav, path, props, depth="0"):
    body = ('<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" '
            'xmlns:CS="http://calendarserver.org/ns/" xmlns:A="http://apple.com/ns/ical/" '
            'xmlns:X="urn:x-test"><D:prop>' + "".join(f"<{p}/>" for p in props) + "</D:prop></D:propfind>")
    return responses(multistatus(dav("PROPFIND", path, body, {"Depth": depth})))


def error_element(r):
    return [child.tag for child in ET.fromstring(r.data)]


def tag(ns, name):
    return "{%s}%s" % (NS[ns], name)


@pytest.fixture(scope="module")
def store_file(tmp_path_factory):
    return str(tmp_path_factory.mktemp("caldav") / "store.flash")


def start(store_file):
    args = ["--store", store_file]
    for u in EXTRA_USERS:
        args += ["--user", u]
    srv = HostServer(free_port(), *args)
    srv.wait_ready(timeout=TIMEOUT)
    return srv


@pytest.fixture(scope="module")
def server(host_build, store_file):
    srv = start(store_file)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def client(server):
    return caldav.DAVClient(url=f"http://127.0.0.1:{server.port}/dav/", username="demo", password="demo")


@pytest.fixture
def dav(server):
    return Dav(server.port)


def utc(*a):
    return datetime.datetime(*a, tzinfo=datetime.timezone.utc)


def test_caldav_client_flow(client):
    """Discovery, MKCALENDAR, events and todos, time-range search over a
    recurring event, sync with a token, edit, delete."""
    principal = client.principal()
    assert principal.url.path == "/dav/demo/"
    home = principal.calendar_home_set
    assert home.url.path == "/dav/demo/"
    cal = principal.make_calendar(name="Work", cal_id="work")
    assert cal.url.path == "/dav/demo/work/"
    assert [c.url.path for c in principal.calendars()] == ["/dav/demo/work/"]
    assert cal.get_display_name() == "Work"

    event = cal.save_event(RECURRING)
    cal.save_event(ics("single-1", start="20240110T120000Z"))
    task = cal.save_todo(ics("todo-1", comp="VTODO", start="20240110T170000Z"))
    assert len(cal.events()) == 2 and len(cal.todos()) == 1

    def events_between(a, b):
        return sorted(e.icalendar_component["UID"] for e in cal.search(start=a, end=b, event=True,
                                                                       expand=False))
    # instance of Jan 1 and the single event of Jan 10
    assert events_between(utc(2024, 1, 1), utc(2024, 1, 11)) == ["single-1", "weekly-1"]
    # Jan 8 is an EXDATE, Jan 15 moved to the 16th by the override
    assert events_between(utc(2024, 1, 8), utc(2024, 1, 9)) == []
    assert events_between(utc(2024, 1, 15), utc(2024, 1, 16)) == []
    assert events_between(utc(2024, 1, 16, 13), utc(2024, 1, 16, 16)) == ["weekly-1"]
    # the 10th instance is March 4; nothing after it
    assert events_between(utc(2024, 3, 4), utc(2024, 3, 5)) == ["weekly-1"]
    assert events_between(utc(2024, 3, 11), utc(2024, 12, 31)) == []

    first = cal.get_objects_by_sync_token(load_objects=True, disable_fallback=True)
    assert len(list(first)) == 3 and first.sync_token.startswith("urn:litedav:sync:")
    event.data = re.sub(r"SUMMARY:Weekly sync\r?\n", "SUMMARY:Weekly standup\r\n", event.data)
    event.save()
    changed = cal.get_objects_by_sync_token(sync_token=first.sync_token, load_objects=True,
                                            disable_fallback=True)
    assert [o.url.path for o in changed] == [event.url.path]
    assert "Weekly standup" in list(changed)[0].data
    task.delete()
    gone = cal.get_objects_by_sync_token(sync_token=changed.sync_token, load_objects=True,
                                         disable_fallback=True)
    assert [(o.url.path, o.data) for o in gone] == [(task.url.path, None)]
    assert len(cal.todos()) == 0
    again = cal.get_objects_by_sync_token(sync_token=gone.sync_token, disable_fallback=True)
    assert list(again) == []


def test_authentication_and_users(server):
    anonymous = Dav(server.port, None)
    r = anonymous("PROPFIND", "/dav/demo/", headers={"Depth": "0"})
    assert r.status == 401 and r.getheader("WWW-Authenticate").startswith("Basic realm=")
    r = Dav(server.port, "demo", "wrong")("PROPFIND", "/dav/demo/", headers={"Depth": "0"})
    assert r.status == 401
    r = Dav(server.port, "nobody", "x")("GET", "/dav/nobody/")
    assert r.status == 401
    alice = Dav(server.port, "alice", "wonderland")
    assert alice("PROPFIND", "/dav/demo/", headers={"Depth": "0"}).status == 403
    assert alice("GET", "/dav/demo/work/x.ics").status == 403
    assert alice("PUT", "/dav/demo/work/x.ics", ics("x")).status == 403
    assert alice("MKCALENDAR", "/dav/alice/cal/").status == 201
    # /dav/ lists only the caller's own home
    tree = propfind(alice, "/dav/", ["D:resourcetype"], depth="1")
    assert sorted(tree) == ["/dav/", "/dav/alice/"]
    r = anonymous("GET", "/.well-known/caldav")
    assert r.status == 301 and r.getheader("Location") == "/dav/"
    r = alice("GET", "/.well-known/caldav")
    assert r.status == 301 and r.getheader("Location") == "/dav/alice/"


def test_options_and_methods(dav):
    r = dav("OPTIONS", "/dav/demo/")
    assert r.status == 200
    assert r.getheader("DAV") == "1, 3, calendar-access"
    assert "MKCALENDAR" in r.getheader("Allow") and "REPORT" in r.getheader("Allow")
    r = dav("COPY", "/dav/demo/work/", headers={"Destination": "/dav/demo/copy/"})
    assert r.status == 501
    # the status page and static files are still there
    assert dav("GET", "/").status == 200
    assert dav("GET", "/static/task.ics").status == 200


def test_principal_and_collection_properties(dav):
    home = propfind(dav, "/dav/demo/", ["D:current-user-principal", "D:principal-URL",
                                        "C:calendar-home-set", "D:resourcetype", "X:unknown"])
    props = home["/dav/demo/"]["props"]
    assert props[tag("D", "current-user-principal")][1].find("D:href", NS).text == "/dav/demo/"
    assert props[tag("D", "principal-URL")][0] == 200
    assert props[tag("C", "calendar-home-set")][1].find("D:href", NS).text == "/dav/demo/"
    rt = props[tag("D", "resourcetype")][1]
    assert rt.find("D:collection", NS) is not None and rt.find("D:principal", NS) is not None
    assert props["{urn:x-test}unknown"][0] == 404

    assert dav("MKCALENDAR", "/dav/demo/props/").status == 201
    wanted = ["D:resourcetype", "C:supported-calendar-component-set", "CS:getctag", "D:sync-token",
              "D:supported-report-set", "D:owner", "C:max-resource-size", "D:getetag"]
    p = propfind(dav, "/dav/demo/props/", wanted)["/dav/demo/props/"]["props"]
    comps = sorted(c.get("name") for c in p[tag("C", "supported-calendar-component-set")][1])
    assert comps == ["VEVENT", "VJOURNAL", "VTODO"]
    assert p[tag("D", "resourcetype")][1].find("C:calendar", NS) is not None
    assert p[tag("C", "max-resource-size")][1].text == "65536"
    assert p[tag("D", "getetag")][0] == 404  # collections have none
    reports = {r.tag for sr in p[tag("D", "supported-report-set")][1] for rep in sr for r in rep}
    assert reports == {tag("C", "calendar-multiget"), tag("C", "calendar-query"),
                       tag("C", "free-busy-query"), tag("D", "sync-collection")}
    ctag = p[tag("CS", "getctag")][1].text
    assert dav("PUT", "/dav/demo/props/a.ics", ics("a"), {"Content-Type": "text/calendar"}).status == 201
    p2 = propfind(dav, "/dav/demo/props/", ["CS:getctag"])["/dav/demo/props/"]["props"]
    assert p2[tag("CS", "getctag")][1].text != ctag

    # allprop and propname
    r = multistatus(dav("PROPFIND", "/dav/demo/props/a.ics", headers={"Depth": "0"}))
    props = responses(r)["/dav/demo/props/a.ics"]["props"]
    assert {tag("D", "getetag"), tag("D", "getcontenttype"), tag("D", "getcontentlength")} <= set(props)
    r = dav("PROPFIND", "/dav/demo/props/", '<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>',
            {"Depth": "0"})
    names = responses(multistatus(r))["/dav/demo/props/"]["props"]
    assert tag("CS", "getctag") in names and len(names[tag("CS", "getctag")][1]) == 0
    # Depth 1 lists the member; infinity is refused
    assert sorted(propfind(dav, "/dav/demo/props/", ["D:getetag"], depth="1")) == \
        ["/dav/demo/props/", "/dav/demo/props/a.ics"]
    r = dav("PROPFIND", "/dav/demo/props/", headers={"Depth": "infinity"})
    assert r.status == 403 and error_element(r) == [tag("D", "propfind-finite-depth")]
    assert dav("PROPFIND", "/dav/demo/props/", "<D:propfind", {"Depth": "0"}).status == 400


def test_proppatch_is_atomic(dav):
    assert dav("MKCALENDAR", "/dav/demo/patch/").status == 201
    body = ('<D:propertyupdate xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" '
            'xmlns:A="http://apple.com/ns/ical/"><D:set><D:prop><D:displayname>Team</D:displayname>'
            '<C:calendar-description>Shared &amp; busy</C:calendar-description>'
            '<A:calendar-color>#FF0000FF</A:calendar-color></D:prop></D:set></D:propertyupdate>')
    r = responses(multistatus(dav("PROPPATCH", "/dav/demo/patch/", body)))["/dav/demo/patch/"]
    assert {code for code, _ in r["props"].values()} == {200}
    p = propfind(dav, "/dav/demo/patch/", ["D:displayname", "C:calendar-description",
                                           "A:calendar-color"])["/dav/demo/patch/"]["props"]
    assert p[tag("D", "displayname")][1].text == "Team"
    assert p[tag("C", "calendar-description")][1].text == "Shared & busy"
    assert p[tag("A", "calendar-color")][1].text == "#FF0000FF"
    # one property that cannot be set: nothing changes (RFC 4918 9.2)
    body = ('<D:propertyupdate xmlns:D="DAV:" xmlns:X="urn:x-test"><D:set><D:prop>'
            '<D:displayname>Other</D:displayname><X:dead>1</X:dead></D:prop></D:set>'
            '</D:propertyupdate>')
    r = responses(multistatus(dav("PROPPATCH", "/dav/demo/patch/", body)))["/dav/demo/patch/"]
    assert r["props"][tag("D", "displayname")][0] == 424
    assert r["props"]["{urn:x-test}dead"][0] == 403
    p = propfind(dav, "/dav/demo/patch/", ["D:displayname"])["/dav/demo/patch/"]["props"]
    assert p[tag("D", "displayname")][1].text == "Team"
    body = ('<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><D:displayname/></D:prop>'
            '</D:remove></D:propertyupdate>')
    assert dav("PROPPATCH", "/dav/demo/patch/", body).status == 207
    p = propfind(dav, "/dav/demo/patch/", ["D:displayname"])["/dav/demo/patch/"]["props"]
    assert p[tag("D", "displayname")][0] == 404


def test_statuses_and_preconditions(dav):
    assert dav("MKCALENDAR", "/dav/demo/pre/").status == 201
    assert dav("MKCALENDAR", "/dav/demo/pre/").status == 403  # resource-must-be-null
    assert dav("MKCOL", "/dav/demo/pre/").status == 405
    assert dav("MKCOL", "/dav/demo/newcol/", "<x/>", {"Content-Type": "text/xml"}).status == 415
    assert dav("MKCOL", "/dav/demo/a/b/").status == 409
    assert dav("MKCOL", "/dav/demo/pre/sub/").status == 403  # no collections in calendars
    assert dav("PUT", "/dav/demo/nothere/x.ics", ics("x")).status == 409
    assert dav("PUT", "/dav/demo/pre/", ics("x")).status == 405
    assert dav("GET", "/dav/demo/pre/missing.ics").status == 404
    assert dav("DELETE", "/dav/demo/pre/missing.ics").status == 404

    r = dav("PUT", "/dav/demo/pre/e.ics", ics("e"), {"Content-Type": "text/calendar",
                                                     "If-None-Match": "*"})
    assert r.status == 201
    etag = r.getheader("ETag")
    assert re.fullmatch(r'"[0-9a-f]{8}"', etag)
    r = dav("GET", "/dav/demo/pre/e.ics")
    assert r.status == 200 and r.data.decode() == ics("e") and r.getheader("ETag") == etag
    assert r.getheader("Content-Type").startswith("text/calendar")
    r = dav("HEAD", "/dav/demo/pre/e.ics")
    assert r.status == 200 and r.data == b"" and int(r.getheader("Content-Length")) == len(ics("e"))
    assert dav("GET", "/dav/demo/pre/e.ics", headers={"If-None-Match": etag}).status == 304
    assert dav("PUT", "/dav/demo/pre/e.ics", ics("e"), {"If-None-Match": "*"}).status == 412
    assert dav("PUT", "/dav/demo/pre/e.ics", ics("e"), {"If-Match": '"00000000"'}).status == 412
    assert dav("DELETE", "/dav/demo/pre/e.ics", headers={"If-Match": '"00000000"'}).status == 412
    r = dav("PUT", "/dav/demo/pre/e.ics", ics("e", extra="LOCATION:here\r\n"), {"If-Match": etag})
    assert r.status == 204 and r.getheader("ETag") != etag

    def precondition(r):
        assert r.status == 403, (r.status, r.data)
        return error_element(r)
    assert precondition(dav("PUT", "/dav/demo/pre/bad.ics", "not a calendar")) == \
        [tag("C", "valid-calendar-data")]
    assert precondition(dav("PUT", "/dav/demo/pre/bad.ics", ics("bad").replace("END:VEVENT\r\n", ""))) \
        == [tag("C", "valid-calendar-data")]
    assert precondition(dav("PUT", "/dav/demo/pre/dup.ics", ics("e"))) == [tag("C", "no-uid-conflict")]
    assert precondition(dav("PUT", "/dav/demo/pre/fb.ics", ics("fb", comp="VFREEBUSY"))) == \
        [tag("C", "supported-calendar-component")]
    assert precondition(dav("PUT", "/dav/demo/pre/t.ics", ics("t"), {"Content-Type": "text/plain"})) \
        == [tag("C", "supported-calendar-data")]
    big = ics("big", extra="DESCRIPTION:" + "x" * 70000 + "\r\n")
    assert precondition(dav("PUT", "/dav/demo/pre/big.ics", big)) == [tag("C", "max-resource-size")]
    assert dav("REPORT", "/dav/demo/pre/", "<x>" + "y" * 20000 + "</x>").status == 413
    r = dav("REPORT", "/dav/demo/pre/", '<D:expand-property xmlns:D="DAV:"/>')
    assert precondition(r) == [tag("D", "supported-report")]
    assert dav("DELETE", "/dav/demo/pre/e.ics").status == 204
    assert dav("GET", "/dav/demo/pre/e.ics").status == 404
    assert dav("DELETE", "/dav/demo/").status == 403
    assert dav("DELETE", "/dav/demo/pre/").status == 204
    assert dav("PROPFIND", "/dav/demo/pre/", headers={"Depth": "0"}).status == 404


def report(dav, path, body, depth="1"):
    return responses(multistatus(dav("REPORT", path, body, {"Depth": depth,
                                                             "Content-Type": "application/xml"})))


def test_reports(dav):
    assert dav("MKCALENDAR", "/dav/demo/rep/").status == 201
    assert dav("PUT", "/dav/demo/rep/w.ics", RECURRING).status == 201
    assert dav("PUT", "/dav/demo/rep/t.ics", ics("t1", comp="VTODO", start="20240105T170000Z",
                                                   extra="CATEGORIES:Finance\r\n")).status == 201
    assert dav("PUT", "/dav/demo/rep/s.ics", ics("s1", start="20240110T120000Z",
                                                   extra="TRANSP:OPAQUE\r\n")).status == 201
    mg = ('<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
          '<D:getetag/><C:calendar-data/><D:bogus/></D:prop><D:href>/dav/demo/rep/w.ics</D:href>'
          '<D:href>/dav/demo/rep/none.ics</D:href><D:href>/dav/alice/cal/x.ics</D:href>'
          '</C:calendar-multiget>')
    r = report(dav, "/dav/demo/rep/", mg)
    # CRs travel as &#13; so the data comes back byte for byte
    assert r["/dav/demo/rep/w.ics"]["props"][tag("C", "calendar-data")][1].text == RECURRING
    assert r["/dav/demo/rep/w.ics"]["props"][tag("D", "bogus")][0] == 404
    assert r["/dav/demo/rep/none.ics"]["status"] == 404
    assert r["/dav/alice/cal/x.ics"]["status"] == 404

    def query(filt):
        body = ('<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
                f'<D:getetag/></D:prop><C:filter>{filt}</C:filter></C:calendar-query>')
        return sorted(report(dav, "/dav/demo/rep/", body))
    vevent = '<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">{}</C:comp-filter></C:comp-filter>'
    assert query(vevent.format("")) == ["/dav/demo/rep/s.ics", "/dav/demo/rep/w.ics"]
    assert query(vevent.format('<C:time-range start="20240108T000000Z" end="20240109T000000Z"/>')) == []
    assert query(vevent.format('<C:time-range start="20240116T000000Z" end="20240117T000000Z"/>')) \
        == ["/dav/demo/rep/w.ics"]
    assert query(vevent.format('<C:prop-filter name="SUMMARY"><C:text-match>WEEKLY SYNC'
                               '</C:text-match></C:prop-filter>')) == ["/dav/demo/rep/w.ics"]
    assert query(vevent.format('<C:prop-filter name="SUMMARY"><C:text-match collation="i;octet">'
                               'WEEKLY</C:text-match></C:prop-filter>')) == []
    # any VEVENT of the object will do: the override of w.ics has no RRULE
    assert query(vevent.format('<C:prop-filter name="RRULE"><C:is-not-defined/></C:prop-filter>')) \
        == ["/dav/demo/rep/s.ics", "/dav/demo/rep/w.ics"]
    assert query(vevent.format('<C:prop-filter name="TRANSP"><C:is-not-defined/></C:prop-filter>')) \
        == ["/dav/demo/rep/w.ics"]
    assert query(vevent.format('<C:prop-filter name="SUMMARY"><C:text-match negate-condition="yes">'
                               'weekly</C:text-match></C:prop-filter>')) == ["/dav/demo/rep/s.ics"]
    todo = ('<C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO"><C:prop-filter '
            'name="CATEGORIES"><C:text-match>finance</C:text-match></C:prop-filter></C:comp-filter>'
            '</C:comp-filter>')
    assert query(todo) == ["/dav/demo/rep/t.ics"]
    r = dav("REPORT", "/dav/demo/rep/", '<C:calendar-query xmlns:C="urn:ietf:params:xml:ns:caldav">'
            '<C:filter><C:comp-filter name="VCALENDAR"><C:prop-filter name="X"><C:text-match '
            'collation="i;klingon">a</C:text-match></C:prop-filter></C:comp-filter></C:filter>'
            '</C:calendar-query>', {"Depth": "1"})
    assert r.status == 403 and error_element(r) == [tag("C", "supported-collation")]

    fb = ('<C:free-busy-query xmlns:C="urn:ietf:params:xml:ns:caldav"><C:time-range '
          'start="20240110T000000Z" end="20240117T000000Z"/></C:free-busy-query>')
    r = dav("REPORT", "/dav/demo/rep/", fb, {"Depth": "1"})
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/calendar")
    periods = sorted(re.findall(r"FREEBUSY;FBTYPE=BUSY:(\S+)", r.data.decode()))
    assert periods == ["20240110T120000Z/20240110T235900Z", "20240116T140000Z/20240116T150000Z"]


def sync(dav, path, token="", limit=None, props="<D:getetag/>"):
    lim = f"<D:limit><D:nresults>{limit}</D:nresults></D:limit>" if limit else ""
    body = (f'<D:sync-collection xmlns:D="DAV:"><D:sync-token>{token}</D:sync-token>'
            f'<D:sync-level>1</D:sync-level>{lim}<D:prop>{props}</D:prop></D:sync-collection>')
    r = dav("REPORT", path, body, {"Depth": "0"})
    tree = multistatus(r)
    return responses(tree), tree.find("D:sync-token", NS).text


def test_sync_collection(dav):
    assert dav("MKCALENDAR", "/dav/demo/sync/").status == 201
    for i in range(5):
        assert dav("PUT", f"/dav/demo/sync/{i}.ics", ics(f"s{i}")).status == 201
    got, token = sync(dav, "/dav/demo/sync/")
    assert sorted(got) == [f"/dav/demo/sync/{i}.ics" for i in range(5)]
    assert dav("DELETE", "/dav/demo/sync/1.ics").status == 204
    assert dav("PUT", "/dav/demo/sync/2.ics", ics("s2", extra="LOCATION:x\r\n")).status == 204
    got, token2 = sync(dav, "/dav/demo/sync/", token)
    assert got["/dav/demo/sync/1.ics"]["status"] == 404
    assert got["/dav/demo/sync/2.ics"]["props"][tag("D", "getetag")][0] == 200
    assert len(got) == 2
    assert sync(dav, "/dav/demo/sync/", token2)[0] == {}
    # paging: 2 at a time, the request-URI with 507, then the rest
    for i in range(5, 9):
        assert dav("PUT", f"/dav/demo/sync/{i}.ics", ics(f"s{i}")).status == 201
    seen = []
    tok = token2
    for _ in range(3):
        got, tok = sync(dav, "/dav/demo/sync/", tok, limit=2)
        truncated = got.pop("/dav/demo/sync/", None)
        seen += sorted(got)
        if truncated is None:
            break
        assert truncated["status"] == 507
    assert seen == [f"/dav/demo/sync/{i}.ics" for i in range(5, 9)]
    for bad in ("nonsense", "urn:litedav:sync:1:1", token.rsplit(":", 1)[0] + ":999999"):
        r = dav("REPORT", "/dav/demo/sync/", f'<D:sync-collection xmlns:D="DAV:"><D:sync-token>{bad}'
                '</D:sync-token><D:sync-level>1</D:sync-level><D:prop/></D:sync-collection>',
                {"Depth": "0"})
        assert r.status == 403 and error_element(r) == [tag("D", "valid-sync-token")], bad


def test_office_data_round_trip(server):
    """5 users x 200 realistic items through PUT, read back by GET and by a
    calendar-query that returns calendar-data."""
    for i in range(5):
        user = f"user{i:03d}"
        dav = Dav(server.port, user, f"pw{i}")
        assert dav("MKCALENDAR", f"/dav/{user}/office/").status == 201
        items = user_items(user)
        for name, _, text in items:
            r = dav("PUT", f"/dav/{user}/office/{name}", text, {"Content-Type": "text/calendar"})
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


def test_restart_keeps_everything(server, store_file):
    before = Dav(server.port)
    listing = propfind(before, "/dav/demo/work/", ["D:getetag"], depth="1")
    assert len(listing) == 3
    code = server.stop()
    out = server.output()
    assert code == 0 and not SANITIZER_REPORT.search(out), out[-4000:]
    again = start(store_file)
    try:
        dav = Dav(again.port)
        def etags(r):
            return {h: {k: (c, e.text) for k, (c, e) in v["props"].items()} for h, v in r.items()}
        assert etags(propfind(dav, "/dav/demo/work/", ["D:getetag"], depth="1")) == etags(listing)
        assert dav("GET", "/dav/user004/office/user004-0199.ics").status == 403
        u4 = Dav(again.port, "user004", "pw4")
        assert u4("GET", "/dav/user004/office/user004-0199.ics").data.decode() == \
            user_items("user004")[199][2]
        p = propfind(dav, "/dav/demo/patch/", ["D:displayname", "C:calendar-description"])
        p = p["/dav/demo/patch/"]["props"]
        assert p[tag("D", "displayname")][0] == 404  # removed by the last PROPPATCH
        assert p[tag("C", "calendar-description")][1].text == "Shared & busy"
    finally:
        again.stop()
        out = again.output()
    assert not SANITIZER_REPORT.search(out), out[-4000:]
