"""End-to-end checks of request bodies and the handler interface: framing
(Content-Length, chunked with extensions and trailers), bodies drained on
keep-alive connections with pipelining, 413 limits, Expect: 100-continue,
405/501 with Allow and OPTIONS.

No route takes a body yet, so bodies go to OPTIONS (read and dropped) and to
methods a route refuses (405, drained when small). Every check reads the
responses byte by byte off one connection and then asks for
/static/task.ics on the same connection: the next request must be answered
byte-exact, which proves the body was consumed to its last byte, no more.

A test module imports these by name and provides a `target` fixture with
`port` and `timeout` (http_checks.Target). Each check is a few exchanges, so
it stays within seconds on the simulated SoC.
"""
import os
import socket

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK_ICS = open(os.path.join(TOP, "firmware", "static", "task.ics"), "rb").read()
GET_TASK = b"GET /static/task.ics HTTP/1.1\r\nHost: t\r\n\r\n"
GET_TASK_CLOSE = b"GET /static/task.ics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
ALLOW_STATIC = {"GET", "HEAD", "OPTIONS"}
# OPTIONS * (RFC 9110 9.3.7): every method the server implements, WebDAV/CalDAV ones included.
ALLOW_SERVER = ALLOW_STATIC | {"PUT", "DELETE", "PROPFIND", "PROPPATCH", "MKCOL", "MKCALENDAR", "REPORT",
                               "COPY", "MOVE", "POST"}
# "/": the status page, and PROPFIND and REPORT for clients that discover CalDAV or search
# principals from the server's root
ALLOW_ROOT = ALLOW_STATIC | {"PROPFIND", "REPORT"}


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case name -> value (last one wins)
        self.body = body

    def header(self, name):
        return self.headers.get(name.lower())

    def allow(self):
        return {m.strip() for m in (self.header("Allow") or "").split(",") if m.strip()}


class Client:
    """One raw connection; reads HTTP/1.1 responses strictly off the wire."""

    def __init__(self, target):
        self.sock = socket.create_connection(("127.0.0.1", target.port), timeout=target.timeout)
        self.buf = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError(f"connection closed; unparsed: {self.buf[:200]!r}")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def response(self, head_request=False, interim=False):
        """The next response; 1xx ones are returned only when interim=True."""
        while True:
            status_line = self._line()
            assert status_line.startswith(b"HTTP/1.1 "), status_line
            status = int(status_line.split()[1])
            headers = {}
            while True:
                line = self._line()
                if not line:
                    break
                name, _, value = line.partition(b":")
                headers[name.decode().lower()] = value.strip().decode()
            if 100 <= status < 200:
                if interim:
                    return Response(status, headers, b"")
                continue
            break
        if head_request or status in (204, 304):
            body = b""
        elif headers.get("transfer-encoding") == "chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    while self._line():
                        pass
                    break
                body += self._take(size)
                assert self._take(2) == b"\r\n"
        else:
            body = self._take(int(headers["content-length"]))
        return Response(status, headers, body)

    def closed(self):
        """True if the server closed the connection with nothing more to read."""
        if self.buf:
            return False
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True


def expect_task(c):
    r = c.response()
    assert r.status == 200 and r.body == TASK_ICS, (r.status, r.body[:100])


def chunked(data, sizes, ext=b"", trailers=b""):
    out, pos = b"", 0
    for size in sizes:
        piece = data[pos:pos + size]
        out += b"%x%s\r\n%s\r\n" % (len(piece), ext, piece)
        pos += size
    assert pos >= len(data)
    return out + b"0\r\n" + trailers + b"\r\n"


def test_options(target):
    with Client(target) as c:
        c.send(b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n"
               b"OPTIONS /static/task.ics HTTP/1.1\r\nHost: t\r\n\r\n"
               b"OPTIONS / HTTP/1.1\r\nHost: t\r\n\r\n" + GET_TASK_CLOSE)
        for allow in (ALLOW_SERVER, ALLOW_STATIC, ALLOW_ROOT):
            r = c.response()
            assert r.status == 200 and r.body == b""
            assert r.header("Content-Length") == "0"
            assert r.allow() == allow
        expect_task(c)
        assert c.closed()


def test_bodies_drained_on_keepalive_pipelined(target):
    """Bodies of every framing, all in one write with the requests after them."""
    body = bytes(range(256)) * 4
    requests = [
        b"OPTIONS / HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body),
        b"OPTIONS * HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked(body, [1, 16, 300, 707], ext=b";name=\"v;al\";x", trailers=b"X-Sum: 1\r\n"),
        b"DELETE /static/task.ics HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked(b"GET / HTTP/1.1\r\n\r\n", [5, 100]),
        b"PUT /static/task.ics HTTP/1.1\r\nHost: t\r\nContent-Length: 18\r\n\r\n"
        b"GET / HTTP/1.1\r\n\r\n",
        b"GET /static/task.ics HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nBODY",
    ]
    with Client(target) as c:
        c.send(b"".join(requests) + GET_TASK_CLOSE)
        for want in (200, 200):
            r = c.response()
            assert r.status == want and r.header("Connection") == "keep-alive"
        for _ in range(2):
            r = c.response()
            assert r.status == 405, r.status
            assert r.allow() == ALLOW_STATIC
            assert r.header("Connection") == "keep-alive"
            assert r.body.startswith(b"405 Method Not Allowed")
        expect_task(c)  # GET with a body: the body is dropped
        expect_task(c)
        assert c.closed()


def test_body_split_across_writes(target):
    """A chunked body that arrives in pieces, cut inside the framing."""
    data = (b"PUT /static/task.ics HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunked(b"x" * 3000, [1000, 2000], ext=b"; a=b") + GET_TASK_CLOSE)
    with Client(target) as c:
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for cut in (60, 15, 1025, 1940):
            c.send(data[:cut])
            data = data[cut:]
        c.send(data)
        r = c.response()
        assert r.status == 405 and r.header("Connection") == "keep-alive"
        expect_task(c)
        assert c.closed()


def test_content_too_large(target):
    # announced beyond the server's limit: 413 before any body byte, then close
    with Client(target) as c:
        c.send(b"PUT /static/task.ics HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n\r\n")
        r = c.response()
        assert r.status == 413 and r.header("Connection") == "close"
        assert r.body.startswith(b"413 Content Too Large\n")
        assert c.closed()
    # over the route's limit but cheap to drain: 413, connection kept
    with Client(target) as c:
        c.send(b"OPTIONS / HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n" + b"y" * 5000
               + GET_TASK_CLOSE)
        r = c.response()
        assert r.status == 413 and r.header("Connection") == "keep-alive"
        expect_task(c)
        assert c.closed()
    # chunked: refused at the chunk-size that crosses the limit
    with Client(target) as c:
        c.send(b"OPTIONS / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"800\r\n" + b"z" * 2048 + b"\r\n1000\r\n")
        r = c.response()
        assert r.status == 413 and r.header("Connection") == "close"
        assert c.closed()


def test_expect_100_continue(target):
    with Client(target) as c:
        c.send(b"OPTIONS / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
               b"Content-Length: 10\r\n\r\n")
        r = c.response(interim=True)
        assert r.status == 100
        c.send(b"0123456789" + GET_TASK)
        r = c.response()
        assert r.status == 200 and r.header("Connection") == "keep-alive"
        expect_task(c)
        # rejected: the final status without 100, the body is not awaited
        c.send(b"PUT /static/task.ics HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
               b"Content-Length: 10\r\n\r\n")
        r = c.response(interim=True)
        assert r.status == 405 and r.header("Connection") == "close"
        assert c.closed()
    with Client(target) as c:
        c.send(b"OPTIONS / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")
        assert c.response(interim=True).status == 100
        c.send(chunked(b"abc", [3]) + GET_TASK_CLOSE)
        assert c.response().status == 200
        expect_task(c)
        assert c.closed()
    with Client(target) as c:
        c.send(b"OPTIONS / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
               b"Content-Length: 5000\r\n\r\n")
        r = c.response(interim=True)
        assert r.status == 413 and r.header("Connection") == "close"
        assert c.closed()
    with Client(target) as c:
        c.send(b"OPTIONS / HTTP/1.1\r\nHost: t\r\nExpect: something-else\r\n\r\n")
        r = c.response(interim=True)
        assert r.status == 417 and r.header("Connection") == "close"
        assert c.closed()


def test_body_framing_errors(target):
    cases = [
        b"OPTIONS / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"OPTIONS / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n",
        b"OPTIONS / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
        b"OPTIONS / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\n",
        b"OPTIONS / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
    ]
    for data in cases:
        with Client(target) as c:
            c.send(data + GET_TASK)
            r = c.response()
            assert r.status == 400 and r.header("Connection") == "close", (data, r.status)
            assert c.closed(), data


def test_unknown_method_501(target):
    with Client(target) as c:
        c.send(b"BREW /static/task.ics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
               + GET_TASK_CLOSE)
        r = c.response()
        assert r.status == 501 and r.allow() == ALLOW_STATIC
        expect_task(c)
        assert c.closed()


def test_status_page_streamed(target):
    """The status page is produced in pieces: chunked to HTTP/1.1 clients,
    delimited by the close for HTTP/1.0 ones, head only for HEAD."""
    with Client(target) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: t\r\n\r\nHEAD / HTTP/1.1\r\nHost: t\r\n\r\n" + GET_TASK)
        r = c.response()
        assert r.status == 200 and r.header("Transfer-Encoding") == "chunked"
        assert r.header("Content-Length") is None
        text = r.body.decode()
        assert text.startswith("LiteDAV status\n")
        for field in ("uptime_cycles", "frames_in", "conns_open", "responses_5xx"):
            assert f"\n{field}: " in text, field
        r = c.response(head_request=True)
        assert r.status == 200 and r.header("Transfer-Encoding") == "chunked"
        expect_task(c)
    with Client(target) as c:
        c.send(b"GET / HTTP/1.0\r\n\r\n")
        head = c._line()
        assert head == b"HTTP/1.1 200 OK"
        rest = b""
        try:
            while True:
                c._fill()
        except EOFError:
            rest = c.buf
        head_fields, _, body = rest.partition(b"\r\n\r\n")
        assert b"Connection: close" in head_fields
        assert b"Transfer-Encoding" not in head_fields and b"Content-Length" not in head_fields
        assert body.startswith(b"LiteDAV status\n") and b"\nrequests: " in body
