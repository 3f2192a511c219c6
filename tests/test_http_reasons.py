"""Every status code the firmware can send has its reason phrase (RFC 9110 section 15): no
"Unknown" on a status line or in a multistatus.

The firmware's statuses are read from its sources (firmware/app, comments and strings left out):
every integer literal from 200 to 599 is taken for a status unless NOT_STATUSES says what else it
is. The reason phrases are http_reason()'s table (firmware/app/http/http_parse.c), checked against
RFC 9110's and RFC 4918's own names."""
import glob
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(TOP, "firmware", "app")

# literals in that range that are not statuses, and what they are
NOT_STATUSES = {
    240: "a line buffer's size (caldav_freebusy.c)",
    255: "DAV_PATH_MAX",
    256: "buffer sizes",
    300: "the lower bound of the error statuses (httpd.c: rc >= 300)",
    365: "days in a year (ical_time.c, caldav_freebusy.c)",
    366: "days in a leap year",
    399: "the civil-from-days algorithm's era offset (ical_time.c)",
    512: "a property name buffer's size (dav_props.c)",
    599: "the upper bound of the error statuses (httpd.c: rc <= 599)",
}

# RFC 9110 section 15 and RFC 4918 section 11 (207, 424, 507)
REASONS = {
    100: "Continue", 200: "OK", 201: "Created", 204: "No Content", 207: "Multi-Status", 301: "Moved Permanently",
    304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict",
    411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
    414: "URI Too Long", 415: "Unsupported Media Type", 417: "Expectation Failed",
    424: "Failed Dependency", 431: "Request Header Fields Too Large",
    500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    505: "HTTP Version Not Supported", 507: "Insufficient Storage",
}


def code_without_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def statuses_in_sources():
    found = {}
    for path in sorted(glob.glob(os.path.join(APP, "**", "*.[ch]"), recursive=True)):
        code = code_without_comments_and_strings(open(path).read())
        for number, line in enumerate(code.split("\n"), 1):
            for m in re.finditer(r"(?<![\w.])([2-5]\d\d)(?![\w.])", line):
                value = int(m.group(1))
                if value not in NOT_STATUSES:
                    found.setdefault(value, f"{os.path.relpath(path, TOP)}:{number}")
    return found


def reason_table():
    source = open(os.path.join(APP, "http", "http_parse.c")).read()
    body = re.search(r"const char \*http_reason\(int status\)\s*\{(.*?)\n\}", source, re.S).group(1)
    return {int(code): reason for code, reason in re.findall(r'case (\d+): return "([^"]*)";', body)}


def test_every_status_sent_has_its_reason_phrase():
    table = reason_table()
    missing = {code: where for code, where in statuses_in_sources().items() if code not in table}
    assert not missing, ("statuses without a reason phrase in http_reason() (or numbers that are "
                         f"no status: add them to NOT_STATUSES with what they are): {missing}")


def test_reason_phrases_are_the_rfcs():
    table = reason_table()
    wrong = {code: (reason, REASONS.get(code)) for code, reason in table.items()
             if REASONS.get(code) != reason}
    assert not wrong, f"http_reason() against RFC 9110 / RFC 4918 (code: ours, the RFC's): {wrong}"
    assert 200 in statuses_in_sources() and 207 in statuses_in_sources()   # the scan sees the code
