"""CalDAV smoke test on the simulated SoC (the store in a RAM flash): the
demo user makes a calendar, PUTs an event, reads it back by GET and finds it
with PROPFIND. The host build (test_host_caldav.py) covers the protocol in
depth; this checks that the same firmware does it on the SoC."""
import base64
import http.client
import xml.etree.ElementTree as ET

TIMEOUT = 120  # wall seconds: the simulator runs far slower than real time
AUTH = {"Authorization": "Basic " + base64.b64encode(b"demo:demo").decode()}
EVENT = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\n"
         "UID:sim-1\r\nDTSTAMP:20240101T000000Z\r\nDTSTART:20240105T100000Z\r\n"
         "DTEND:20240105T110000Z\r\nSUMMARY:On the SoC\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def request(appliance, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", appliance.port, timeout=TIMEOUT)
    try:
        conn.request(method, path, body=body, headers={**AUTH, **(headers or {})})
        r = conn.getresponse()
        r.data = r.read()
        return r
    finally:
        conn.close()


def test_calendar_put_get_propfind(appliance):
    assert request(appliance, "GET", "/dav/demo/", headers={"Authorization": ""}).status == 401
    assert request(appliance, "MKCALENDAR", "/dav/demo/sim/").status == 201
    r = request(appliance, "PUT", "/dav/demo/sim/e.ics", EVENT, {"Content-Type": "text/calendar"})
    assert r.status == 201
    etag = r.getheader("ETag")
    r = request(appliance, "GET", "/dav/demo/sim/e.ics")
    assert r.status == 200 and r.data.decode() == EVENT and r.getheader("ETag") == etag
    r = request(appliance, "PROPFIND", "/dav/demo/sim/",
                '<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>',
                {"Depth": "1"})
    assert r.status == 207
    tree = ET.fromstring(r.data)
    found = {resp.find("{DAV:}href").text: resp.find(".//{DAV:}getetag")
             for resp in tree.findall("{DAV:}response")}
    assert set(found) == {"/dav/demo/sim/", "/dav/demo/sim/e.ics"}
    assert found["/dav/demo/sim/e.ics"].text == etag


def test_caldav_client_adds_and_reads_an_event(appliance):
    """What the README shows for `make demo`: the python caldav client discovers the principal,
    makes a calendar, saves an event and reads it back."""
    import caldav
    client = caldav.DAVClient(f"http://127.0.0.1:{appliance.port}/dav/", username="demo",
                              password="demo", timeout=TIMEOUT)
    calendar = client.principal().make_calendar(name="Office", cal_id="office-client")
    calendar.save_event(EVENT.replace("UID:sim-1", "UID:client-1"))
    events = calendar.events()
    assert len(events) == 1
    assert "SUMMARY:On the SoC" in events[0].data and "UID:client-1" in events[0].data
