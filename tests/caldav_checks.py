"""CalDAV checks shared by every target that runs the LiteDAV app (the host
build, the simulated SoC, the LM3S port in QEMU): WebDAV resources and
properties, ETags and conditional requests, MKCALENDAR, PROPPATCH and the
CalDAV preconditions. REPORTs, sync, concurrency and the python `caldav`
client are in caldav_report_checks.py; caldav_suite.py lists them all.

The checks read the target's limits from its Target (http_checks.py:
max_resource_size, xml_body_max, dav_requests_max, quick) instead of being
skipped where a build is small. Every check works in a calendar of its own,
with a unique name, and deletes it at the end, so a small store (the QEMU
build keeps 8 KiB in RAM) never fills up and no check sees another's data.
"""
import base64
import contextlib
import http.client
import itertools
import os
import re
import secrets
import time
import xml.etree.ElementTree as ET

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP_CONFIG = os.path.join(TOP, "firmware", "app", "platform", "app_config.h")
USER, PASSWORD = "demo", "demo"  # the demo user every build has (firmware/users.conf)
HOME = f"/dav/{USER}/"
NS = {"D": "DAV:", "C": "urn:ietf:params:xml:ns:caldav", "CS": "http://calendarserver.org/ns/",
      "A": "http://apple.com/ns/ical/"}
XMLNS = " ".join(f'xmlns:{p}="{uri}"' for p, uri in NS.items()) + ' xmlns:X="urn:x-test"'

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
    """A small calendar object: a VEVENT from `start` to the end of that day, or a VTODO due then."""
    times = f"DTSTART:{start}\r\nDTEND:{start[:9]}235900Z\r\n" if comp == "VEVENT" else f"DUE:{start}\r\n"
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:{comp}\r\nUID:{uid}\r\n"
            f"DTSTAMP:20240101T000000Z\r\n{times}SUMMARY:Item {uid}\r\n{extra}END:{comp}\r\n"
            "END:VCALENDAR\r\n")


def folded(chars, room, column):
    """`room` octets of property text taken from the iterator `chars`, folded (CRLF, space) so
    that no line exceeds 75 octets (RFC 5545 section 3.1); the first line starts at `column`."""
    out = []
    while room:
        # fill this line, but leave room for a fold and at least one more octet after it
        n = room if column + room <= 75 else min(75 - column, room - 4)
        out.extend(next(chars) for _ in range(n))
        room -= n
        if room:
            out.append("\r\n ")
            room -= 3
            column = 1
    return "".join(out)


def ics_of_size(uid, size, seed=""):
    """A VEVENT of exactly `size` bytes, filled with COMMENT properties of up to 1000 octets
    whose text repeats uid and seed, so a body mixed up with another one's shows."""
    room = size - len(ics(uid))
    shortest = len("COMMENT:x\r\n")
    assert room == 0 or room >= shortest, f"{size} bytes cannot be a calendar object of that UID"
    chars = itertools.cycle(f"{uid}-{seed}-")
    comments = []
    while room:
        n = min(room, 1000)
        if room - n and room - n < shortest:
            n = room - shortest
        comments.append("COMMENT:" + folded(chars, n - len("COMMENT:\r\n"), len("COMMENT:")) + "\r\n")
        room -= n
    body = ics(uid, extra="".join(comments))
    assert len(body.encode()) == size, (len(body), size)
    return body


def app_limits(port_config=None):
    """The CalDAV limits a build has, as Target fields: the app_config.h defaults, overridden
    by a port's header (app_port_config.h) when given. Values are plain C integer expressions."""
    names = {"DAV_MAX_RESOURCE_SIZE": "max_resource_size", "DAV_XML_MAX": "xml_body_max",
             "DAV_CTX_MAX": "dav_requests_max", "CALDAV_SCHEDULING": "scheduling"}
    limits = {}
    for header in filter(None, (port_config, APP_CONFIG)):
        with open(header) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        for name, value in re.findall(r"^\s*#define\s+((?:CAL)?DAV_\w+)[ \t]+(.+?)\s*$", text, re.M):
            if name in names and names[name] not in limits:
                expr = re.sub(r"(\d+)[uUlL]+\b", r"\1", value)
                assert re.fullmatch(r"[\d\s()*+]+", expr), f"{header}: {name} {value}"
                limits[names[name]] = eval(expr)  # digits, spaces, ( ) * + only
    assert len(limits) == len(names), f"{APP_CONFIG} lacks some of {sorted(names)}"
    return limits


def tag(ns, name):
    return "{%s}%s" % (NS[ns], name)


class Dav:
    """Raw HTTP with Basic credentials on one keep-alive connection to a Target.

    A 503 means every /dav/ request context of the target is taken (Target.dav_requests_max):
    the server must say when to come back (Retry-After, RFC 9110 section 10.2.3), and the
    request is sent again after that many seconds, as a client would. `retried` counts them."""

    def __init__(self, target, user=USER, password=PASSWORD):
        self.target = target
        self.auth = None if user is None else \
            "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.conn = target.connection()
        self.retried = 0

    def __call__(self, method, path, body=None, headers=None):
        h = dict(headers or {})
        if self.auth:
            h["Authorization"] = self.auth
        if isinstance(body, str):
            body = body.encode()  # a list of bytes goes out chunked
        deadline = time.monotonic() + self.target.timeout
        while True:
            r = self.once(method, path, body, h)
            if r.status != 503:
                return r
            retry_after = r.getheader("Retry-After")
            assert retry_after and retry_after.isdigit(), \
                f"{method} {path}: 503 without a Retry-After in seconds: {r.getheaders()}"
            assert time.monotonic() < deadline, f"{method} {path}: still 503 after {self.retried} retries"
            self.retried += 1
            time.sleep(int(retry_after))

    def once(self, method, path, body, headers):
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        r.data = r.read()
        if r.getheader("Connection", "").lower() == "close":
            self.reconnect()
        return r

    def reconnect(self):
        self.conn.close()
        self.conn = self.target.connection()

    def close(self):
        self.conn.close()


@contextlib.contextmanager
def calendar(dav, label):
    """A new calendar of the demo user, /dav/demo/<label>-<random>/, deleted on the way out."""
    path = f"{HOME}{label}-{secrets.token_hex(3)}/"
    r = dav("MKCALENDAR", path)
    assert r.status == 201, (path, r.status, r.data)
    ok = False
    try:
        yield path
        ok = True
    finally:
        r = dav("DELETE", path)
        if ok:  # a failing check keeps its own error
            assert r.status == 204, (path, r.status, r.data)
        dav.close()


def put(dav, path, text, headers=None):
    """PUT a calendar object; returns the response."""
    return dav("PUT", path, text, {"Content-Type": "text/calendar", **(headers or {})})


def multistatus(r):
    assert r.status == 207, (r.status, r.data[:500])
    return ET.fromstring(r.data)


def responses(tree):
    """{href: {"status": code or None, "props": {tag: (code, element)}}}."""
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
        assert href not in out, f"{href} answered twice"
        out[href] = entry
    return out


def propfind(dav, path, props, depth="0"):
    body = (f'<?xml version="1.0"?><D:propfind {XMLNS}><D:prop>' + "".join(f"<{p}/>" for p in props)
            + "</D:prop></D:propfind>")
    return responses(multistatus(dav("PROPFIND", path, body, {"Depth": depth})))


def error_element(r):
    """The precondition elements of a DAV:error body (RFC 4918 section 16)."""
    root = ET.fromstring(r.data)
    assert root.tag == tag("D", "error"), r.data
    return [child.tag for child in root]


def precondition(r):
    assert r.status == 403, (r.status, r.data)
    return error_element(r)


def test_dav_authentication(target):
    anonymous = Dav(target, None)
    r = anonymous("PROPFIND", HOME, headers={"Depth": "0"})
    assert r.status == 401 and r.getheader("WWW-Authenticate").startswith("Basic realm="), r.getheaders()
    assert Dav(target, USER, "wrong")("PROPFIND", HOME, headers={"Depth": "0"}).status == 401
    assert Dav(target, "nobody", "x")("GET", "/dav/nobody/").status == 401
    dav = Dav(target)
    # each user sees only their own tree, whether the other user exists or not
    assert dav("PROPFIND", "/dav/nobody/", headers={"Depth": "0"}).status == 403
    assert dav("PUT", "/dav/nobody/cal/x.ics", ics("x")).status == 403
    # RFC 6764 section 5: the context path, then the caller's own home
    r = anonymous("GET", "/.well-known/caldav")
    assert r.status == 301 and r.getheader("Location") == "/dav/"
    r = dav("GET", "/.well-known/caldav")
    assert r.status == 301 and r.getheader("Location") == HOME
    # the status page and static files need no credentials
    assert anonymous("GET", "/").status == 200
    assert anonymous("GET", "/static/task.ics").status == 200
    for client in (anonymous, dav):
        client.close()


def test_dav_discovery_from_root(target):
    """A client given only the server starts at "/" (RFC 6764 section 6): PROPFIND there asks for
    credentials, then names the principal (RFC 5397) and lists the DAV root; GET is still the
    status page; the .well-known redirect says what it is (RFC 9110 section 15.4.2)."""
    anonymous = Dav(target, None)
    body = f'<D:propfind {XMLNS}><D:prop><D:current-user-principal/></D:prop></D:propfind>'
    r = anonymous("PROPFIND", "/", body, {"Depth": "0"})
    assert r.status == 401 and r.getheader("WWW-Authenticate").startswith("Basic realm="), r.status
    assert anonymous("GET", "/").status == 200
    r = anonymous("GET", "/.well-known/caldav")
    assert (r.status, r.reason) == (301, "Moved Permanently"), (r.status, r.reason)
    dav = Dav(target)
    root = propfind(dav, "/", ["D:current-user-principal", "D:resourcetype", "D:principal-URL"])
    assert list(root) == ["/"]
    props = root["/"]["props"]
    assert props[tag("D", "current-user-principal")][0] == 200
    assert props[tag("D", "current-user-principal")][1].find("D:href", NS).text == HOME
    assert props[tag("D", "resourcetype")][1].find("D:collection", NS) is not None
    assert props[tag("D", "principal-URL")][0] == 404   # "/" is no principal
    assert list(propfind(dav, "/", ["D:resourcetype"], depth="1")) == ["/", "/dav/"]
    r = dav("OPTIONS", "/")
    assert r.status == 200 and r.getheader("DAV") == "1, 3, calendar-access", r.getheaders()
    assert "PROPFIND" in {m.strip() for m in r.getheader("Allow").split(",")}
    # a method the root does not take
    assert dav("PROPPATCH", "/", f'<D:propertyupdate {XMLNS}/>').status == 405
    for client in (anonymous, dav):
        client.close()


def test_dav_options_and_unsupported_methods(target):
    dav = Dav(target)
    r = dav("OPTIONS", HOME)
    assert r.status == 200
    assert r.getheader("DAV") == "1, 3, calendar-access"
    allow = {m.strip() for m in r.getheader("Allow").split(",")}
    assert {"PROPFIND", "PROPPATCH", "MKCALENDAR", "REPORT", "PUT", "DELETE", "COPY", "MOVE"} <= allow, allow
    for method in ("COPY", "MOVE"):
        r = dav(method, HOME + "nothere/", headers={"Destination": HOME + "copy/"})
        assert r.status == 404, (method, r.status)
    for method in ("LOCK", "UNLOCK"):  # class 2 is not claimed
        assert dav(method, HOME).status == 501, method
    dav.close()


def test_dav_propfind_home(target):
    """The principal and calendar home (RFC 5397, RFC 4791 section 6.2.1), Depth 0 and 1."""
    dav = Dav(target)
    with calendar(dav, "home") as cal:
        home = propfind(dav, HOME, ["D:current-user-principal", "D:principal-URL",
                                    "C:calendar-home-set", "D:resourcetype", "X:unknown"])
        assert list(home) == [HOME]
        props = home[HOME]["props"]
        assert props[tag("D", "current-user-principal")][1].find("D:href", NS).text == HOME
        assert props[tag("D", "principal-URL")][0] == 200
        assert props[tag("C", "calendar-home-set")][1].find("D:href", NS).text == HOME
        rt = props[tag("D", "resourcetype")][1]
        assert rt.find("D:collection", NS) is not None and rt.find("D:principal", NS) is not None
        assert props["{urn:x-test}unknown"][0] == 404

        listing = propfind(dav, HOME, ["D:resourcetype", "D:displayname"], depth="1")
        assert HOME in listing and cal in listing, sorted(listing)
        for href in listing:  # the home and its collections, one level down
            assert re.fullmatch(re.escape(HOME) + r"([^/]+/)?", href), href
        assert listing[cal]["props"][tag("D", "resourcetype")][1].find("C:calendar", NS) is not None

        # /dav/ itself lists only the caller's own home
        assert sorted(propfind(dav, "/dav/", ["D:resourcetype"], depth="1")) == ["/dav/", HOME]

        r = dav("PROPFIND", HOME, headers={"Depth": "infinity"})
        assert precondition(r) == [tag("D", "propfind-finite-depth")]
        assert dav("PROPFIND", HOME, headers={"Depth": "2"}).status == 400
        assert dav("PROPFIND", HOME, "<D:propfind", {"Depth": "0"}).status == 400


def test_dav_calendar_properties(target):
    dav = Dav(target)
    with calendar(dav, "props") as cal:
        wanted = ["D:resourcetype", "C:supported-calendar-component-set", "CS:getctag",
                  "D:sync-token", "D:supported-report-set", "D:owner", "C:max-resource-size",
                  "D:getetag"]
        got = propfind(dav, cal, wanted)
        assert list(got) == [cal]
        p = got[cal]["props"]
        comps = sorted(c.get("name") for c in p[tag("C", "supported-calendar-component-set")][1])
        assert comps == ["VEVENT", "VJOURNAL", "VTODO"]
        rt = p[tag("D", "resourcetype")][1]
        assert rt.find("C:calendar", NS) is not None and rt.find("D:collection", NS) is not None
        assert p[tag("C", "max-resource-size")][1].text == str(target.max_resource_size)
        assert p[tag("D", "getetag")][0] == 404  # collections have none
        assert p[tag("D", "owner")][1].find("D:href", NS).text == HOME
        reports = {r.tag for sr in p[tag("D", "supported-report-set")][1] for rep in sr for r in rep}
        # RFC 3744 section 9: the principal search REPORTs work on any resource
        assert reports == {tag("C", "calendar-multiget"), tag("C", "calendar-query"),
                           tag("C", "free-busy-query"), tag("D", "sync-collection"),
                           tag("D", "principal-property-search"), tag("D", "principal-search-property-set")}
        ctag = p[tag("CS", "getctag")][1].text
        token = p[tag("D", "sync-token")][1].text
        r = put(dav, cal + "a.ics", ics("a"))
        assert r.status == 201
        etag = r.getheader("ETag")
        p2 = propfind(dav, cal, ["CS:getctag", "D:sync-token"])[cal]["props"]
        assert p2[tag("CS", "getctag")][1].text != ctag
        assert p2[tag("D", "sync-token")][1].text != token

        # allprop (no body) on the object; propname on the calendar
        props = responses(multistatus(dav("PROPFIND", cal + "a.ics", headers={"Depth": "0"})))
        props = props[cal + "a.ics"]["props"]
        assert {tag("D", "getetag"), tag("D", "getcontenttype"), tag("D", "getcontentlength")} <= set(props)
        assert props[tag("D", "getetag")][1].text == etag
        assert props[tag("D", "getcontentlength")][1].text == str(len(ics("a")))
        r = dav("PROPFIND", cal, '<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>', {"Depth": "0"})
        names = responses(multistatus(r))[cal]["props"]
        assert tag("CS", "getctag") in names and len(names[tag("CS", "getctag")][1]) == 0

        # Depth 1 lists the calendar and its member with the ETag the PUT gave
        listing = propfind(dav, cal, ["D:getetag"], depth="1")
        assert sorted(listing) == [cal, cal + "a.ics"]
        assert listing[cal + "a.ics"]["props"][tag("D", "getetag")][1].text == etag
        assert dav("DELETE", cal + "a.ics").status == 204
        assert sorted(propfind(dav, cal, ["D:getetag"], depth="1")) == [cal]


def test_dav_mkcalendar(target):
    """MKCALENDAR with and without a body (RFC 4791 section 5.3.1), MKCOL's statuses, DELETE."""
    dav = Dav(target)
    name = f"{HOME}mk-{secrets.token_hex(3)}/"
    body = (f'<?xml version="1.0"?><C:mkcalendar {XMLNS}><D:set><D:prop>'
            '<D:displayname>Team &amp; co</D:displayname>'
            '<C:calendar-description>Made by MKCALENDAR</C:calendar-description>'
            '</D:prop></D:set></C:mkcalendar>')
    assert dav("MKCALENDAR", name, body, {"Content-Type": "application/xml"}).status == 201
    try:
        p = propfind(dav, name, ["D:displayname", "C:calendar-description", "D:resourcetype"])
        p = p[name]["props"]
        assert p[tag("D", "displayname")][1].text == "Team & co"
        assert p[tag("C", "calendar-description")][1].text == "Made by MKCALENDAR"
        assert p[tag("D", "resourcetype")][1].find("C:calendar", NS) is not None
        assert precondition(dav("MKCALENDAR", name)) == [tag("D", "resource-must-be-null")]
        assert dav("MKCOL", name).status == 405
        assert dav("MKCOL", name + "sub/").status == 403  # no collections inside calendars
        assert dav("MKCALENDAR", name + "sub/").status == 403
        assert dav("MKCOL", f"{HOME}missing-{secrets.token_hex(3)}/b/").status == 409
        assert dav("MKCALENDAR", f"{HOME}missing-{secrets.token_hex(3)}/b/").status == 409
        other = f"{HOME}mk-{secrets.token_hex(3)}/"
        assert dav("MKCOL", other, "<x/>", {"Content-Type": "text/xml"}).status == 415
        assert dav("MKCALENDAR", other, '<D:propfind xmlns:D="DAV:"/>').status == 400
        assert dav("PROPFIND", other, headers={"Depth": "0"}).status == 404
        assert put(dav, name + "e.ics", ics("e")).status == 201
    finally:
        assert dav("DELETE", name).status == 204
    # the calendar and its member are gone
    assert dav("PROPFIND", name, headers={"Depth": "0"}).status == 404
    assert dav("GET", name + "e.ics").status == 404
    assert dav("DELETE", HOME).status == 403
    dav.close()


def test_dav_mkcalendar_component_set(target):
    """MKCALENDAR carrying CALDAV:supported-calendar-component-set (RFC 4791 sections 5.2.3 and
    5.3.1): the calendar keeps the set, PROPFIND returns it, a PUT or COPY of another kind gets the
    CALDAV:supported-calendar-component precondition (section 5.3.2.1), PROPPATCH cannot change it
    (DAV:cannot-modify-protected-property), a set this server cannot keep is refused."""
    dav = Dav(target)

    def mkcalendar(path, comps):
        body = (f'<?xml version="1.0"?><C:mkcalendar {XMLNS}><D:set><D:prop>'
                '<D:displayname>Tasks</D:displayname><C:supported-calendar-component-set>'
                + "".join(f'<C:comp name="{n}"/>' for n in comps)
                + '</C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>')
        return dav("MKCALENDAR", path, body, {"Content-Type": "application/xml"})

    def comps(path):
        p = propfind(dav, path, ["C:supported-calendar-component-set", "D:displayname"])[path]["props"]
        assert p[tag("D", "displayname")][1].text == "Tasks"
        code, el = p[tag("C", "supported-calendar-component-set")]
        assert code == 200
        return sorted(c.get("name") for c in el.findall("C:comp", NS))

    tasks = f"{HOME}tasks-{secrets.token_hex(3)}/"
    both = f"{HOME}both-{secrets.token_hex(3)}/"
    assert mkcalendar(tasks, ["VTODO"]).status == 201
    try:
        assert mkcalendar(both, ["VEVENT", "VTIMEZONE", "VJOURNAL"]).status == 201
        assert comps(tasks) == ["VTODO"]
        assert comps(both) == ["VEVENT", "VJOURNAL"]
        assert put(dav, tasks + "t.ics", ics("t", comp="VTODO")).status == 201
        assert precondition(put(dav, tasks + "e.ics", ics("e"))) == [tag("C", "supported-calendar-component")]
        assert put(dav, both + "e.ics", ics("e")).status == 201
        assert precondition(put(dav, both + "t2.ics", ics("t2", comp="VTODO"))) == \
            [tag("C", "supported-calendar-component")]
        # COPY and MOVE into a calendar meet the same precondition (section 5.3.2.1)
        r = dav("COPY", both + "e.ics", headers={"Destination": tasks + "e.ics"})
        assert precondition(r) == [tag("C", "supported-calendar-component")]
        assert dav("GET", tasks + "e.ics").status == 404
        # protected after creation (section 5.2.3)
        body = (f'<?xml version="1.0"?><D:propertyupdate {XMLNS}><D:set><D:prop>'
                '<C:supported-calendar-component-set><C:comp name="VEVENT"/>'
                '</C:supported-calendar-component-set></D:prop></D:set></D:propertyupdate>')
        tree = multistatus(dav("PROPPATCH", tasks, body, {"Content-Type": "application/xml"}))
        props = responses(tree)[tasks]["props"]
        assert props[tag("C", "supported-calendar-component-set")][0] == 403
        assert comps(tasks) == ["VTODO"]
        # a calendar of a component this server does not keep, or of none
        for bad in (["VFREEBUSY"], ["VEVENT", "VAVAILABILITY"], []):
            path = f"{HOME}bad-{secrets.token_hex(3)}/"
            assert mkcalendar(path, bad).status == 403, bad
            assert dav("PROPFIND", path, headers={"Depth": "0"}).status == 404
    finally:
        assert dav("DELETE", tasks).status == 204
        dav("DELETE", both)
    dav.close()


def test_dav_copy_move_and_dead_properties(target):
    """One round trip of COPY, MOVE (RFC 4918 sections 9.8, 9.9) and a dead property (section 4,
    PROPPATCH 9.2), as every target runs them: the property set on an object travels with its
    COPY into another calendar and with a MOVE there, and the source keeps it
    (tests/test_host_copymove.py and test_host_deadprops.py have the rest)."""
    dav = Dav(target)
    prop = '<X:colour xmlns:X="urn:x-test">teal</X:colour>'
    with calendar(dav, "cm-a") as a, calendar(dav, "cm-b") as b:
        assert put(dav, a + "e.ics", ics("cm-e")).status == 201
        body = (f'<?xml version="1.0"?><D:propertyupdate {XMLNS}><D:set><D:prop>{prop}</D:prop></D:set>'
                '</D:propertyupdate>')
        got = responses(multistatus(dav("PROPPATCH", a + "e.ics", body, {"Content-Type": "application/xml"})))
        assert got[a + "e.ics"]["props"]["{urn:x-test}colour"][0] == 200
        assert dav("COPY", a + "e.ics", headers={"Destination": b + "e.ics"}).status == 201
        assert dav("MOVE", b + "e.ics", headers={"Destination": b + "moved.ics"}).status == 201
        assert dav("GET", b + "e.ics").status == 404
        for path in (a + "e.ics", b + "moved.ics"):
            p = propfind(dav, path, ["X:colour", "D:getetag"])[path]["props"]
            assert p["{urn:x-test}colour"][1].text == "teal", path
        assert dav("DELETE", b + "moved.ics").status == 204
        assert dav("DELETE", a + "e.ics").status == 204
    dav.close()


def test_dav_proppatch_is_atomic(target):
    dav = Dav(target)
    with calendar(dav, "patch") as cal:
        body = (f'<D:propertyupdate {XMLNS}><D:set><D:prop><D:displayname>Team</D:displayname>'
                '<C:calendar-description>Shared &amp; busy</C:calendar-description>'
                '<A:calendar-color>#FF0000FF</A:calendar-color></D:prop></D:set></D:propertyupdate>')
        r = responses(multistatus(dav("PROPPATCH", cal, body)))[cal]
        assert {code for code, _ in r["props"].values()} == {200}
        p = propfind(dav, cal, ["D:displayname", "C:calendar-description", "A:calendar-color"])
        p = p[cal]["props"]
        assert p[tag("D", "displayname")][1].text == "Team"
        assert p[tag("C", "calendar-description")][1].text == "Shared & busy"
        assert p[tag("A", "calendar-color")][1].text == "#FF0000FF"
        # one property that cannot be set (a protected one, section 16): nothing changes,
        # the dead property beside it included (RFC 4918 section 9.2)
        body = ('<D:propertyupdate xmlns:D="DAV:" xmlns:X="urn:x-test"><D:set><D:prop>'
                '<D:displayname>Other</D:displayname><X:dead>1</X:dead><D:getetag>1</D:getetag>'
                '</D:prop></D:set></D:propertyupdate>')
        r = responses(multistatus(dav("PROPPATCH", cal, body)))[cal]
        assert r["props"][tag("D", "displayname")][0] == 424
        assert r["props"]["{urn:x-test}dead"][0] == 424
        assert r["props"][tag("D", "getetag")][0] == 403
        assert propfind(dav, cal, ["X:dead"])[cal]["props"]["{urn:x-test}dead"][0] == 404
        p = propfind(dav, cal, ["D:displayname"])[cal]["props"]
        assert p[tag("D", "displayname")][1].text == "Team"
        body = ('<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><D:displayname/></D:prop>'
                '</D:remove></D:propertyupdate>')
        assert dav("PROPPATCH", cal, body).status == 207
        p = propfind(dav, cal, ["D:displayname", "C:calendar-description"])[cal]["props"]
        assert p[tag("D", "displayname")][0] == 404
        assert p[tag("C", "calendar-description")][1].text == "Shared & busy"


def test_dav_put_get_delete_with_etags(target):
    """Strong ETags and If-Match / If-None-Match on GET, PUT and DELETE (RFC 9110 section 13)."""
    dav = Dav(target)
    with calendar(dav, "etag") as cal:
        obj = cal + "e.ics"
        assert dav("GET", obj).status == 404
        assert dav("DELETE", obj).status == 404
        assert put(dav, obj, ics("e"), {"If-Match": '"00000000"'}).status == 412  # nothing to match
        r = put(dav, obj, ics("e"), {"If-None-Match": "*"})
        assert r.status == 201, (r.status, r.data)
        etag = r.getheader("ETag")
        assert re.fullmatch(r'"[0-9a-f]{8}"', etag), etag
        r = dav("GET", obj)
        assert r.status == 200 and r.data == ics("e").encode() and r.getheader("ETag") == etag
        assert r.getheader("Content-Type").startswith("text/calendar")
        r = dav("HEAD", obj)
        assert r.status == 200 and r.data == b"" and int(r.getheader("Content-Length")) == len(ics("e"))
        assert r.getheader("ETag") == etag
        r = dav("GET", obj, headers={"If-None-Match": etag})
        assert r.status == 304 and r.data == b"" and r.getheader("ETag") == etag
        assert dav("GET", obj, headers={"If-None-Match": '"00000000"'}).status == 200
        assert put(dav, obj, ics("e"), {"If-None-Match": "*"}).status == 412
        assert put(dav, obj, ics("e"), {"If-Match": '"00000000"'}).status == 412
        assert dav("DELETE", obj, headers={"If-Match": '"00000000"'}).status == 412
        assert dav("GET", obj).data == ics("e").encode()  # the refused requests changed nothing

        changed = ics("e", extra="LOCATION:here\r\n")
        r = put(dav, obj, changed, {"If-Match": etag})
        assert r.status == 204, (r.status, r.data)
        etag2 = r.getheader("ETag")
        assert etag2 and etag2 != etag
        r = dav("GET", obj)
        assert r.data == changed.encode() and r.getheader("ETag") == etag2
        assert dav("DELETE", obj, headers={"If-Match": etag}).status == 412  # the old one
        assert dav("DELETE", obj, headers={"If-Match": etag2}).status == 204
        assert dav("GET", obj).status == 404
        assert dav("DELETE", obj).status == 404
        # a name freed by DELETE takes a new object, with a new ETag
        r = put(dav, obj, ics("e"), {"If-None-Match": "*"})
        assert r.status == 201 and r.getheader("ETag") not in (etag, etag2)
        assert dav("DELETE", obj).status == 204


def test_caldav_put_preconditions(target):
    """RFC 4791 section 5.3.2.1 preconditions and the size limits of the target's build."""
    dav = Dav(target)
    with calendar(dav, "pre") as cal:
        assert put(dav, cal + "e.ics", ics("e")).status == 201
        assert precondition(put(dav, cal + "bad.ics", "not a calendar")) == \
            [tag("C", "valid-calendar-data")]
        assert precondition(put(dav, cal + "bad.ics", ics("bad").replace("END:VEVENT\r\n", ""))) \
            == [tag("C", "valid-calendar-data")]
        # RFC 5545 section 3.1: a bare CR in a line (a SUMMARY rewritten without its CRLF)
        bare_cr = ics("cr").replace("SUMMARY:", "SUMMARY:x\r (moved)\nX-Y:", 1)
        assert "\r (moved)\n" in bare_cr
        assert precondition(put(dav, cal + "cr.ics", bare_cr)) == [tag("C", "valid-calendar-data")]
        assert precondition(put(dav, cal + "dup.ics", ics("e"))) == [tag("C", "no-uid-conflict")]
        # the UID index (a digest per object, learnt when an object is read) follows rewrites
        # and deletes: f.ics's digest is learnt by the first conflict, then f.ics takes UID g
        conflict = [tag("C", "no-uid-conflict")]
        assert put(dav, cal + "f.ics", ics("f")).status == 201
        assert precondition(put(dav, cal + "u1.ics", ics("f"))) == conflict
        assert put(dav, cal + "f.ics", ics("g")).status == 204
        assert precondition(put(dav, cal + "u1.ics", ics("g"))) == conflict
        assert put(dav, cal + "u1.ics", ics("f")).status == 201
        assert precondition(put(dav, cal + "u2.ics", ics("f"))) == conflict
        assert dav("DELETE", cal + "u1.ics").status == 204
        assert put(dav, cal + "u2.ics", ics("f")).status == 201
        assert precondition(put(dav, cal + "fb.ics", ics("fb", comp="VFREEBUSY"))) == \
            [tag("C", "supported-calendar-component")]
        assert precondition(put(dav, cal + "t.ics", ics("t"), {"Content-Type": "text/plain"})) \
            == [tag("C", "supported-calendar-data")]
        assert dav("PUT", f"{HOME}missing-{secrets.token_hex(3)}/x.ics", ics("x")).status == 409
        assert put(dav, cal, ics("x")).status == 405
        for refused in ("bad.ics", "dup.ics", "fb.ics", "t.ics"):
            assert dav("GET", cal + refused).status == 404, refused

        # an object of exactly max-resource-size is stored and read back byte for byte; one
        # byte more is refused, announced by Content-Length or not (chunked)
        biggest = ics_of_size("big", target.max_resource_size)
        r = put(dav, cal + "big.ics", biggest)
        assert r.status == 201, (r.status, r.data)
        r = dav("GET", cal + "big.ics")
        assert r.status == 200 and r.data == biggest.encode()
        assert dav("DELETE", cal + "big.ics").status == 204
        too_big = ics_of_size("big", target.max_resource_size + 1)
        assert precondition(put(dav, cal + "big.ics", too_big)) == [tag("C", "max-resource-size")]
        chunks = [too_big[i:i + 1000].encode() for i in range(0, len(too_big), 1000)]
        r = put(dav, cal + "big.ics", chunks)  # an iterable: http.client sends it chunked
        assert precondition(r) == [tag("C", "max-resource-size")]
        assert dav("GET", cal + "big.ics").status == 404

        # XML request bodies beyond the build's limit: 413 before anything is parsed, saying
        # what the limit is
        padding = "<D:prop/>" * (target.xml_body_max // 9 + 1)
        r = dav("REPORT", cal, f'<D:sync-collection xmlns:D="DAV:">{padding}</D:sync-collection>')
        assert r.status == 413 and f" {target.xml_body_max} bytes" in r.data.decode(), (r.status, r.data)
        r = dav("REPORT", cal, '<D:expand-property xmlns:D="DAV:"/>')
        assert precondition(r) == [tag("D", "supported-report")]
        assert dav("DELETE", cal + "e.ics").status == 204

    # outside calendars (a plain WebDAV collection) a resource over the limit is a plain 413
    plain = f"{HOME}plain-{secrets.token_hex(3)}/"
    assert dav("MKCOL", plain).status == 201
    try:
        r = dav("PUT", plain + "x.bin", b"x" * (target.max_resource_size + 1))
        assert r.status == 413 and f" {target.max_resource_size} bytes" in r.data.decode(), \
            (r.status, r.data)
        assert dav("GET", plain + "x.bin").status == 404
    finally:
        assert dav("DELETE", plain).status == 204
    dav.close()
