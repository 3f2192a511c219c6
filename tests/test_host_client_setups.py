"""What DAVx5, Thunderbird and Apple Calendar send when an account is set up against the server
root, http://HOST:PORT/, and at their first sync, replayed against litedav-host request by
request (issue 32's "clients pointed at the server root work").

The sequences are written down from the clients' documentation and trackers, as facts: which
requests, in which order, asking for which properties. The request bodies here are our own.
- DAVx5 (its manual's "service discovery" and the bitfire dav4jvm property set): PROPFIND
  Depth 0 on the given URL for current-user-principal, then /.well-known/caldav; the principal
  for calendar-home-set and calendar-user-address-set; the home Depth 1 for the collection
  properties it shows (resourcetype, displayname, calendar-color, calendar-description,
  calendar-timezone, supported-calendar-component-set, current-user-privilege-set, owner,
  source); per calendar getctag and sync-token, REPORT sync-collection, calendar-multiget.
  New events are PUT with If-None-Match: *.
- Thunderbird (calDavCalendar.js): PROPFIND Depth 0 on the calendar for resourcetype, owner,
  current-user-principal, current-user-privilege-set, supported-report-set,
  supported-calendar-component-set and getctag; OPTIONS for the DAV header's calendar-access and
  scheduling tokens; the principal for calendar-home-set, calendar-user-address-set,
  schedule-inbox-URL and schedule-outbox-URL; PROPFIND Depth 1 for getetag and getcontenttype
  of the members (or sync-collection where supported-report-set lists it), then multiget.
- Apple Calendar (Calendar Server's client notes, "Account Discovery Details"): PROPFIND on
  /.well-known/caldav (and the root) for current-user-principal, principal-URL, resourcetype;
  the principal for a long list (calendar-home-set, calendar-user-address-set, displayname,
  email-address-set, schedule-inbox-URL, schedule-outbox-URL, principal-collection-set,
  supported-report-set, dropbox-home-URL, notification-URL...); OPTIONS on the principal;
  the home Depth 1 for about forty properties, most of them Apple's and Calendar Server's own
  that this server does not have; MKCALENDAR carrying displayname, calendar-color,
  calendar-order, calendar-timezone and supported-calendar-component-set; PROPPATCH of
  calendar-order when calendars are reordered.

What the server must do for each: answer every request (207 where a multistatus is asked for),
give each property asked for a propstat (200, or 404 for what it does not have, never an error
for the whole request), and give the values a client needs to go on. Properties a sequence asks
for that this server has must come back 200.
"""
import secrets

import pytest

from caldav_checks import HOME, NS, Dav, ics, multistatus, put, responses, tag
from test_host_server import host_build, start_server, dav_target  # noqa: F401

CS = "http://calendarserver.org/ns/"
APPLE = "http://apple.com/ns/ical/"
ME = "http://me.com/_namespace/"
DECL = f'xmlns:D="DAV:" xmlns:C="{NS["C"]}" xmlns:CS="{CS}" xmlns:A="{APPLE}" xmlns:ME="{ME}"'


@pytest.fixture(scope="module")
def server(host_build, tmp_path_factory):
    srv = start_server("--store", str(tmp_path_factory.mktemp("setups") / "store.flash"))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


def qname(p):
    prefix, name = p.split(":")
    return "{%s}%s" % ({"D": "DAV:", "C": NS["C"], "CS": CS, "A": APPLE, "ME": ME}[prefix], name)


def propfind(dav, path, props, depth="0"):
    """The multistatus of a PROPFIND for props, every property of every response answered."""
    body = f'<?xml version="1.0" encoding="UTF-8"?><D:propfind {DECL}><D:prop>' + \
        "".join(f"<{p}/>" for p in props) + "</D:prop></D:propfind>"
    r = dav("PROPFIND", path, body, {"Depth": depth, "Content-Type": "application/xml; charset=utf-8"})
    out = responses(multistatus(r))
    for href, entry in out.items():
        answered = set(entry["props"])
        assert answered == {qname(p) for p in props}, (href, {qname(p) for p in props} - answered)
        for p, (code, _) in entry["props"].items():
            assert code in (200, 404), (href, p, code)
    return out


def value(entry, p):
    code, el = entry["props"][qname(p)]
    assert code == 200, (p, code)
    return el


def href_of(entry, p):
    el = value(entry, p).find("D:href", NS)
    assert el is not None and el.text, p
    return el.text


def have(entry, props):
    """Which of props came back 200."""
    return {p for p in props if entry["props"][qname(p)][0] == 200}


def first_sync(dav, cal, names):
    """A client's first sync of cal: sync-collection for the members and a token, then
    calendar-multiget of every member with getetag and calendar-data."""
    body = (f'<?xml version="1.0" encoding="UTF-8"?><D:sync-collection {DECL}><D:sync-token/>'
            '<D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>')
    tree = multistatus(dav("REPORT", cal, body, {"Depth": "0", "Content-Type": "application/xml"}))
    assert tree.find("D:sync-token", NS).text
    hrefs = sorted(h for h in responses(tree) if h != cal)
    assert hrefs == sorted(cal + n for n in names)
    body = (f'<?xml version="1.0" encoding="UTF-8"?><C:calendar-multiget {DECL}><D:prop><D:getetag/>'
            '<C:calendar-data/></D:prop>' + "".join(f"<D:href>{h}</D:href>" for h in hrefs) +
            '</C:calendar-multiget>')
    got = responses(multistatus(dav("REPORT", cal, body, {"Depth": "1", "Content-Type": "application/xml"})))
    for h in hrefs:
        assert "BEGIN:VCALENDAR" in value(got[h], "C:calendar-data").text
    return got


def test_davx5_setup_from_the_root(target):
    dav = Dav(target)
    root = propfind(dav, "/", ["D:resourcetype", "D:displayname", "D:current-user-principal",
                               "C:calendar-home-set", "D:current-user-privilege-set"])
    principal = href_of(root["/"], "D:current-user-principal")
    assert principal == HOME
    r = dav("PROPFIND", "/.well-known/caldav", headers={"Depth": "0"})
    assert r.status in (207, 301), r.status
    p = propfind(dav, principal, ["C:calendar-home-set", "C:calendar-user-address-set", "D:displayname",
                                  "D:group-membership", "CS:calendar-proxy-read-for",
                                  "CS:calendar-proxy-write-for"])
    home = href_of(p[principal], "C:calendar-home-set")
    assert home == HOME
    cal = f"{HOME}davx5-{secrets.token_hex(3)}/"
    assert dav("MKCALENDAR", cal).status == 201
    try:
        collection_props = ["D:resourcetype", "D:displayname", "A:calendar-color", "C:calendar-description",
                            "C:calendar-timezone", "C:supported-calendar-component-set",
                            "D:current-user-privilege-set", "D:owner", "CS:source", "D:sync-token"]
        listing = propfind(dav, home, collection_props, depth="1")
        entry = listing[cal]
        assert value(entry, "D:resourcetype").find("C:calendar", NS) is not None
        assert {c.get("name") for c in value(entry, "C:supported-calendar-component-set")} == \
            {"VEVENT", "VTODO", "VJOURNAL"}
        privileges = [el.tag for el in value(entry, "D:current-user-privilege-set").iter()]
        assert tag("D", "write") in privileges or tag("D", "all") in privileges  # not read-only
        assert {"D:resourcetype", "C:supported-calendar-component-set", "D:current-user-privilege-set",
                "D:owner", "D:sync-token"} <= have(entry, collection_props)
        for n in ("a.ics", "b.ics"):
            assert put(dav, cal + n, ics(n), {"If-None-Match": "*"}).status == 201
        assert put(dav, cal + "a.ics", ics("a.ics"), {"If-None-Match": "*"}).status == 412
        state = propfind(dav, cal, ["CS:getctag", "D:sync-token", "D:supported-report-set"])
        reports = [el.tag for el in value(state[cal], "D:supported-report-set").iter()]
        assert tag("D", "sync-collection") in reports and tag("C", "calendar-multiget") in reports
        first_sync(dav, cal, ["a.ics", "b.ics"])
    finally:
        assert dav("DELETE", cal).status == 204


def test_thunderbird_setup_of_a_calendar_url(target):
    dav = Dav(target)
    cal = f"{HOME}tb-{secrets.token_hex(3)}/"
    assert dav("MKCALENDAR", cal).status == 201
    try:
        props = ["D:resourcetype", "D:owner", "D:current-user-principal", "D:current-user-privilege-set",
                 "D:supported-report-set", "C:supported-calendar-component-set", "CS:getctag"]
        entry = propfind(dav, cal, props)[cal]
        assert have(entry, props) == set(props)
        principal = href_of(entry, "D:current-user-principal")
        r = dav("OPTIONS", cal)
        assert r.status == 200 and "calendar-access" in r.getheader("DAV", ""), r.getheaders()
        p = propfind(dav, principal, ["C:calendar-home-set", "C:calendar-user-address-set",
                                      "C:schedule-inbox-URL", "C:schedule-outbox-URL"])
        assert href_of(p[principal], "C:calendar-home-set") == HOME
        assert href_of(p[principal], "C:schedule-outbox-URL")  # Thunderbird's free-busy lookups
        assert put(dav, cal + "tb.ics", ics("tb"), {"If-None-Match": "*"}).status == 201
        members = propfind(dav, cal, ["D:getetag", "D:getcontenttype", "D:resourcetype"], depth="1")
        assert value(members[cal + "tb.ics"], "D:getcontenttype").text.startswith("text/calendar")
        first_sync(dav, cal, ["tb.ics"])
    finally:
        assert dav("DELETE", cal).status == 204


def test_apple_calendar_setup_from_the_root(target):
    dav = Dav(target)
    for start in ("/.well-known/caldav", "/"):
        r = dav("PROPFIND", start, f'<?xml version="1.0"?><D:propfind {DECL}><D:prop><D:current-user-principal/>'
                '<D:principal-URL/><D:resourcetype/></D:prop></D:propfind>', {"Depth": "0"})
        if r.status == 301:  # .well-known redirects (RFC 6764 section 5)
            assert r.getheader("Location") in (HOME, "/dav/"), r.getheader("Location")
            continue
        got = responses(multistatus(r))
        assert href_of(got[start], "D:current-user-principal") == HOME
    principal_props = ["C:calendar-home-set", "C:calendar-user-address-set", "D:current-user-principal",
                       "D:displayname", "CS:dropbox-home-URL", "CS:email-address-set", "CS:notification-URL",
                       "D:principal-collection-set", "D:principal-URL", "D:resource-id",
                       "C:schedule-inbox-URL", "C:schedule-outbox-URL", "D:supported-report-set"]
    p = propfind(dav, HOME, principal_props)[HOME]
    assert href_of(p, "C:calendar-home-set") == HOME and href_of(p, "D:principal-URL") == HOME
    # where to search for principals (RFC 3744 5.8), the scheduling mailboxes (RFC 6638 2.1, 2.2)
    assert {"D:principal-collection-set", "C:calendar-user-address-set", "C:schedule-inbox-URL",
            "C:schedule-outbox-URL"} <= have(p, principal_props)
    for mailbox in ("C:schedule-inbox-URL", "C:schedule-outbox-URL"):
        assert dav("PROPFIND", href_of(p, mailbox), headers={"Depth": "0"}).status == 207
    assert dav("OPTIONS", HOME).status == 200
    home_props = ["D:add-member", "CS:allowed-sharing-modes", "A:autoprovisioned", "ME:bulk-requests",
                  "A:calendar-color", "C:calendar-description", "C:calendar-free-busy-set", "A:calendar-order",
                  "C:calendar-timezone", "D:current-user-privilege-set", "C:default-alarm-vevent-date",
                  "C:default-alarm-vevent-datetime", "D:displayname", "CS:getctag", "A:language-code",
                  "A:location-code", "D:owner", "CS:pre-publish-url", "CS:publish-url", "CS:push-transports",
                  "CS:pushkey", "D:quota-available-bytes", "D:quota-used-bytes", "A:refreshrate",
                  "D:resource-id", "D:resourcetype", "C:schedule-calendar-transp",
                  "C:schedule-default-calendar-URL", "CS:source", "CS:subscribed-strip-alarms",
                  "CS:subscribed-strip-attachments", "CS:subscribed-strip-todos",
                  "C:supported-calendar-component-set", "C:supported-calendar-component-sets",
                  "D:supported-report-set", "D:sync-token"]
    propfind(dav, HOME, home_props, depth="1")
    # a new calendar as Apple Calendar makes one: its colour, its place in the list, events only
    cal = f"{HOME}{secrets.token_hex(8).upper()}/"
    body = (f'<?xml version="1.0" encoding="UTF-8"?><C:mkcalendar {DECL}><D:set><D:prop>'
            '<D:displayname>Home</D:displayname><A:calendar-color>#1BADF8FF</A:calendar-color>'
            '<A:calendar-order>3</A:calendar-order><C:supported-calendar-component-set>'
            '<C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>')
    assert dav("MKCALENDAR", cal, body, {"Content-Type": "application/xml"}).status == 201
    try:
        entry = propfind(dav, HOME, home_props, depth="1")[cal]
        assert value(entry, "D:displayname").text == "Home"
        assert value(entry, "A:calendar-color").text == "#1BADF8FF"
        assert value(entry, "A:calendar-order").text == "3"
        assert [c.get("name") for c in value(entry, "C:supported-calendar-component-set")] == ["VEVENT"]
        # reordering the calendar list: a PROPPATCH of calendar-order
        body = (f'<?xml version="1.0" encoding="UTF-8"?><D:propertyupdate {DECL}><D:set><D:prop>'
                '<A:calendar-order>1</A:calendar-order></D:prop></D:set></D:propertyupdate>')
        r = responses(multistatus(dav("PROPPATCH", cal, body, {"Content-Type": "application/xml"})))
        assert r[cal]["props"][qname("A:calendar-order")][0] == 200
        entry = propfind(dav, cal, ["A:calendar-order", "A:calendar-color"])[cal]
        assert value(entry, "A:calendar-order").text == "1"
        assert value(entry, "A:calendar-color").text == "#1BADF8FF"
        assert put(dav, cal + "E1.ics", ics("E1"), {"If-None-Match": "*"}).status == 201
        first_sync(dav, cal, ["E1.ics"])
    finally:
        assert dav("DELETE", cal).status == 204
