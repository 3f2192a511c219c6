"""CalDAV checks shared by every target (see caldav_checks.py): REPORTs
(calendar-multiget, calendar-query with time ranges over recurrences,
free-busy-query), sync-collection (RFC 6578), requests beyond the target's
/dav/ request contexts, concurrent clients, and the python `caldav` client as
calendar apps use the protocol."""
import base64
import datetime
import re
import secrets
import socket
import threading
import xml.etree.ElementTree as ET

import caldav

from http_checks import status
from caldav_checks import (HOME, NS, PASSWORD, RECURRING, USER, Dav, calendar, error_element,
                           ics, ics_of_size, multistatus, precondition, put, responses, tag)


XMLNS_DC = 'xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"'


def report(dav, path, body, depth="1"):
    return responses(multistatus(dav("REPORT", path, body, {"Depth": depth,
                                                             "Content-Type": "application/xml"})))


def test_caldav_calendar_multiget(target):
    dav = Dav(target)
    with calendar(dav, "mget") as cal:
        r = put(dav, cal + "w.ics", RECURRING)
        assert r.status == 201
        etag = r.getheader("ETag")
        assert put(dav, cal + "t.ics", ics("t1", comp="VTODO")).status == 201
        body = ('<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
                '<D:getetag/><C:calendar-data/><D:bogus/></D:prop>'
                f'<D:href>{cal}w.ics</D:href><D:href>{cal}t.ics</D:href>'
                f'<D:href>{cal}none.ics</D:href><D:href>/dav/nobody/cal/x.ics</D:href>'
                '</C:calendar-multiget>')
        got = report(dav, cal, body)
        assert sorted(got) == sorted([cal + "w.ics", cal + "t.ics", cal + "none.ics",
                                      "/dav/nobody/cal/x.ics"])
        w = got[cal + "w.ics"]["props"]
        # CRs travel as &#13; so the data comes back byte for byte
        assert w[tag("C", "calendar-data")][1].text == RECURRING
        assert w[tag("D", "getetag")][1].text == etag
        assert w[tag("D", "bogus")][0] == 404
        assert got[cal + "t.ics"]["props"][tag("C", "calendar-data")][1].text == \
            ics("t1", comp="VTODO")
        assert got[cal + "none.ics"]["status"] == 404
        assert got["/dav/nobody/cal/x.ics"]["status"] == 404
        for name in ("w.ics", "t.ics"):
            assert dav("DELETE", cal + name).status == 204


def test_caldav_calendar_query(target):
    """Filters of RFC 4791 section 9.7: time ranges over a recurring event with an EXDATE and an
    override, and (not on a quick target) prop-filter, text-match (collations, negation),
    is-not-defined."""
    dav = Dav(target)
    with calendar(dav, "query") as cal:
        assert put(dav, cal + "w.ics", RECURRING).status == 201
        todo = ics("t1", comp="VTODO", start="20240105T170000Z", extra="CATEGORIES:Finance\r\n")
        assert put(dav, cal + "t.ics", todo).status == 201
        single = ics("s1", start="20240110T120000Z", extra="TRANSP:OPAQUE\r\n")
        assert put(dav, cal + "s.ics", single).status == 201

        def query(filt, props="<D:getetag/>"):
            body = ('<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
                    f'<D:prop>{props}</D:prop><C:filter>{filt}</C:filter></C:calendar-query>')
            return report(dav, cal, body)

        def hrefs(filt):
            return sorted(query(filt))

        def events(inner):
            return hrefs('<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">'
                         f'{inner}</C:comp-filter></C:comp-filter>')

        def between(start, end):
            return events(f'<C:time-range start="{start}" end="{end}"/>')

        w, s, t = cal + "w.ics", cal + "s.ics", cal + "t.ics"
        assert events("") == [s, w]
        assert hrefs('<C:comp-filter name="VCALENDAR"/>') == [s, t, w]
        # the instance of Jan 1 and the single event of Jan 10
        assert between("20240101T000000Z", "20240111T000000Z") == [s, w]
        # Jan 8 is an EXDATE; the Jan 15 instance moved to the 16th, 14:00-15:00
        assert between("20240108T000000Z", "20240109T000000Z") == []
        assert between("20240115T000000Z", "20240116T000000Z") == []
        assert between("20240116T130000Z", "20240116T160000Z") == [w]
        assert between("20240116T150000Z", "20240116T160000Z") == []  # end is exclusive
        # the 10th and last instance is March 4; nothing after it
        assert between("20240304T000000Z", "20240305T000000Z") == [w]
        assert between("20240311T000000Z", "20241231T000000Z") == []
        # a todo by its DUE
        assert hrefs('<C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO"><C:time-range '
                     'start="20240105T000000Z" end="20240106T000000Z"/></C:comp-filter>'
                     '</C:comp-filter>') == [t]

        if not target.quick:  # property filters (a quick target checks the time ranges only)
            assert events('<C:prop-filter name="SUMMARY"><C:text-match>WEEKLY SYNC</C:text-match>'
                          '</C:prop-filter>') == [w]
            assert events('<C:prop-filter name="SUMMARY"><C:text-match collation="i;octet">WEEKLY'
                          '</C:text-match></C:prop-filter>') == []
            # any VEVENT of the object will do: the override of w.ics has no RRULE
            assert events('<C:prop-filter name="RRULE"><C:is-not-defined/></C:prop-filter>') == [s, w]
            assert events('<C:prop-filter name="TRANSP"><C:is-not-defined/></C:prop-filter>') == [w]
            assert events('<C:prop-filter name="SUMMARY"><C:text-match negate-condition="yes">weekly'
                          '</C:text-match></C:prop-filter>') == [s]
            assert hrefs('<C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO"><C:prop-filter '
                         'name="CATEGORIES"><C:text-match>finance</C:text-match></C:prop-filter>'
                         '</C:comp-filter></C:comp-filter>') == [t]

        # calendar-data of what matched, byte for byte
        got = query('<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT"><C:time-range '
                    'start="20240110T000000Z" end="20240111T000000Z"/></C:comp-filter>'
                    '</C:comp-filter>', "<D:getetag/><C:calendar-data/>")
        assert list(got) == [s] and got[s]["props"][tag("C", "calendar-data")][1].text == single

        r = dav("REPORT", cal, '<C:calendar-query xmlns:C="urn:ietf:params:xml:ns:caldav">'
                '<C:filter><C:comp-filter name="VCALENDAR"><C:prop-filter name="X"><C:text-match '
                'collation="i;klingon">a</C:text-match></C:prop-filter></C:comp-filter></C:filter>'
                '</C:calendar-query>', {"Depth": "1"})
        assert precondition(r) == [tag("C", "supported-collation")]
        for name in ("w.ics", "t.ics", "s.ics"):
            assert dav("DELETE", cal + name).status == 204


def test_caldav_calendar_data_expand(target):
    """calendar-data with expand (RFC 4791 section 9.6.5) and limit-recurrence-set (9.6.6) on
    RECURRING (weekly from Jan 1, Jan 8 excluded, Jan 15 moved to the 16th): the instances of
    Jan 1-24 as components of their own, in UTC, the override in place of Jan 15, no RRULE;
    the master and no override for February. Rendered in pieces of the target's own size
    (tests/test_host_expand.py has the rest: zones, todos, large answers, the response cache)."""
    dav = Dav(target)
    with calendar(dav, "expand") as cal:
        assert put(dav, cal + "w.ics", RECURRING).status == 201
        head = '<D:prop><D:getetag/><C:calendar-data><C:{} start="{}" end="{}"/></C:calendar-data></D:prop>'
        jan = head.format("expand", "20240101T000000Z", "20240125T000000Z")
        for body in (f'<C:calendar-multiget {XMLNS_DC}>{jan}<D:href>{cal}w.ics</D:href></C:calendar-multiget>',
                     f'<C:calendar-query {XMLNS_DC}>{jan}<C:filter><C:comp-filter name="VCALENDAR"/></C:filter>'
                     '</C:calendar-query>'):
            data = report(dav, cal, body)[cal + "w.ics"]["props"][tag("C", "calendar-data")][1].text
            lines = data.split("\r\n")
            assert "RRULE:FREQ=WEEKLY;COUNT=10" not in lines and not any(x.startswith("EXDATE") for x in lines)
            starts = sorted(x for x in lines if x.startswith("DTSTART"))
            rids = sorted(x for x in lines if x.startswith("RECURRENCE-ID"))
            assert starts == ["DTSTART:20240101T090000Z", "DTSTART:20240116T140000Z",
                              "DTSTART:20240122T090000Z"], data
            assert rids == ["RECURRENCE-ID:20240101T090000Z", "RECURRENCE-ID:20240115T090000Z",
                            "RECURRENCE-ID:20240122T090000Z"], data
        feb = head.format("limit-recurrence-set", "20240201T000000Z", "20240301T000000Z")
        data = report(dav, cal, f'<C:calendar-multiget {XMLNS_DC}>{feb}<D:href>{cal}w.ics</D:href>'
                      '</C:calendar-multiget>')[cal + "w.ics"]["props"][tag("C", "calendar-data")][1].text
        override = RECURRING.index("BEGIN:VEVENT", RECURRING.index("BEGIN:VEVENT") + 1)
        assert data == RECURRING[:override] + "END:VCALENDAR\r\n", data
        r = dav("REPORT", cal, f'<C:calendar-multiget {XMLNS_DC}>' + head.format("expand", "20240101T000000Z", "x")
                + f'<D:href>{cal}w.ics</D:href></C:calendar-multiget>', {"Content-Type": "application/xml"})
        assert r.status == 400, (r.status, r.data)
        assert dav("DELETE", cal + "w.ics").status == 204


def test_dav_principal_search_and_free_busy_post(target):
    """One round trip of each REPORT and method the principal work added: principal-property-search
    (RFC 3744 section 9.4) finds the caller's own principal by a piece of its displayname in
    another case, from the principal collection; principal-search-property-set (9.5) names
    DAV:displayname; and where the build has RFC 6638's part
    (Target.scheduling), a VFREEBUSY REQUEST POSTed to the caller's outbox (section 5) comes back
    as a schedule-response whose REPLY holds the busy time of an event (tests/test_host_principals.py
    and test_host_scheduling.py have the rest)."""
    dav = Dav(target)
    body = ('<?xml version="1.0"?><D:principal-property-search xmlns:D="DAV:"><D:property-search>'
            f'<D:prop><D:displayname/></D:prop><D:match>{USER[1:].upper()}</D:match></D:property-search>'
            '<D:prop><D:displayname/></D:prop><D:apply-to-principal-collection-set/>'
            '</D:principal-property-search>')
    assert sorted(report(dav, "/dav/", body, depth="0")) == [HOME]
    # what may be searched (section 9.5)
    r = dav("REPORT", "/dav/", '<?xml version="1.0"?><D:principal-search-property-set xmlns:D="DAV:"/>',
            {"Depth": "0", "Content-Type": "application/xml"})
    assert r.status == 200, (r.status, r.data)
    searchable = ET.fromstring(r.data).findall("D:principal-search-property/D:prop/*", NS)
    assert tag("D", "displayname") in [p.tag for p in searchable]
    if not target.scheduling:
        return
    with calendar(dav, "fbpost") as cal:
        assert put(dav, cal + "s.ics", ics("fbpost-1", start="20300109T100000Z")).status == 201
        outbox = HOME + "outbox/"
        request = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nMETHOD:REQUEST\r\n"
                   "BEGIN:VFREEBUSY\r\nUID:fbpost\r\nDTSTAMP:20300101T000000Z\r\n"
                   "DTSTART:20300109T000000Z\r\nDTEND:20300110T000000Z\r\n"
                   f"ORGANIZER:{HOME}\r\nATTENDEE:{HOME}\r\nEND:VFREEBUSY\r\nEND:VCALENDAR\r\n")
        r = dav("POST", outbox, request, {"Content-Type": "text/calendar; charset=utf-8"})
        assert r.status == 200, (r.status, r.data)
        root = ET.fromstring(r.data)
        assert root.tag == tag("C", "schedule-response")
        (answer,) = root.findall("C:response", NS)
        assert answer.find("C:request-status", NS).text.startswith("2.0")
        reply = answer.find("C:calendar-data", NS).text
        assert "METHOD:REPLY" in reply and "FREEBUSY;FBTYPE=BUSY:20300109T100000Z/20300109T235900Z" in reply, reply


def test_caldav_free_busy_query(target):
    dav = Dav(target)
    with calendar(dav, "fb") as cal:
        assert put(dav, cal + "w.ics", RECURRING).status == 201
        assert put(dav, cal + "s.ics", ics("s1", start="20240110T120000Z")).status == 201
        assert put(dav, cal + "f.ics", ics("f1", start="20240111T120000Z",
                                           extra="TRANSP:TRANSPARENT\r\n")).status == 201
        body = ('<C:free-busy-query xmlns:C="urn:ietf:params:xml:ns:caldav"><C:time-range '
                'start="20240110T000000Z" end="20240117T000000Z"/></C:free-busy-query>')
        r = dav("REPORT", cal, body, {"Depth": "1"})
        assert r.status == 200 and r.getheader("Content-Type").startswith("text/calendar")
        periods = sorted(re.findall(r"FREEBUSY;FBTYPE=BUSY:(\S+)", r.data.decode()))
        # the transparent event of the 11th takes no time
        assert periods == ["20240110T120000Z/20240110T235900Z", "20240116T140000Z/20240116T150000Z"]
        for name in ("w.ics", "s.ics", "f.ics"):
            assert dav("DELETE", cal + name).status == 204


def sync(dav, path, token="", limit=None, props="<D:getetag/>"):
    """A sync-collection REPORT (RFC 6578 section 3.2): (responses, new token)."""
    lim = f"<D:limit><D:nresults>{limit}</D:nresults></D:limit>" if limit else ""
    body = (f'<D:sync-collection xmlns:D="DAV:"><D:sync-token>{token}</D:sync-token>'
            f'<D:sync-level>1</D:sync-level>{lim}<D:prop>{props}</D:prop></D:sync-collection>')
    tree = multistatus(dav("REPORT", path, body, {"Depth": "0"}))
    return responses(tree), tree.find("D:sync-token", NS).text


def test_dav_sync_collection(target):
    """Initial sync, then only what changed: a changed member with its new ETag, a deleted one as a
    404; paging with a limit (507 on the request-URI, section 3.6); tokens it did not issue for
    this collection are refused with DAV:valid-sync-token (section 3.2)."""
    dav = Dav(target)
    first = 3 if target.quick else 5
    more = 2 if target.quick else 4
    with calendar(dav, "sync") as cal, calendar(Dav(target), "other") as other:
        got, empty_token = sync(dav, cal)
        assert got == {} and empty_token.startswith("urn:litedav:sync:")
        etags = {}
        for i in range(first):
            r = put(dav, f"{cal}{i}.ics", ics(f"s{i}"))
            assert r.status == 201
            etags[f"{cal}{i}.ics"] = r.getheader("ETag")
        got, token = sync(dav, cal)
        assert {h: e["props"][tag("D", "getetag")][1].text for h, e in got.items()} == etags
        assert sync(dav, cal, empty_token)[0].keys() == etags.keys()

        assert dav("DELETE", f"{cal}1.ics").status == 204
        r = put(dav, f"{cal}2.ics", ics("s2", extra="LOCATION:x\r\n"))
        assert r.status == 204
        got, token2 = sync(dav, cal, token)
        assert sorted(got) == [f"{cal}1.ics", f"{cal}2.ics"]
        assert got[f"{cal}1.ics"]["status"] == 404 and not got[f"{cal}1.ics"]["props"]
        code, etag = got[f"{cal}2.ics"]["props"][tag("D", "getetag")]
        assert code == 200 and etag.text == r.getheader("ETag")
        assert token2 != token
        assert sync(dav, cal, token2) == ({}, token2)
        # a change elsewhere is not one here
        assert put(dav, other + "x.ics", ics("x")).status == 201
        assert sync(dav, cal, token2) == ({}, token2)

        # paging: 2 at a time, the request-URI with 507 while more are left
        for i in range(first, first + more):
            assert put(dav, f"{cal}{i}.ics", ics(f"s{i}")).status == 201
        seen, tok = [], token2
        for _ in range(more):
            got, tok = sync(dav, cal, tok, limit=2)
            truncated = got.pop(cal, None)
            assert len(got) <= 2
            seen += sorted(got)
            if truncated is None:
                break
            assert truncated["status"] == 507
        assert seen == [f"{cal}{i}.ics" for i in range(first, first + more)]
        assert sync(dav, cal, tok) == ({}, tok)

        other_token = sync(dav, other)[1]
        coll, seq = re.fullmatch(r"urn:litedav:sync:(\d+):(\d+)", token).groups()
        for bad in ("nonsense", "urn:litedav:sync:", f"urn:litedav:sync:{coll}:x", other_token,
                    f"urn:litedav:sync:{coll}:999999999"):
            r = dav("REPORT", cal, f'<D:sync-collection xmlns:D="DAV:"><D:sync-token>{bad}'
                    '</D:sync-token><D:sync-level>1</D:sync-level><D:prop/></D:sync-collection>',
                    {"Depth": "0"})
            assert r.status == 403 and error_element(r) == [tag("D", "valid-sync-token")], bad
        # DAV:limit's nresults is a positive decimal number of at most 32 bits
        for bad in ("", "0", "-1", "+2", "2x", "0x10", "4294967296", "99999999999"):
            r = dav("REPORT", cal, '<D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1'
                    f'</D:sync-level><D:limit><D:nresults>{bad}</D:nresults></D:limit><D:prop/>'
                    '</D:sync-collection>', {"Depth": "0"})
            assert r.status == 400, bad
        got, _ = sync(dav, cal, limit=" 4294967295 ")
        assert len(got) == first + more - 1
        assert dav("DELETE", other + "x.ics").status == 204
        for i in (0, *range(2, first + more)):
            assert dav("DELETE", f"{cal}{i}.ics").status == 204


def dav_head(method, path, length, extra=""):
    return (f"{method} {path} HTTP/1.1\r\nHost: litedav\r\nAuthorization: Basic "
            f"{base64.b64encode(f'{USER}:{PASSWORD}'.encode()).decode()}\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


def read_response(sock):
    """One response of a raw connection: (status line, headers, body); Content-Length framed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"closed after {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", 0))
    while len(rest) < length:
        chunk = sock.recv(4096)
        assert chunk, "closed inside a body"
        rest += chunk
    assert len(rest) == length, "more bytes than the response"
    return lines[0], headers, rest


def test_dav_requests_beyond_the_contexts_wait(target):
    """Target.dav_requests_max PUTs hold every /dav/ request context (each has been told
    100 Continue, so its context is taken, and sends its body only later); the status page still
    answers. The next /dav/ request (a PUT, its body sent at once) waits for a context instead of
    being refused: no answer while the PUTs hold them all, then its 201 once they are done (the
    status page counts the wait),
    with everything stored byte for byte."""
    dav = Dav(target)
    with calendar(dav, "busy") as cal:
        held, bodies = [], [ics_of_size(f"busy-{i}", 300 + i) for i in range(target.dav_requests_max)]
        late = ics_of_size("busy-late", 400)
        waiter = None
        try:
            for i, body in enumerate(bodies):
                s = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
                held.append(s)
                s.sendall(dav_head("PUT", f"{cal}{i}.ics", len(body),
                                   "Content-Type: text/calendar\r\nExpect: 100-continue\r\n"))
                assert read_response(s)[0] == "HTTP/1.1 100 Continue"
            before = status(target)  # a context-free route answers meanwhile
            assert before["dav_ctx_used"] == target.dav_requests_max, before
            waiter = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
            waiter.sendall(dav_head("PUT", f"{cal}late.ics", len(late), "Content-Type: text/calendar\r\n")
                           + late.encode())
            waiter.settimeout(1.0)
            try:
                early = waiter.recv(1)
            except socket.timeout:
                early = None
            assert early is None, f"answered while every context was held: {early!r}"
            waiter.settimeout(target.timeout)
            for s, body in zip(held, bodies):
                s.sendall(body.encode())
            for s in held:
                status_line, headers, _ = read_response(s)
                assert status_line == "HTTP/1.1 201 Created", (status_line, headers)
            status_line, headers, _ = read_response(waiter)
            assert status_line == "HTTP/1.1 201 Created", (status_line, headers)
        finally:
            for s in held + ([waiter] if waiter else []):
                s.close()
        after = status(target)
        assert after["dav_waited"] >= before["dav_waited"] + 1, (before, after)
        assert after["dav_refused"] == before["dav_refused"], (before, after)
        for i, body in enumerate(bodies):
            r = dav("GET", f"{cal}{i}.ics")
            assert r.status == 200 and r.data == body.encode()
            assert dav("DELETE", f"{cal}{i}.ics").status == 204
        r = dav("GET", f"{cal}late.ics")
        assert r.status == 200 and r.data == late.encode()
        assert dav("DELETE", f"{cal}late.ics").status == 204
        assert dav.retried == 0


def test_caldav_concurrent_clients(target):
    """Target.parallel_clients clients at once (4 on a quick target), each on its own keep-alive
    connection doing PUT/GET/DELETE cycles on its own objects, with bodies of different sizes
    that name their client and cycle: every body comes back byte for byte with its ETag, and
    every 503 (more clients than /dav/ request contexts) carries a Retry-After the client waits
    for."""
    rounds = 1 if target.quick else 4
    clients = min(target.parallel_clients, 4) if target.quick else target.parallel_clients
    largest = min(target.max_resource_size // 2, 1200)
    errors, retried = [], []
    owner = Dav(target)
    with calendar(owner, "conc") as cal:
        owner.close()  # its connection is not needed until the DELETE: all are the clients'
        def client(n):
            dav = Dav(target)
            try:
                for i in range(rounds):
                    path = f"{cal}c{n}-{i}.ics"
                    body = ics_of_size(f"c{n}-{i}", 250 + (n * 97 + i * 389) % (largest - 250),
                                       seed=secrets.token_hex(4))
                    r = put(dav, path, body, {"If-None-Match": "*"})
                    assert r.status == 201, (path, r.status, r.data)
                    etag = r.getheader("ETag")
                    r = dav("GET", path)
                    assert r.status == 200 and r.getheader("ETag") == etag, (path, r.status)
                    assert r.data == body.encode(), f"{path}: {len(r.data)} bytes, not its {len(body)}"
                    assert dav("DELETE", path, headers={"If-Match": etag}).status == 204, path
                    assert dav("GET", path).status == 404, path
            except Exception as e:  # reported below with the client number
                errors.append(f"client {n}: {e!r}")
            finally:
                retried.append(dav.retried)
                dav.close()

        threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(f"{clients} clients x {rounds} rounds: {sum(retried)} requests answered 503 and retried")
        assert not errors, "\n".join(errors)
        assert sum(retried) == 0, "requests beyond the contexts wait for one: no 503"
        listing = responses(multistatus(owner("PROPFIND", cal, headers={"Depth": "1"})))
        assert list(listing) == [cal], "objects left behind"


def utc(*a):
    return datetime.datetime(*a, tzinfo=datetime.timezone.utc)


def test_caldav_client_flow(target):
    """The python caldav client as calendar apps use the protocol: discovery, MKCALENDAR,
    events and todos, time-range searches over a recurring event, sync with a token, edit,
    delete."""
    client = caldav.DAVClient(url=f"http://127.0.0.1:{target.port}/dav/", username=USER,
                              password=PASSWORD, timeout=target.timeout)
    principal = client.principal()
    assert principal.url.path == HOME
    assert principal.calendar_home_set.url.path == HOME
    # pointed at the server itself (RFC 6764 section 6), the client finds the same principal
    from_root = caldav.DAVClient(url=f"http://127.0.0.1:{target.port}/", username=USER,
                                 password=PASSWORD, timeout=target.timeout)
    assert from_root.principal().url.path == HOME
    cal_id = f"work-{secrets.token_hex(3)}"
    cal = principal.make_calendar(name="Work", cal_id=cal_id)
    try:
        assert cal.url.path == f"{HOME}{cal_id}/"
        assert f"{HOME}{cal_id}/" in [c.url.path for c in principal.calendars()]
        assert cal.get_display_name() == "Work"

        event = cal.save_event(RECURRING)
        cal.save_event(ics("single-1", start="20240110T120000Z"))
        task = cal.save_todo(ics("todo-1", comp="VTODO", start="20240110T170000Z"))
        assert len(cal.events()) == 2 and len(cal.todos()) == 1

        def events_between(a, b):
            return sorted(e.icalendar_component["UID"] for e in cal.search(start=a, end=b, event=True,
                                                                           expand=False))
        assert events_between(utc(2024, 1, 1), utc(2024, 1, 11)) == ["single-1", "weekly-1"]
        assert events_between(utc(2024, 1, 16, 13), utc(2024, 1, 16, 16)) == ["weekly-1"]
        if not target.quick:
            assert events_between(utc(2024, 1, 8), utc(2024, 1, 9)) == []
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
    finally:
        cal.delete()
    assert f"{HOME}{cal_id}/" not in [c.url.path for c in principal.calendars()]
