"""Security of the CalDAV server against hostile requests, on litedav-host (the whole
firmware under ASan/UBSan; the checks speak raw HTTP over a socket, so nothing between
the test and the server normalizes a path or a header).

- Paths: a user reaches only their own collections. Another user's calendar object is
  asked for through every spelling a path normalizer could get wrong (`..`, `%2e%2e`,
  encoded slashes, double encoding, backslashes, NUL, overlong UTF-8, empty and `.`
  segments, case, absolute-form targets, the well-known redirect), with every method that
  reads or writes; none may answer with success or show the object, and the victim's data
  must be unchanged at the end.
- Authentication: no method spelling (lowercase, unknown, HEAD, OPTIONS), method-override
  header, duplicate or malformed Authorization field (no colon, empty user or password,
  a colon or NUL in the user name, bad base64, other schemes, a very long value, a folded
  line) gets past the 401.
- Limits: oversize bodies (declared and chunked), many or huge header fields, a huge
  request line and deeply nested XML are refused, and the server keeps serving with no
  sanitizer report.
About 10 s.
"""
import base64
import socket
import time

import pytest

from test_host_server import SANITIZER_REPORT, TIMEOUT, host_build, start_server  # noqa: F401

VICTIM, VICTIM_PW = "demo", "demo"          # firmware/users.conf
ATTACKER, ATTACKER_PW = "mallory", "attack"  # given with --user
VICTIM_CAL = f"/dav/{VICTIM}/private/"
SECRET = "victim-secret-7f3a"               # in the victim's object: must never be shown to others
SECRET_OBJECT = VICTIM_CAL + "secret.ics"


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode("latin-1")).decode()


def ics(uid, summary):
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//LiteDAV//security test//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260102T100000Z\r\n"
            f"SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()


class Reply:
    def __init__(self, status, head, body):
        self.status, self.head, self.body = status, head, body

    def __repr__(self):
        return f"{self.status} {self.head[:200]!r} {self.body[:200]!r}"


def exchange(port, raw, read_body=True):
    """Send raw bytes on a fresh connection; the reply's status, head and body (up to close or
    Content-Length). status 0: the server closed without answering."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(raw)
        data = b""
        deadline = time.monotonic() + TIMEOUT
        while b"\r\n\r\n" not in data and time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        if b"\r\n\r\n" not in data:
            return Reply(0, data, b"")
        head, body = data.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                       if line.lower().startswith(b"content-length:")), None)
        if read_body and not raw.startswith(b"HEAD"):
            while (length is None or len(body) < length) and time.monotonic() < deadline:
                try:
                    chunk = s.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not chunk:
                    break
                body += chunk
        return Reply(status, head.decode("latin-1"), body)


def request(port, method, target, headers=(), body=b""):
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers]
    if body or method in ("PUT", "PROPFIND", "REPORT", "PROPPATCH", "POST"):
        lines.append(f"Content-Length: {len(body)}")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    return exchange(port, raw)


@pytest.fixture(scope="module")
def server(host_build, tmp_path_factory):
    store = tmp_path_factory.mktemp("security") / "store.flash"
    srv = start_server("--store", str(store), "--user", f"{ATTACKER}:{ATTACKER_PW}")
    victim = [("Authorization", basic(VICTIM, VICTIM_PW))]
    attacker = [("Authorization", basic(ATTACKER, ATTACKER_PW))]
    assert request(srv.port, "MKCALENDAR", VICTIM_CAL, victim).status == 201
    assert request(srv.port, "PUT", SECRET_OBJECT, victim + [("Content-Type", "text/calendar")],
                   ics("secret@victim", SECRET)).status == 201
    assert request(srv.port, "MKCALENDAR", f"/dav/{ATTACKER}/cal/", attacker).status == 201
    yield srv
    code = srv.stop()
    output = "\n".join(srv.console)
    assert not SANITIZER_REPORT.search(output), output[-4000:]
    assert code == 0, f"litedav-host exited {code}:\n{output[-3000:]}"


def victim_data_unchanged(port):
    """The victim's calendar holds exactly the secret object, as written."""
    auth = [("Authorization", basic(VICTIM, VICTIM_PW))]
    r = request(port, "GET", SECRET_OBJECT, auth)
    assert r.status == 200 and SECRET.encode() in r.body, r
    r = request(port, "PROPFIND", VICTIM_CAL, auth + [("Depth", "1"), ("Content-Type", "application/xml")],
                b'<?xml version="1.0"?><propfind xmlns="DAV:"><prop><getetag/></prop></propfind>')
    assert r.status == 207 and r.body.count(b".ics") == 1 and b"secret.ics" in r.body, r
    r = request(port, "GET", "/", ())
    assert r.status == 200, r


# ---- paths: only one's own collections ------------------------------------------------------

TRAVERSALS = [
    f"/dav/{VICTIM}/private/secret.ics",                       # plainly someone else's
    f"/dav/{ATTACKER}/../{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/cal/../../{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/%2e%2e/{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/%2E%2E/{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/.%2e/{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/%2e./{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}%2f..%2f{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/..%2f{VICTIM}%2fprivate%2fsecret.ics",
    f"/dav/{ATTACKER}/..%2F{VICTIM}%2Fprivate%2Fsecret.ics",
    f"/dav/{ATTACKER}/%252e%252e/{VICTIM}/private/secret.ics",  # double encoding
    f"/dav/{ATTACKER}/%252e%252e%252f{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/..\\{VICTIM}\\private\\secret.ics",      # backslashes
    f"/dav/{ATTACKER}\\..\\{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/%5c..%5c{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}%00/../{VICTIM}/private/secret.ics",      # NUL
    f"/dav/{VICTIM}%00{ATTACKER}/private/secret.ics",
    f"/dav/{ATTACKER}/cal/%00/../../../{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/%c0%ae%c0%ae/{VICTIM}/private/secret.ics",  # overlong UTF-8 '.'
    f"/dav/{ATTACKER}/..%c0%af{VICTIM}/private/secret.ics",       # overlong UTF-8 '/'
    f"/dav/{ATTACKER}/%e0%80%ae%e0%80%ae/{VICTIM}/private/secret.ics",
    f"/dav//{VICTIM}/private/secret.ics",
    f"/dav/./{VICTIM}/private/secret.ics",
    f"/dav/{ATTACKER}/./../{VICTIM}/private/secret.ics",
    f"/dav/{VICTIM.upper()}/private/secret.ics",
    f"/dav/{VICTIM}/private/./secret.ics",
    f"/dav/{VICTIM}/private//secret.ics",
    f"/static/../dav/{VICTIM}/private/secret.ics",
    f"/.well-known/caldav/../../dav/{VICTIM}/private/secret.ics",
    f"http://127.0.0.1/dav/{VICTIM}/private/secret.ics",       # absolute-form target
    f"/dav/{ATTACKER}/../{VICTIM}/private/",
    f"/dav/{ATTACKER}/%2e%2e/{VICTIM}/",
    f"/dav/{VICTIM}/",
    f"/dav/{VICTIM}",
]


@pytest.mark.parametrize("method", ["GET", "HEAD", "PROPFIND", "REPORT", "PUT", "DELETE", "PROPPATCH",
                                    "MKCOL", "MKCALENDAR"])
def test_no_path_reaches_another_users_data(server, method):
    auth = [("Authorization", basic(ATTACKER, ATTACKER_PW))]
    bodies = {
        "PROPFIND": b'<?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>',
        "REPORT": (b'<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" '
                   b'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><C:calendar-data/></D:prop>'
                   b'<C:filter><C:comp-filter name="VCALENDAR"/></C:filter></C:calendar-query>'),
        "PUT": ics("secret@victim", "overwritten by the attacker"),
        "PROPPATCH": (b'<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>'
                      b'<D:displayname>pwned</D:displayname></D:prop></D:set></D:propertyupdate>'),
    }
    headers = auth + [("Depth", "1"), ("Content-Type", "text/calendar" if method == "PUT" else "application/xml")]
    for target in TRAVERSALS:
        r = request(server.port, method, target, headers, bodies.get(method, b""))
        assert not 200 <= r.status < 300, f"{method} {target} as {ATTACKER}: {r}"
        assert SECRET.encode() not in r.body, f"{method} {target}: the answer shows the victim's data: {r}"
    victim_data_unchanged(server.port)


def test_discovery_points_only_to_ones_own_home(server):
    r = request(server.port, "GET", "/.well-known/caldav", [("Authorization", basic(ATTACKER, ATTACKER_PW))])
    assert r.status in (301, 302, 307, 308), r
    location = next(line.split(":", 1)[1].strip() for line in r.head.split("\r\n") if line.lower().startswith("location:"))
    assert location.rstrip("/").endswith(f"/dav/{ATTACKER}"), r
    r = request(server.port, "PROPFIND", "/dav/", [("Authorization", basic(ATTACKER, ATTACKER_PW)), ("Depth", "1"),
                                                   ("Content-Type", "application/xml")],
                b'<?xml version="1.0"?><propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>')
    assert r.status == 207 and f"/dav/{VICTIM}/".encode() not in r.body, r


# ---- authentication ---------------------------------------------------------------------------

def b64(raw):
    return base64.b64encode(raw).decode()


BAD_AUTHORIZATION = [
    [],                                                        # none
    [("Authorization", basic(VICTIM, "wrong"))],
    [("Authorization", basic(VICTIM, ""))],                    # empty password
    [("Authorization", "Basic " + b64(b":" + VICTIM_PW.encode()))],  # empty user
    [("Authorization", "Basic " + b64(VICTIM.encode()))],      # no colon
    [("Authorization", "Basic " + b64(b"de:mo:" + VICTIM_PW.encode()))],  # a colon in the user name
    [("Authorization", "Basic " + b64(VICTIM.encode() + b"\0x:" + VICTIM_PW.encode()))],  # NUL in it
    [("Authorization", "Basic " + b64(VICTIM.encode() + b":" + VICTIM_PW.encode() + b"\0"))],
    [("Authorization", "Basic " + b64(VICTIM.upper().encode() + b":" + VICTIM_PW.encode()))],
    [("Authorization", "Basic")],
    [("Authorization", "Basic ")],
    [("Authorization", "Basic ====")],
    [("Authorization", basic(VICTIM, VICTIM_PW) + "!!")],      # junk after the base64
    [("Authorization", basic(VICTIM, VICTIM_PW)[:-2])],        # truncated
    [("Authorization", "Basic " + basic(VICTIM, VICTIM_PW))],  # "Basic Basic ..."
    [("Authorization", "Digest username=\"demo\", response=\"x\"")],
    [("Authorization", "Bearer " + b64(b"demo:demo"))],
    [("Authorization", "Basic " + "A" * 60000)],              # very long
    [("Authorization", basic(VICTIM, VICTIM_PW)), ("Authorization", basic(ATTACKER, "wrong"))],
    [("Authorization", basic(ATTACKER, "wrong")), ("Authorization", basic(VICTIM, VICTIM_PW))],
    [("Authorization", basic(VICTIM, VICTIM_PW) + ", Basic " + b64(b"x:y"))],
    [("Authorization", "Basic\r\n " + b64(b"demo:demo"))],    # obsolete line folding
    [("Proxy-Authorization", basic(VICTIM, VICTIM_PW))],
    [("X-Authorization", basic(VICTIM, VICTIM_PW))],
    [("Authorization ", basic(VICTIM, VICTIM_PW))],            # space before the colon (RFC 9112 5.1)
]


@pytest.mark.parametrize("index", range(len(BAD_AUTHORIZATION)))
def test_bad_credentials_are_refused(server, index):
    headers = BAD_AUTHORIZATION[index]
    for method in ("GET", "PROPFIND", "PUT", "DELETE"):
        body = ics("secret@victim", "overwritten") if method == "PUT" else b""
        r = request(server.port, method, SECRET_OBJECT, headers, body)
        assert r.status in (400, 401, 431), f"{method} with {str(headers)[:120]}: {r}"
        assert SECRET.encode() not in r.body, r
        if r.status == 401:
            assert "www-authenticate: basic" in r.head.lower(), r
    victim_data_unchanged(server.port)


METHOD_TRICKS = [
    ("get", []), ("Get", []), ("gEt", []), ("HEAD", []), ("OPTIONS", []), ("TRACE", []),
    ("CONNECT", []), ("FOO", []), ("GETX", []), ("G ET", []), ("PROPFIND", []), ("propfind", []),
    ("REPORT", []), ("POST", [("X-HTTP-Method-Override", "GET")]),
    ("POST", [("X-HTTP-Method", "GET")]), ("POST", [("X-Method-Override", "GET")]),
    ("GET", [("X-HTTP-Method-Override", "OPTIONS")]), ("HEAD", [("X-HTTP-Method-Override", "GET")]),
    ("OPTIONS", [("X-HTTP-Method-Override", "DELETE")]),
]


@pytest.mark.parametrize("method,extra", METHOD_TRICKS, ids=[f"{m}-{e[0][0] if e else ''}" for m, e in METHOD_TRICKS])
def test_no_method_gets_past_authentication(server, method, extra):
    r = request(server.port, method, SECRET_OBJECT, extra)
    assert not 200 <= r.status < 300 or method == "OPTIONS", f"{method} {extra} without credentials: {r}"
    assert SECRET.encode() not in r.body, r
    if method == "OPTIONS" and 200 <= r.status < 300:
        # OPTIONS may say what the server can do (RFC 9110 9.3.7), nothing about the resource
        assert not r.body.strip() and "etag" not in r.head.lower() and "last-modified" not in r.head.lower(), r
    # authenticated as another user, the override headers change nothing either
    r = request(server.port, method, SECRET_OBJECT, extra + [("Authorization", basic(ATTACKER, ATTACKER_PW))])
    assert not 200 <= r.status < 300 or method == "OPTIONS", f"{method} {extra} as {ATTACKER}: {r}"
    assert SECRET.encode() not in r.body, r
    victim_data_unchanged(server.port)


def test_delete_with_override_header_does_not_delete(server):
    """The server acts on the request method only: a GET asking to be a DELETE stays a GET."""
    auth = [("Authorization", basic(VICTIM, VICTIM_PW))]
    r = request(server.port, "GET", SECRET_OBJECT, auth + [("X-HTTP-Method-Override", "DELETE")])
    assert r.status == 200 and SECRET.encode() in r.body, r
    victim_data_unchanged(server.port)


# ---- limits -----------------------------------------------------------------------------------

def still_serving(server):
    assert server.proc.poll() is None, "litedav-host died:\n" + "\n".join(server.console[-30:])
    victim_data_unchanged(server.port)


def test_oversize_declared_body_is_refused_before_it_is_read(server):
    auth = [("Authorization", basic(VICTIM, VICTIM_PW)), ("Content-Type", "text/calendar")]
    for length in (64 * 1024 + 1, 10 * 1024 * 1024, 2**32 - 1, 2**32, 10**30):
        raw = (f"PUT {VICTIM_CAL}big.ics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
               f"Authorization: {auth[0][1]}\r\nContent-Type: text/calendar\r\nContent-Length: {length}\r\n\r\n"
               ).encode() + b"X" * 1000
        r = exchange(server.port, raw)
        assert r.status in (400, 403, 413, 507), f"Content-Length {length}: {r}"
    for method, path in (("PROPFIND", VICTIM_CAL), ("REPORT", VICTIM_CAL), ("PROPPATCH", VICTIM_CAL)):
        raw = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: {auth[0][1]}\r\n"
               f"Content-Type: application/xml\r\nContent-Length: {50 * 1024 * 1024}\r\n\r\n").encode()
        r = exchange(server.port, raw)
        assert r.status in (400, 413, 507), f"{method} with a 50 MB body: {r}"
    still_serving(server)


def test_oversize_chunked_body_is_refused(server):
    auth = basic(VICTIM, VICTIM_PW)
    chunk = b"4000\r\n" + b"Y" * 0x4000 + b"\r\n"
    raw = (f"PUT {VICTIM_CAL}chunked.ics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: {auth}\r\n"
           f"Content-Type: text/calendar\r\nTransfer-Encoding: chunked\r\n\r\n").encode() + chunk * 8 + b"0\r\n\r\n"
    r = exchange(server.port, raw)
    assert r.status in (400, 403, 413, 507), r
    r = request(server.port, "GET", VICTIM_CAL + "chunked.ics", [("Authorization", auth)])
    assert r.status == 404, r
    # a chunk size that does not fit any integer
    raw = (f"PUT {VICTIM_CAL}chunked.ics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: {auth}\r\n"
           f"Transfer-Encoding: chunked\r\n\r\n").encode() + b"F" * 40 + b"\r\nZZ\r\n0\r\n\r\n"
    r = exchange(server.port, raw)
    assert r.status in (400, 413), r
    still_serving(server)


@pytest.mark.parametrize("what", ["many-fields", "huge-field", "huge-line", "huge-target", "many-small-lines"])
def test_request_head_limits(server, what):
    auth = f"Authorization: {basic(VICTIM, VICTIM_PW)}\r\n"
    head = {
        "many-fields": f"GET {SECRET_OBJECT} HTTP/1.1\r\nHost: x\r\n{auth}" + "".join(
            f"X-Field-{i}: {i}\r\n" for i in range(2000)),
        "huge-field": f"GET {SECRET_OBJECT} HTTP/1.1\r\nHost: x\r\n{auth}X-Big: {'b' * 200_000}\r\n",
        "huge-line": f"GET {SECRET_OBJECT}?{'q' * 200_000} HTTP/1.1\r\nHost: x\r\n{auth}",
        "huge-target": f"GET /dav/{VICTIM}/{'a/' * 50_000}x.ics HTTP/1.1\r\nHost: x\r\n{auth}",
        "many-small-lines": f"GET {SECRET_OBJECT} HTTP/1.1\r\nHost: x\r\n{auth}" + "A:\r\n" * 30_000,
    }[what]
    r = exchange(server.port, (head + "Connection: close\r\n\r\n").encode())
    assert r.status in (0, 400, 414, 431), f"{what}: {r}"
    assert SECRET.encode() not in r.body
    still_serving(server)


@pytest.mark.parametrize("depth", [100, 10_000])
def test_deeply_nested_xml_is_refused(server, depth):
    auth = [("Authorization", basic(VICTIM, VICTIM_PW)), ("Depth", "0"), ("Content-Type", "application/xml")]
    body = (b'<?xml version="1.0"?><propfind xmlns="DAV:"><prop>' + b"<a>" * depth + b"</a>" * depth
            + b"</prop></propfind>")
    if len(body) <= 64 * 1024:
        r = request(server.port, "PROPFIND", VICTIM_CAL, auth, body)
        assert r.status in (207, 400, 413, 507), f"depth {depth}: {r}"
    else:
        r = request(server.port, "PROPFIND", VICTIM_CAL, auth, body)
        assert r.status in (400, 413, 507), f"depth {depth}: {r}"
    # many attributes and namespace declarations on one element
    attrs = b" ".join(b'xmlns:n%d="urn:x:%d" n%d:a="v"' % (i, i, i) for i in range(2000))
    body = b'<?xml version="1.0"?><propfind xmlns="DAV:" ' + attrs + b"><allprop/></propfind>"
    r = request(server.port, "PROPFIND", VICTIM_CAL, auth, body)
    assert r.status in (207, 400, 413, 507), r
    still_serving(server)
