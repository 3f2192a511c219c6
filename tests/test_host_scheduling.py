"""Scheduling (RFC 6638) as far as litedav-host goes, against a host build with two users: the
principal's CALDAV:schedule-inbox-URL and schedule-outbox-URL (sections 2.2, 2.1),
calendar-user-address-set (section 2.4.1: the principal's URL) and calendar-user-type (section
2.4.2); the inbox and outbox as collections a client can PROPFIND (empty, not writable, not
deletable); POST of a VFREEBUSY REQUEST to one's own outbox (section 5) answered with a
CALDAV:schedule-response carrying a VFREEBUSY REPLY per local attendee over all their calendars
and request status 3.7 for an unknown one; the preconditions of a bad POST. No implicit
scheduling (section 3), so no calendar-auto-schedule in the DAV header."""
import xml.etree.ElementTree as ET

import pytest

from caldav_checks import HOME, NS, Dav, calendar, error_element, ics, propfind, put, tag
from test_host_server import host_build, start_server, dav_target  # noqa: F401

OTHER, OTHER_PASSWORD = "bob", "bob-secret"
OTHER_HOME = f"/dav/{OTHER}/"
INBOX, OUTBOX = HOME + "inbox/", HOME + "outbox/"
DAY, NEXT_DAY = "20300109", "20300110"  # the free-busy range: this day, UTC


@pytest.fixture(scope="module")
def server(host_build):
    srv = start_server("--user", f"{OTHER}:{OTHER_PASSWORD}")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


def event(uid, start, end, extra=""):
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:{uid}\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{DAY}T{start}00Z\r\nDTEND:{DAY}T{end}00Z\r\n"
            f"{extra}SUMMARY:{uid}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def freebusy_request(attendees, organizer=HOME, method="METHOD:REQUEST\r\n", comp="VFREEBUSY",
                     start=f"{DAY}T000000Z", end=f"{NEXT_DAY}T000000Z"):
    lines = "".join(f"ATTENDEE:{a}\r\n" for a in attendees)
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + method +
            f"BEGIN:{comp}\r\nUID:fb-1\r\nDTSTAMP:20300101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\n"
            f"ORGANIZER:{organizer}\r\n{lines}END:{comp}\r\nEND:VCALENDAR\r\n")


def post(dav, path, text, content_type="text/calendar; charset=utf-8"):
    return dav("POST", path, text, {"Content-Type": content_type})


def schedule_response(r):
    """{recipient href: (request-status, calendar-data text or None)}, in the response's order."""
    assert r.status == 200, (r.status, r.data)
    assert r.getheader("Content-Type").startswith("application/xml")
    root = ET.fromstring(r.data)
    assert root.tag == tag("C", "schedule-response")
    out = {}
    for resp in root.findall("C:response", NS):
        href = resp.find("C:recipient/D:href", NS).text
        data = resp.find("C:calendar-data", NS)
        out[href] = (resp.find("C:request-status", NS).text, None if data is None else data.text)
    return out


def busy(reply):
    """The FREEBUSY lines of a REPLY, the iCalendar's own line ends kept."""
    assert "\r\n" in reply  # CR sent as a character reference survives the XML parser
    return sorted(line for line in reply.split("\r\n") if line.startswith("FREEBUSY"))


# ---- sections 2.1, 2.2, 2.4 --------------------------------------------------------------------

def test_principal_scheduling_properties(target):
    """Sections 2.1, 2.2, 2.4.1, 2.4.2 on the principal (the home), not on a calendar."""
    dav = Dav(target)
    names = ["C:schedule-inbox-URL", "C:schedule-outbox-URL", "C:calendar-user-address-set",
             "C:calendar-user-type"]
    props = propfind(dav, HOME, names)[HOME]["props"]
    assert props[tag("C", "schedule-inbox-URL")][1].find("D:href", NS).text == INBOX
    assert props[tag("C", "schedule-outbox-URL")][1].find("D:href", NS).text == OUTBOX
    assert [h.text for h in props[tag("C", "calendar-user-address-set")][1].findall("D:href", NS)] == [HOME]
    assert props[tag("C", "calendar-user-type")][1].text == "INDIVIDUAL"
    with calendar(dav, "sched-props") as cal:
        props = propfind(dav, cal, names)[cal]["props"]
        assert {code for code, _ in props.values()} == {404}


def test_mailboxes_propfind(target):
    """The inbox and outbox: collections with CALDAV:schedule-inbox / schedule-outbox in their
    resourcetype, owned by the user, the inbox empty at Depth 1; found without the slash too;
    another user's are forbidden."""
    dav = Dav(target)
    for path, kind in ((INBOX, "schedule-inbox"), (OUTBOX, "schedule-outbox")):
        got = propfind(dav, path, ["D:resourcetype", "D:owner", "D:displayname"], depth="1")
        assert list(got) == [path]
        props = got[path]["props"]
        rt = props[tag("D", "resourcetype")][1]
        assert {c.tag for c in rt} == {tag("D", "collection"), tag("C", kind)}
        assert props[tag("D", "owner")][1].find("D:href", NS).text == HOME
        assert props[tag("D", "displayname")][0] == 404
        assert list(propfind(dav, path[:-1], ["D:resourcetype"])) == [path]
        assert dav("PROPFIND", f"{OTHER_HOME}{path[len(HOME):]}", None, {"Depth": "0"}).status == 403
    # members of the home, listed after its calendars
    with calendar(dav, "beside-mailboxes") as cal:
        listed = propfind(dav, HOME, ["D:resourcetype"], depth="1")
        assert list(listed) == [HOME, cal, INBOX, OUTBOX]
        assert listed[INBOX]["props"][tag("D", "resourcetype")][1].find("C:schedule-inbox", NS) is not None


def test_mailboxes_are_not_writable(target):
    """The store keeps no mailbox: nothing can be put in, set on, copied or deleted."""
    dav = Dav(target)
    assert put(dav, INBOX + "x.ics", ics("inbox-x")).status == 409
    assert put(dav, INBOX[:-1], ics("inbox-y")).status == 405
    assert dav("MKCOL", INBOX).status == 405
    assert dav("MKCOL", OUTBOX + "sub/").status == 409
    assert dav("DELETE", OUTBOX).status == 403
    assert dav("COPY", INBOX, None, {"Destination": HOME + "copied/"}).status == 403
    with calendar(dav, "to-outbox") as cal:
        assert put(dav, cal + "e.ics", ics("to-outbox-e")).status == 201
        assert dav("MOVE", cal, None, {"Destination": OUTBOX, "Overwrite": "T"}).status == 403
        assert dav("COPY", cal + "e.ics", None, {"Destination": INBOX + "e.ics"}).status == 409
    patch = ('<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>'
             '<D:displayname>x</D:displayname></D:prop></D:set></D:propertyupdate>')
    r = dav("PROPPATCH", INBOX, patch)
    assert r.status == 207 and b"403" in r.data
    assert dav("GET", INBOX + "x.ics").status == 404


def test_no_calendar_auto_schedule(target):
    """Section 3's implicit scheduling is not done, so it is not claimed (RFC 6638 section 2)."""
    dav = Dav(target)
    r = dav("OPTIONS", HOME)
    dav_header = r.getheader("DAV")
    assert "calendar-access" in dav_header and "calendar-auto-schedule" not in dav_header


# ---- section 5 ---------------------------------------------------------------------------------

def test_freebusy_post_over_all_calendars(target):
    """Section 5: one CALDAV:response per ATTENDEE, in order; the user's own busy time over every
    calendar (busy and tentative; transparent and cancelled events left out, RFC 4791 section
    7.10), the other local user's over theirs, 3.7 for an address naming no user here. The
    principal's URL is recognised relative or absolute."""
    demo, bob = Dav(target), Dav(target, OTHER, OTHER_PASSWORD)
    with calendar(demo, "fb-a") as a, calendar(demo, "fb-b") as b:
        assert put(demo, a + "1.ics", event("fb-1", "0900", "1000")).status == 201
        assert put(demo, b + "2.ics", event("fb-2", "1400", "1530", "STATUS:TENTATIVE\r\n")).status == 201
        assert put(demo, b + "3.ics", event("fb-3", "1600", "1700", "TRANSP:TRANSPARENT\r\n")).status == 201
        assert put(demo, a + "4.ics", event("fb-4", "1800", "1900", "STATUS:CANCELLED\r\n")).status == 201
        bob_cal = OTHER_HOME + "work/"
        assert bob("MKCALENDAR", bob_cal).status == 201
        try:
            assert put(bob, bob_cal + "b.ics", event("fb-b", "1100", "1200")).status == 201
            absolute = f"http://127.0.0.1:{target.port}{HOME}"
            attendees = [absolute, "mailto:nobody@example.com", OTHER_HOME, "/dav/nobody/"]
            got = schedule_response(post(demo, OUTBOX, freebusy_request(attendees)))
            assert list(got) == attendees
            status, reply = got[absolute]
            assert status.startswith("2.0")
            assert busy(reply) == [f"FREEBUSY;FBTYPE=BUSY-TENTATIVE:{DAY}T140000Z/{DAY}T153000Z",
                                   f"FREEBUSY;FBTYPE=BUSY:{DAY}T090000Z/{DAY}T100000Z"]
            # RFC 5546 section 3.3.3: a REPLY with the request's UID, organizer and the attendee
            for line in ("METHOD:REPLY", "BEGIN:VFREEBUSY", "UID:fb-1", f"ORGANIZER:{HOME}",
                         f"ATTENDEE:{absolute}", f"DTSTART:{DAY}T000000Z"):
                assert line + "\r\n" in reply, line
            assert f"DTEND:{NEXT_DAY}T000000Z\r\n" in reply
            assert got["mailto:nobody@example.com"] == ("3.7;Invalid calendar user", None)
            assert got["/dav/nobody/"][0].startswith("3.7") and got["/dav/nobody/"][1] is None
            status, reply = got[OTHER_HOME]
            assert status.startswith("2.0")
            assert busy(reply) == [f"FREEBUSY;FBTYPE=BUSY:{DAY}T110000Z/{DAY}T120000Z"]
            # the outbox is the organizer's: bob asks through his own
            got = schedule_response(post(bob, OTHER_HOME + "outbox/", freebusy_request([HOME], OTHER_HOME)))
            assert busy(got[HOME][1]) == [f"FREEBUSY;FBTYPE=BUSY-TENTATIVE:{DAY}T140000Z/{DAY}T153000Z",
                                          f"FREEBUSY;FBTYPE=BUSY:{DAY}T090000Z/{DAY}T100000Z"]
        finally:
            assert bob("DELETE", bob_cal).status == 204


def test_freebusy_post_without_calendars(target):
    """A user with no calendar is free all the range: a REPLY without FREEBUSY lines."""
    bob = Dav(target, OTHER, OTHER_PASSWORD)
    got = schedule_response(post(bob, OTHER_HOME + "outbox", freebusy_request([OTHER_HOME], OTHER_HOME)))
    status, reply = got[OTHER_HOME]
    assert status.startswith("2.0") and busy(reply) == [] and "END:VFREEBUSY\r\n" in reply


def test_freebusy_post_refused(target):
    """Only the owner may POST to an outbox (403), only to an outbox (405); the request's
    preconditions: text/calendar (CALDAV:supported-calendar-data), valid iCalendar
    (valid-calendar-data), a VFREEBUSY REQUEST with a range and attendees
    (valid-scheduling-message), the organizer the outbox's owner (organizer-allowed)."""
    demo, bob = Dav(target), Dav(target, OTHER, OTHER_PASSWORD)
    good = freebusy_request([HOME])
    assert post(bob, OUTBOX, good).status == 403
    assert post(demo, INBOX, good).status == 405
    assert post(demo, HOME, good).status == 405
    with calendar(demo, "fb-post") as cal:
        assert post(demo, cal, good).status == 405

    def refused(r, status, name):
        assert r.status == status, (r.status, r.data)
        assert error_element(r) == [tag("C", name)]

    refused(post(demo, OUTBOX, good, "application/json"), 403, "supported-calendar-data")
    refused(post(demo, OUTBOX, "not iCalendar"), 400, "valid-calendar-data")
    refused(post(demo, OUTBOX, good.replace("UID:fb-1\r\n", "")), 400, "valid-calendar-data")
    refused(post(demo, OUTBOX, freebusy_request([HOME], method="")), 400, "valid-scheduling-message")
    refused(post(demo, OUTBOX, freebusy_request([HOME], method="METHOD:PUBLISH\r\n")), 400,
            "valid-scheduling-message")
    refused(post(demo, OUTBOX, freebusy_request([])), 400, "valid-scheduling-message")
    refused(post(demo, OUTBOX, freebusy_request([HOME], comp="VTODO")), 400, "valid-scheduling-message")
    refused(post(demo, OUTBOX, freebusy_request([HOME], start=f"{DAY}T120000Z", end=f"{DAY}T120000Z")), 400,
            "valid-scheduling-message")
    refused(post(demo, OUTBOX, freebusy_request([HOME], organizer=OTHER_HOME)), 403, "organizer-allowed")
    refused(post(demo, OUTBOX, freebusy_request([HOME], organizer="mailto:demo@example.com")), 403,
            "organizer-allowed")
    # and the outbox still answers afterwards
    assert schedule_response(post(demo, OUTBOX, good))[HOME][0].startswith("2.0")
