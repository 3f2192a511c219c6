"""calendar-query filters (RFC 4791 section 9.7) against litedav-host: time ranges on VALARM
(the VALARM row of section 9.9: absolute triggers, triggers relative to the start or, with
RELATED=END, to DTEND, DUE or DTSTART + DURATION, REPEAT / DURATION repetitions, the instances of
a recurring event less its EXDATEs and overrides), prop-filter and text-match on every component
(sections 9.7.2, 9.7.5: VTODO, VJOURNAL, VALARM), param-filter (section 9.7.3), is-not-defined,
the collations (section 7.5.1: i;ascii-casemap, i;octet, CALDAV:supported-collation for others)
and negate-condition, and a query without a component type: a prop-filter directly under the
VCALENDAR comp-filter tests the calendar's own properties (section 9.7.2), a time range there
the object's component. The time ranges of events and to-dos themselves are in
caldav_report_checks.py."""
import pytest

from caldav_checks import Dav, calendar, precondition, put, tag
from caldav_report_checks import report
from test_host_server import host_build, start_server, dav_target  # noqa: F401


@pytest.fixture(scope="module")
def server(host_build, tmp_path_factory):
    srv = start_server("--store", str(tmp_path_factory.mktemp("filters") / "store.flash"))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def target(server):
    return dav_target(server)


def lines(*props):
    return "".join(p + "\r\n" for p in props)


def vcalendar(*components, head=()):
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n" + lines(*head)
            + "".join(components) + "END:VCALENDAR\r\n")


def component(kind, uid, *props, children=""):
    return (f"BEGIN:{kind}\r\nUID:{uid}\r\nDTSTAMP:20240101T000000Z\r\n" + lines(*props) + children
            + f"END:{kind}\r\n")


def valarm(*props, action="DISPLAY"):
    return f"BEGIN:VALARM\r\nACTION:{action}\r\nDESCRIPTION:Reminder\r\n" + lines(*props) + "END:VALARM\r\n"


def event(uid, day, *props, alarms="", end=True):
    """A VEVENT on March `day` 2024, 10:00-11:00 UTC (no DTEND with end=False)."""
    times = [f"DTSTART:202403{day:02d}T100000Z"] + ([f"DTEND:202403{day:02d}T110000Z"] if end else [])
    return vcalendar(component("VEVENT", uid, *times, *props, children=alarms))


OBJECTS = {
    # the alarm's absolute time, a day before the event
    "absolute": event("absolute", 1, alarms=valarm("TRIGGER;VALUE=DATE-TIME:20240229T120000Z")),
    # 09:45 on March 2
    "start": event("start", 2, alarms=valarm("TRIGGER:-PT15M")),
    # no alarm, but the event itself is at 09:45 on March 2
    "noalarm": vcalendar(component("VEVENT", "noalarm", "DTSTART:20240302T094500Z",
                                   "DTEND:20240302T095000Z")),
    # 11:05 on March 3: five minutes after DTEND
    "end": event("end", 3, alarms=valarm("TRIGGER;RELATED=END:PT5M")),
    # 11:50 on March 4: ten minutes before DTSTART + DURATION
    "duration": event("duration", 4, "DURATION:PT2H", end=False,
                      alarms=valarm("TRIGGER;RELATED=END:-PT10M")),
    # 09:30, 09:40, 09:50 and 10:00 on March 5
    "repeat": event("repeat", 5, alarms=valarm("TRIGGER:-PT30M", "REPEAT:3", "DURATION:PT10M")),
    # an all-day event ends after its day (RFC 5545 3.6.1): 18:00 on March 10
    "allday": vcalendar(component("VEVENT", "allday", "DTSTART;VALUE=DATE:20240310",
                                  children=valarm("TRIGGER;RELATED=END:-PT6H"))),
    # Mondays 09:00 from January 1, six of them; an hour's notice: January 1, 8, 15 at 08:00,
    # not the 22nd (EXDATE) nor the 29th, which moved to 14:00 on the 30th with two hours'
    # notice (12:00), February 5 and no more
    "weekly": vcalendar(
        component("VEVENT", "weekly", "DTSTART:20240101T090000Z", "DTEND:20240101T100000Z",
                  "RRULE:FREQ=WEEKLY;COUNT=6", "EXDATE:20240122T090000Z",
                  children=valarm("TRIGGER:-PT1H")),
        component("VEVENT", "weekly", "RECURRENCE-ID:20240129T090000Z", "DTSTART:20240130T140000Z",
                  "DTEND:20240130T150000Z", children=valarm("TRIGGER:-PT2H"))),
    # a display alarm an hour before DUE (16:00 on March 6) and a mail a day before DTSTART
    # (08:00 on March 5)
    "todo": vcalendar(component(
        "VTODO", "todo", "DTSTART:20240306T080000Z", "DUE:20240306T170000Z",
        "SUMMARY:File the quarterly report", "STATUS:NEEDS-ACTION",
        children=valarm("TRIGGER;RELATED=END:-PT1H")
        + valarm("TRIGGER:-P1D", "SUMMARY:Due tomorrow", "ATTENDEE:mailto:ann@example.com",
                 action="EMAIL"))),
    "done": vcalendar(component("VTODO", "done", "DUE:20240320T170000Z",
                                "SUMMARY:Quarterly report draft", "STATUS:COMPLETED")),
    "journal": vcalendar(component("VJOURNAL", "journal", "DTSTART;VALUE=DATE:20240307",
                                   "SUMMARY:Notes", r"DESCRIPTION:Budget\, staffing\; and travel")),
    "attendees": event("attendees", 8, "ATTENDEE;PARTSTAT=ACCEPTED;CN=Ann:mailto:ann@example.com",
                       "ATTENDEE;CN=Bob:mailto:bob@example.com"),
    # CATEGORIES on the calendar itself (RFC 7986 section 5.6) and, differently, on its event
    "calcat": vcalendar(component("VEVENT", "calcat", "DTSTART:20240309T100000Z",
                                  "DTEND:20240309T110000Z", "CATEGORIES:Work"),
                        head=("CATEGORIES:Holidays",)),
    "evcat": event("evcat", 9, "CATEGORIES:Holidays"),
}
EVENTS = ["absolute", "allday", "attendees", "calcat", "duration", "end", "evcat", "noalarm",
          "repeat", "start", "weekly"]


@pytest.fixture(scope="module")
def query(target):
    """query(filter XML) -> sorted names of the objects that match it, in a calendar holding
    OBJECTS; query(filter, raw=True) -> the response."""
    dav = Dav(target)
    with calendar(dav, "filters") as cal:
        for name, text in OBJECTS.items():
            r = put(dav, f"{cal}{name}.ics", text)
            assert r.status == 201, (name, r.status, r.data)

        def run(filt, raw=False):
            body = ('<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
                    f'<D:prop><D:getetag/></D:prop><C:filter>{filt}</C:filter></C:calendar-query>')
            if raw:
                return dav("REPORT", cal, body, {"Depth": "1", "Content-Type": "application/xml"})
            return sorted(href[len(cal):-len(".ics")] for href in report(dav, cal, body))
        yield run
        for name in OBJECTS:
            assert dav("DELETE", f"{cal}{name}.ics").status == 204


def in_comp(comp, inner):
    return (f'<C:comp-filter name="VCALENDAR"><C:comp-filter name="{comp}">{inner}</C:comp-filter>'
            '</C:comp-filter>')


def alarm_range(start=None, end=None, comp="VEVENT", extra=""):
    attrs = (f' start="{start}"' if start else "") + (f' end="{end}"' if end else "")
    return in_comp(comp, f'<C:comp-filter name="VALARM"><C:time-range{attrs}/>{extra}</C:comp-filter>')


def test_alarm_absolute_trigger(query):
    assert query(alarm_range("20240229T113000Z", "20240229T123000Z")) == ["absolute"]
    # the event's own time is not its alarm's
    assert query(alarm_range("20240301T093000Z", "20240301T113000Z")) == []


def test_alarm_relative_to_start(query):
    # the alarm of "start" at 09:45, not "noalarm", which is itself at 09:45 but has no alarm
    assert query(alarm_range("20240302T094000Z", "20240302T095000Z")) == ["start"]
    # start <= trigger-time < end
    assert query(alarm_range("20240302T094500Z", "20240302T094600Z")) == ["start"]
    assert query(alarm_range("20240302T093000Z", "20240302T094500Z")) == []
    assert query(alarm_range("20240302T095000Z", "20240302T113000Z")) == []


def test_alarm_related_to_end(query):
    # DTEND + 5 minutes, not DTSTART + 5 minutes
    assert query(alarm_range("20240303T110000Z", "20240303T111000Z")) == ["end"]
    assert query(alarm_range("20240303T100000Z", "20240303T101000Z")) == []
    # DTSTART + DURATION - 10 minutes
    assert query(alarm_range("20240304T114500Z", "20240304T115500Z")) == ["duration"]
    assert query(alarm_range("20240304T094500Z", "20240304T095500Z")) == []
    # the end of an all-day event without DTEND is the next midnight
    assert query(alarm_range("20240310T174500Z", "20240310T181500Z")) == ["allday"]
    assert query(alarm_range("20240309T174500Z", "20240309T181500Z")) == []
    # a to-do's DUE
    assert query(alarm_range("20240306T154500Z", "20240306T161500Z", comp="VTODO")) == ["todo"]
    assert query(alarm_range("20240306T064500Z", "20240306T071500Z", comp="VTODO")) == []


def test_alarm_repetitions(query):
    # 09:30, 09:40, 09:50, 10:00: between two repetitions, the last, past it
    assert query(alarm_range("20240305T094100Z", "20240305T094900Z")) == []
    assert query(alarm_range("20240305T094100Z", "20240305T095100Z")) == ["repeat"]
    assert query(alarm_range("20240305T095500Z", "20240305T100100Z")) == ["repeat"]
    assert query(alarm_range("20240305T100100Z", "20240305T120000Z")) == []
    assert query(alarm_range("20240305T092000Z", "20240305T093100Z")) == ["repeat"]


def test_alarm_of_each_instance(query):
    # the third instance (January 15) and the time of the event, not of its alarm
    assert query(alarm_range("20240115T073000Z", "20240115T083000Z")) == ["weekly"]
    assert query(alarm_range("20240115T083000Z", "20240115T093000Z")) == []
    # the fourth is an EXDATE; the fifth moved and has an alarm of its own
    assert query(alarm_range("20240122T073000Z", "20240122T083000Z")) == []
    assert query(alarm_range("20240129T073000Z", "20240129T083000Z")) == []
    assert query(alarm_range("20240130T113000Z", "20240130T123000Z")) == ["weekly"]
    # the sixth and last; open-ended ranges
    assert query(alarm_range("20240205T073000Z", "20240205T083000Z")) == ["weekly"]
    assert query(alarm_range("20240212T073000Z", "20240212T083000Z")) == []
    assert query(alarm_range(start="20240205T080000Z")) == ["absolute", "allday", "duration", "end",
                                                            "repeat", "start", "weekly"]
    assert "weekly" not in query(alarm_range(start="20240205T080001Z"))
    assert query(alarm_range(end="20231231T000000Z")) == []
    assert query(alarm_range(end="20240101T080001Z")) == ["weekly"]


def test_alarm_time_range_and_properties_of_one_alarm(query):
    def mail(action, start, end):
        return query(alarm_range(start, end, comp="VTODO", extra=(
            f'<C:prop-filter name="ACTION"><C:text-match>{action}</C:text-match></C:prop-filter>')))
    assert mail("EMAIL", "20240305T073000Z", "20240305T083000Z") == ["todo"]
    # the display alarm is not then, and the mail is not at 16:00
    assert mail("DISPLAY", "20240305T073000Z", "20240305T083000Z") == []
    assert mail("EMAIL", "20240306T154500Z", "20240306T161500Z") == []


def test_prop_filters_on_alarms(query):
    def alarm_with(comp, inner):
        return query(in_comp(comp, f'<C:comp-filter name="VALARM">{inner}</C:comp-filter>'))
    assert alarm_with("VTODO", '<C:prop-filter name="ATTENDEE"><C:text-match>ann@</C:text-match>'
                      '</C:prop-filter>') == ["todo"]
    assert alarm_with("VEVENT", '<C:prop-filter name="ACTION"><C:text-match>email</C:text-match>'
                      '</C:prop-filter>') == []
    assert alarm_with("VEVENT", '<C:prop-filter name="REPEAT"/>') == ["repeat"]
    # some alarm of the to-do has no SUMMARY (the display one)
    assert alarm_with("VTODO", '<C:prop-filter name="SUMMARY"><C:is-not-defined/></C:prop-filter>') \
        == ["todo"]
    assert alarm_with("VEVENT", '<C:is-not-defined/>') == ["attendees", "calcat", "evcat", "noalarm"]


def test_text_match_on_todos_and_journals(query):
    def todos(inner):
        return query(in_comp("VTODO", inner))

    def summary(text, attrs=""):
        return todos(f'<C:prop-filter name="SUMMARY"><C:text-match{attrs}>{text}</C:text-match>'
                     '</C:prop-filter>')
    assert summary("QUARTERLY REPORT") == ["done", "todo"]
    assert summary("QUARTERLY REPORT", ' collation="i;ascii-casemap"') == ["done", "todo"]
    assert summary("Quarterly", ' collation="i;octet"') == ["done"]
    assert summary("draft", ' negate-condition="yes"') == ["todo"]
    assert summary("draft", ' negate-condition="no"') == ["done"]
    assert todos('<C:prop-filter name="STATUS"><C:text-match negate-condition="yes">COMPLETED'
                 '</C:text-match></C:prop-filter>') == ["todo"]
    assert todos('<C:prop-filter name="DTSTART"><C:is-not-defined/></C:prop-filter>') == ["done"]
    # the value, not its encoding (RFC 5545 3.3.11)
    assert query(in_comp("VJOURNAL", '<C:prop-filter name="DESCRIPTION"><C:text-match>budget, '
                         'staffing; and</C:text-match></C:prop-filter>')) == ["journal"]
    assert query(in_comp("VJOURNAL", '<C:prop-filter name="DESCRIPTION"><C:text-match>\\,'
                         '</C:text-match></C:prop-filter>')) == []


def test_param_filter(query):
    def attendee(inner):
        return query(in_comp("VEVENT", f'<C:prop-filter name="ATTENDEE">{inner}</C:prop-filter>'))
    assert attendee('<C:param-filter name="PARTSTAT"><C:text-match>accepted</C:text-match>'
                    '</C:param-filter>') == ["attendees"]
    assert attendee('<C:param-filter name="PARTSTAT"><C:text-match>declined</C:text-match>'
                    '</C:param-filter>') == []
    assert attendee('<C:param-filter name="PARTSTAT"><C:text-match negate-condition="yes">'
                    'accepted</C:text-match></C:param-filter>') == []
    assert attendee('<C:param-filter name="CN"/>') == ["attendees"]
    assert attendee('<C:param-filter name="ROLE"/>') == []
    # one ATTENDEE must meet every condition: Bob's has no PARTSTAT, Ann's is not Bob's
    assert attendee('<C:text-match>bob</C:text-match><C:param-filter name="PARTSTAT">'
                    '<C:is-not-defined/></C:param-filter>') == ["attendees"]
    assert attendee('<C:text-match>bob</C:text-match><C:param-filter name="PARTSTAT">'
                    '<C:text-match>accepted</C:text-match></C:param-filter>') == []


def test_collations_and_bad_filters(query):
    def answer(text_match):
        return query(in_comp("VEVENT", f'<C:prop-filter name="SUMMARY">{text_match}</C:prop-filter>'),
                     raw=True)
    for collation in ("i;klingon", "i;unicode-casemap", "i;octet-but-with-a-much-longer-name-than-any"):
        r = answer(f'<C:text-match collation="{collation}">a</C:text-match>')
        assert precondition(r) == [tag("C", "supported-collation")], collation
    r = answer('<C:text-match negate-condition="maybe">a</C:text-match>')
    assert precondition(r) == [tag("C", "valid-filter")]
    r = query(alarm_range("20240305T100100Z", "20240305T100000Z"), raw=True)
    assert precondition(r) == [tag("C", "valid-filter")]


def test_query_without_component_type(query):
    def calendars(inner):
        return query(f'<C:comp-filter name="VCALENDAR">{inner}</C:comp-filter>')
    holidays = '<C:prop-filter name="CATEGORIES"><C:text-match>holidays</C:text-match></C:prop-filter>'
    # the calendar's own CATEGORIES (RFC 7986), not its event's
    assert calendars(holidays) == ["calcat"]
    assert query(in_comp("VEVENT", holidays)) == ["evcat"]
    assert calendars('<C:prop-filter name="CATEGORIES"><C:text-match>work</C:text-match>'
                     '</C:prop-filter>') == []
    assert calendars('<C:prop-filter name="SUMMARY"/>') == []
    assert calendars('<C:prop-filter name="PRODID"><C:text-match>-//test//</C:text-match>'
                     '</C:prop-filter>') == sorted(OBJECTS)
    assert calendars('<C:prop-filter name="CATEGORIES"><C:is-not-defined/></C:prop-filter>') == \
        sorted(set(OBJECTS) - {"calcat"})
    # a time range there is the object's component's: the to-do from 08:00 to 17:00 on March 6,
    # the journal's day, March 7
    assert calendars('<C:time-range start="20240306T120000Z" end="20240306T130000Z"/>') == ["todo"]
    assert calendars('<C:time-range start="20240307T120000Z" end="20240307T130000Z"/>') == ["journal"]
    assert calendars('<C:time-range start="20240302T094000Z" end="20240302T095000Z"/>') == ["noalarm"]
    assert set(EVENTS) <= set(calendars('<C:time-range start="20240101T000000Z"/>'))
