"""CALDAV:calendar-data with CALDAV:expand (RFC 4791 section 9.6.5) and
CALDAV:limit-recurrence-set (section 9.6.6) in calendar-query and calendar-multiget, against
litedav-host: the instances that overlap the range (section 9.9's rules) in UTC with their
RECURRENCE-ID, EXDATEs and overrides applied, no RRULE/RDATE/EXDATE and no VTIMEZONE; the master
and the overrides that affect the range; 400 for a missing or bad start/end; an answer larger than
a response piece; and responses kept rendered (dav_fragments.c) never standing in for an expanded
one, nor an expanded one for a plain one. Every expected instance below is worked out by hand
from the object's rules."""
import datetime
import re

import pytest

from caldav_checks import RECURRING, Dav, calendar, multistatus, put, responses, tag
from test_host_server import host_build, start_server, dav_target  # noqa: F401

CD = tag("C", "calendar-data")

# Europe/Berlin with its 2024 switches: CEST from 2024-03-31 02:00 local (01:00Z)
BERLIN = """BEGIN:VTIMEZONE\r
TZID:Europe/Berlin\r
BEGIN:DAYLIGHT\r
TZOFFSETFROM:+0100\r
TZOFFSETTO:+0200\r
TZNAME:CEST\r
DTSTART:19700329T020000\r
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r
END:DAYLIGHT\r
BEGIN:STANDARD\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0100\r
TZNAME:CET\r
DTSTART:19701025T030000\r
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r
END:STANDARD\r
END:VTIMEZONE\r
"""

# daily at 10:00 Berlin time, across the switch to summer time
ZONED = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + BERLIN +
         "BEGIN:VEVENT\r\nUID:zoned-1\r\nDTSTAMP:20240101T000000Z\r\n"
         "DTSTART;TZID=Europe/Berlin:20240325T100000\r\nDTEND;TZID=Europe/Berlin:20240325T110000\r\n"
         "RRULE:FREQ=DAILY;COUNT=10\r\nSUMMARY:Stand-up\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")

# a single event at 15:00 Berlin summer time (13:00Z)
SINGLE = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + BERLIN +
          "BEGIN:VEVENT\r\nUID:single-1\r\nDTSTAMP:20240101T000000Z\r\n"
          "DTSTART;TZID=Europe/Berlin:20240710T150000\r\nDTEND;TZID=Europe/Berlin:20240710T160000\r\n"
          "SUMMARY:Dentist\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")

# a daily task, due an hour after it starts, five times, with an alarm kept in each instance
TODO = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:todo-1\r\n"
        "DTSTAMP:20240101T000000Z\r\nDTSTART:20240105T120000Z\r\nDUE:20240105T130000Z\r\n"
        "RRULE:FREQ=DAILY;COUNT=5\r\nSUMMARY:Water the plants\r\n"
        "BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Water\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n"
        "END:VTODO\r\nEND:VCALENDAR\r\n")

# RECURRING (caldav_checks.py: weekly on Mondays 09:00Z from 2024-01-01, COUNT=10, 01-08
# excluded, 01-15 moved to 01-16 14:00Z) with a second override: 02-12 moved to 02-13
TWO_OVERRIDES = RECURRING.replace("END:VCALENDAR\r\n", (
    "BEGIN:VEVENT\r\nUID:weekly-1\r\nDTSTAMP:20240101T000000Z\r\nRECURRENCE-ID:20240212T090000Z\r\n"
    "DTSTART:20240213T090000Z\r\nDTEND:20240213T100000Z\r\nSUMMARY:Weekly sync (Tuesday)\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"))


@pytest.fixture(scope="module")
def server(host_build, tmp_path_factory):
    srv = start_server("--store", str(tmp_path_factory.mktemp("expand") / "store.flash"))
    yield srv
    assert srv.stop() == 0


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


def status(dav):
    """The counters of the status page (GET /): the response cache's among them."""
    r = dav("GET", "/")
    assert r.status == 200, r.status
    return {k: int(v) for k, v in re.findall(r"^(\w+): (\d+)$", r.data.decode(), re.M)}


def unfold(text):
    """Content lines of an iCalendar text (RFC 5545 section 3.1), each at most 75 octets folded."""
    assert text.endswith("\r\n"), text[-20:]
    physical = text[:-2].split("\r\n")
    for line in physical:
        assert len(line.encode()) <= 75, line
    out = []
    for line in physical:
        if line.startswith(" "):
            out[-1] += line[1:]
        else:
            out.append(line)
    return out


def components(text):
    """The VCALENDAR's direct components: [(name, [(prop name with params, value)], [children])]."""
    lines = unfold(text)
    assert lines[0] == "BEGIN:VCALENDAR" and lines[-1] == "END:VCALENDAR", lines
    stack, top = [], []
    for line in lines[1:-1]:
        head, _, value = line.partition(":")
        if head == "BEGIN":
            stack.append((value, [], []))
        elif head == "END":
            comp = stack.pop()
            assert comp[0] == value, line
            (stack[-1][2] if stack else top).append(comp)
        elif stack:
            stack[-1][1].append((head, value))
    assert not stack
    return top


def instances(text, kind="VEVENT"):
    """{RECURRENCE-ID or None: {prop: value}} of the expanded components of kind; no prop twice."""
    out = {}
    for name, props, _children in components(text):
        assert name != "VTIMEZONE", "expand leaves the time zones out (section 9.6.5)"
        if name != kind:
            continue
        d = {}
        for head, value in props:
            assert head not in d, f"{head} twice"
            d[head] = value
        rid = d.get("RECURRENCE-ID")
        assert rid not in out, f"instance {rid} twice"
        out[rid] = d
    return out


def data_of(got, href):
    code, el = got[href]["props"][CD]
    assert code == 200, got[href]
    return el.text


def calendar_data(expand=None, limit=None):
    if expand:
        return f'<C:calendar-data><C:expand start="{expand[0]}" end="{expand[1]}"/></C:calendar-data>'
    if limit:
        return (f'<C:calendar-data><C:limit-recurrence-set start="{limit[0]}" end="{limit[1]}"/>'
                '</C:calendar-data>')
    return "<C:calendar-data/>"


def multiget(dav, cal, names, **kw):
    body = ('<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
            f'<D:getetag/>{calendar_data(**kw)}</D:prop>'
            + "".join(f"<D:href>{cal}{n}</D:href>" for n in names) + "</C:calendar-multiget>")
    return dav("REPORT", cal, body, {"Depth": "1", "Content-Type": "application/xml"})


def query(dav, cal, comp="VEVENT", time_range=None, **kw):
    tr = f'<C:time-range start="{time_range[0]}" end="{time_range[1]}"/>' if time_range else ""
    body = ('<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
            f'<D:getetag/>{calendar_data(**kw)}</D:prop><C:filter><C:comp-filter name="VCALENDAR">'
            f'<C:comp-filter name="{comp}">{tr}</C:comp-filter></C:comp-filter></C:filter></C:calendar-query>')
    return dav("REPORT", cal, body, {"Depth": "1", "Content-Type": "application/xml"})


def ok(r):
    return responses(multistatus(r))


def event(rid, start, end, summary, uid="weekly-1"):
    return {"UID": uid, "DTSTAMP": "20240101T000000Z", "RECURRENCE-ID": rid, "DTSTART": start,
            "DTEND": end, "SUMMARY": summary}


def test_recurring_event_with_exdate_and_override(target):
    dav = Dav(target)
    with calendar(dav, "expand") as cal:
        assert put(dav, cal + "w.ics", RECURRING).status == 201
        # 01-01 and 01-22 generated, 01-08 excluded, 01-15 replaced by its override on 01-16
        for r in (multiget(dav, cal, ["w.ics"], expand=("20240101T000000Z", "20240125T000000Z")),
                  query(dav, cal, time_range=("20240101T000000Z", "20240125T000000Z"),
                        expand=("20240101T000000Z", "20240125T000000Z"))):
            got = ok(r)
            assert list(got) == [cal + "w.ics"]
            assert instances(data_of(got, cal + "w.ics")) == {
                "20240101T090000Z": event("20240101T090000Z", "20240101T090000Z", "20240101T100000Z",
                                          "Weekly sync"),
                "20240122T090000Z": event("20240122T090000Z", "20240122T090000Z", "20240122T100000Z",
                                          "Weekly sync"),
                "20240115T090000Z": event("20240115T090000Z", "20240116T140000Z", "20240116T150000Z",
                                          "Weekly sync (moved)"),
            }
        # the replaced instance's own time holds nothing; the override's time holds it alone
        text = data_of(ok(multiget(dav, cal, ["w.ics"], expand=("20240115T000000Z", "20240116T000000Z"))),
                       cal + "w.ics")
        assert instances(text) == {}
        assert [c[0] for c in components(text)] == []
        got = instances(data_of(ok(multiget(dav, cal, ["w.ics"], expand=("20240116T143000Z", "20240116T143001Z"))),
                                cal + "w.ics"))
        assert list(got) == ["20240115T090000Z"] and got["20240115T090000Z"]["DTSTART"] == "20240116T140000Z"
        # COUNT=10 ends with 03-04 (the excluded 01-08 counts); an instance ending exactly at the
        # range's start does not overlap it (section 9.9: DTSTART < end and DTEND > start)
        got = instances(data_of(ok(multiget(dav, cal, ["w.ics"], expand=("20240304T100000Z", "20250101T000000Z"))),
                                cal + "w.ics"))
        assert got == {}
        got = instances(data_of(ok(multiget(dav, cal, ["w.ics"], expand=("20240226T095959Z", "20250101T000000Z"))),
                                cal + "w.ics"))
        assert sorted(got) == ["20240226T090000Z", "20240304T090000Z"]
        assert dav("DELETE", cal + "w.ics").status == 204


def test_time_zones_become_utc(target):
    dav = Dav(target)
    with calendar(dav, "expand") as cal:
        assert put(dav, cal + "z.ics", ZONED).status == 201
        assert put(dav, cal + "s.ics", SINGLE).status == 201
        text = data_of(ok(multiget(dav, cal, ["z.ics"], expand=("20240329T000000Z", "20240402T000000Z"))),
                       cal + "z.ics")
        assert "TZID" not in text and "VTIMEZONE" not in text and "RRULE" not in text
        # 10:00 CET is 09:00Z until 03-30; from 03-31 10:00 CEST is 08:00Z
        want = {}
        for day, hour in (("29", "09"), ("30", "09"), ("31", "08"), ("01", "08")):
            start = f"202404{day}" if day == "01" else f"202403{day}"
            want[f"{start}T{hour}0000Z"] = {
                "UID": "zoned-1", "DTSTAMP": "20240101T000000Z", "RECURRENCE-ID": f"{start}T{hour}0000Z",
                "DTSTART": f"{start}T{hour}0000Z", "DTEND": f"{start}T{int(hour) + 1:02d}0000Z",
                "SUMMARY": "Stand-up"}
        assert instances(text) == want
        # a single event in the range: itself, in UTC, without a RECURRENCE-ID
        got = ok(query(dav, cal, expand=("20240710T000000Z", "20240711T000000Z"),
                       time_range=("20240710T000000Z", "20240711T000000Z")))
        assert list(got) == [cal + "s.ics"]
        text = data_of(got, cal + "s.ics")
        assert "TZID" not in text and "VTIMEZONE" not in text
        assert instances(text) == {None: {"UID": "single-1", "DTSTAMP": "20240101T000000Z",
                                          "DTSTART": "20240710T130000Z", "DTEND": "20240710T140000Z",
                                          "SUMMARY": "Dentist"}}
        # outside the range, a multiget still answers it, with no component
        text = data_of(ok(multiget(dav, cal, ["s.ics"], expand=("20240711T000000Z", "20240712T000000Z"))),
                       cal + "s.ics")
        assert components(text) == []
        for name in ("z.ics", "s.ics"):
            assert dav("DELETE", cal + name).status == 204


def test_recurring_todo(target):
    dav = Dav(target)
    with calendar(dav, "expand") as cal:
        assert put(dav, cal + "t.ics", TODO).status == 201
        # section 9.9 for a VTODO with DTSTART and DUE: 01-06's ends at 13:00 before the start,
        # 01-09's starts at 12:00 after the end
        got = ok(query(dav, cal, comp="VTODO", expand=("20240106T130001Z", "20240109T000000Z"),
                       time_range=("20240106T130001Z", "20240109T000000Z")))
        text = data_of(got, cal + "t.ics")
        comps = components(text)
        assert [c[0] for c in comps] == ["VTODO", "VTODO"]
        for _name, _props, children in comps:
            assert [(c[0], dict(c[1])) for c in children] == [
                ("VALARM", {"ACTION": "DISPLAY", "DESCRIPTION": "Water", "TRIGGER": "-PT10M"})]
        assert instances(text, "VTODO") == {
            f"2024010{d}T120000Z": {"UID": "todo-1", "DTSTAMP": "20240101T000000Z",
                                    "RECURRENCE-ID": f"2024010{d}T120000Z", "DTSTART": f"2024010{d}T120000Z",
                                    "DUE": f"2024010{d}T130000Z", "SUMMARY": "Water the plants"}
            for d in (7, 8)}
        assert dav("DELETE", cal + "t.ics").status == 204


def test_limit_recurrence_set(target):
    """Section 9.6.6: the master as it is, and only the overrides that affect the range."""
    dav = Dav(target)
    with calendar(dav, "limit") as cal:
        assert put(dav, cal + "w.ics", TWO_OVERRIDES).status == 201
        for (start, end), kept in [(("20240201T000000Z", "20240301T000000Z"), ["20240212T090000Z"]),
                                   (("20240110T000000Z", "20240120T000000Z"), ["20240115T090000Z"]),
                                   (("20240301T000000Z", "20240401T000000Z"), []),
                                   (("20240101T000000Z", "20240401T000000Z"),
                                    ["20240115T090000Z", "20240212T090000Z"])]:
            for r in (multiget(dav, cal, ["w.ics"], limit=(start, end)),
                      query(dav, cal, limit=(start, end))):
                comps = components(data_of(ok(r), cal + "w.ics"))
                master = [dict(p) for n, p, _ in comps if "RECURRENCE-ID" not in dict(p)]
                assert len(master) == 1 and master[0]["RRULE"] == "FREQ=WEEKLY;COUNT=10" and \
                    master[0]["EXDATE"] == "20240108T090000Z" and master[0]["DTSTART"] == "20240101T090000Z"
                rids = [dict(p)["RECURRENCE-ID"] for n, p, _ in comps if "RECURRENCE-ID" in dict(p)]
                assert rids == kept, (start, end, rids)
        # the time zone stays: the data is the stored object's, less overrides
        assert put(dav, cal + "z.ics", ZONED).status == 201
        text = data_of(ok(multiget(dav, cal, ["z.ics"], limit=("20240101T000000Z", "20240102T000000Z"))),
                       cal + "z.ics")
        assert text == ZONED
        for name in ("w.ics", "z.ics"):
            assert dav("DELETE", cal + name).status == 204


def test_rule_the_expander_does_not_evaluate(target):
    """BYSETPOS is valid (RFC 5545 section 3.3.10) but not expanded (ical.h): the object comes back
    as it is stored rather than without its instances."""
    text = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:setpos-1\r\n"
            "DTSTAMP:20240101T000000Z\r\nDTSTART:20240131T090000Z\r\nDTEND:20240131T100000Z\r\n"
            "RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1\r\nSUMMARY:Month end\r\n"
            "END:VEVENT\r\nEND:VCALENDAR\r\n")
    dav = Dav(target)
    with calendar(dav, "setpos") as cal:
        assert put(dav, cal + "p.ics", text).status == 201
        got = ok(multiget(dav, cal, ["p.ics"], expand=("20240201T000000Z", "20240401T000000Z")))
        assert data_of(got, cal + "p.ics") == text
        assert dav("DELETE", cal + "p.ics").status == 204


@pytest.mark.parametrize("element", ["expand", "limit-recurrence-set"])
def test_bad_start_or_end_is_400(target, element):
    dav = Dav(target)
    with calendar(dav, "bad") as cal:
        assert put(dav, cal + "w.ics", RECURRING).status == 201
        for attrs in ['start="20240101T000000Z"', 'end="20240101T000000Z"', "",
                      'start="20240101T000000" end="20240201T000000Z"',          # not UTC
                      'start="20240101" end="20240201T000000Z"',                 # a DATE
                      'start="20240201T000000Z" end="20240101T000000Z"',         # end before start
                      'start="2024-01-01T00:00:00Z" end="20240201T000000Z"']:
            data = f"<C:calendar-data><C:{element} {attrs}/></C:calendar-data>"
            for body in (
                    '<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
                    f'{data}</D:prop><D:href>{cal}w.ics</D:href></C:calendar-multiget>',
                    '<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>'
                    f'{data}</D:prop><C:filter><C:comp-filter name="VCALENDAR"/></C:filter></C:calendar-query>'):
                r = dav("REPORT", cal, body, {"Depth": "1", "Content-Type": "application/xml"})
                assert r.status == 400, (attrs, r.status, r.data[:300])
        assert dav("DELETE", cal + "w.ics").status == 204


def test_answer_larger_than_a_response_piece(target):
    """100 instances of an event with a long, folded, non-ASCII description: the expanded data is
    many times DAV_OUT_MAX, so it is rendered over many pieces; every instance comes once and whole,
    and no line is folded inside a UTF-8 character."""
    dav = Dav(target)
    description = "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e \u2014 " * 12
    raw = description.replace(",", "\\,")
    folded, line = [], f"DESCRIPTION:{raw}".encode()
    while line:  # fold at 60 octets, on character boundaries, as a client may
        cut = min(60, len(line))
        while cut < len(line) and (line[cut] & 0xC0) == 0x80:
            cut -= 1
        folded.append(line[:cut].decode())
        line = line[cut:]
    text = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:long-1\r\n"
            "DTSTAMP:20240101T000000Z\r\nDTSTART:20240101T070000Z\r\nDURATION:PT30M\r\n"
            "RRULE:FREQ=DAILY;COUNT=100\r\n" + "\r\n ".join(folded) + "\r\n"
            "SUMMARY:Breakfast\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    with calendar(dav, "long") as cal:
        assert put(dav, cal + "l.ics", text).status == 201
        got = ok(multiget(dav, cal, ["l.ics", "missing.ics"], expand=("20231231T000000Z", "20250101T000000Z")))
        assert got[cal + "missing.ics"]["status"] == 404
        data = data_of(got, cal + "l.ics")
        assert len(data.encode()) > 4 * 8192  # app_config.h DAV_OUT_MAX on the host
        found = instances(data)
        assert len(found) == 100
        for day in range(100):
            start = (datetime.datetime(2024, 1, 1, 7) + datetime.timedelta(days=day)).strftime("%Y%m%dT%H%M%SZ")
            assert found[start] == {"UID": "long-1", "DTSTAMP": "20240101T000000Z", "DTSTART": start,
                                    "DURATION": "PT30M", "DESCRIPTION": raw, "SUMMARY": "Breakfast",
                                    "RECURRENCE-ID": start}, start
        assert dav("DELETE", cal + "l.ics").status == 204


def test_kept_responses_never_stand_in(target):
    """The same multiget, plain and expanded and with another range, asked in turns, twice over:
    a plain one is kept rendered and answered from the cache (hits), an expanded one is neither
    kept nor answered from it, and each answer is its own."""
    dav = Dav(target)
    with calendar(dav, "cache") as cal:
        assert put(dav, cal + "w.ics", RECURRING).status == 201
        assert put(dav, cal + "t.ics", TODO).status == 201
        names = ["w.ics", "t.ics"]
        jan = ("20240101T000000Z", "20240108T000000Z")
        feb = ("20240201T000000Z", "20240208T000000Z")
        want_jan = {"20240101T090000Z"}
        want_feb = {"20240205T090000Z"}
        for round_ in range(2):
            before = status(dav)
            got = ok(multiget(dav, cal, names))
            assert data_of(got, cal + "w.ics") == RECURRING and data_of(got, cal + "t.ics") == TODO
            middle = status(dav)
            if round_:
                assert middle["fragments_hits"] >= before["fragments_hits"] + 2, (before, middle)
            for rng, want in ((jan, want_jan), (feb, want_feb), (jan, want_jan)):
                got = ok(multiget(dav, cal, names, expand=rng))
                assert set(instances(data_of(got, cal + "w.ics"))) == want, (round_, rng)
                todos = instances(data_of(got, cal + "t.ics"), "VTODO")
                assert set(todos) == ({"20240105T120000Z", "20240106T120000Z", "20240107T120000Z"}
                                      if rng == jan else set()), (round_, rng)
                got = ok(multiget(dav, cal, names, limit=rng))
                assert "RRULE" in data_of(got, cal + "w.ics")
                assert ("Weekly sync (moved)" in data_of(got, cal + "w.ics")) is False
            after = status(dav)
            for counter in ("fragments_hits", "fragments_rendered"):
                assert after[counter] == middle[counter], (counter, middle, after)
            got = ok(multiget(dav, cal, names))
            assert data_of(got, cal + "w.ics") == RECURRING and data_of(got, cal + "t.ics") == TODO
        for name in names:
            assert dav("DELETE", cal + name).status == 204
