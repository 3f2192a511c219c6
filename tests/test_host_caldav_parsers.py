"""Host tests of the request parsers: XML (firmware/app/util/xml_*.c), iCalendar
(firmware/app/caldav/ical_*.c), and libFuzzer targets for them, for the HTTP parsers
(http_parse.c, http_chunked.c, http_cond.c; their table-driven tests are in
test_host_parser.py), sync tokens (sync.c) and Basic credentials (auth.c).

Builds firmware/ports/host's caldav-parsers (gcc, ASan/UBSan) and
caldav-fuzzers (clang libFuzzer with ASan/UBSan) into build/host/, runs the
two table-driven unit tests (each must end with "N passed, 0 failed"), then
runs each fuzz target from its seed corpus in tests/host/corpus/<name>/ for a
bounded time and requires that it finds no crash, leak, sanitizer report or
failed invariant. The number of executions is printed (pytest -s) and
attached to the test report.

    fast (default)        FUZZ_SECONDS_FAST seconds per target
    LITEDAV_FUZZ=1        LITEDAV_FUZZ_SECONDS per target (default 300)
    LITEDAV_SOAK=1        SOAK_RUNS executions per target (10 million, no time bound),
                          executions, crashes and coverage recorded in the reliability
                          report (tests/reliability_report.py, section parser_fuzzing)
    LITEDAV_SEED          libFuzzer -seed (default 12345)

The fuzzers need clang's runtime libraries (Debian: libclang-rt-14-dev).
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import reliability_report

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")
CORPUS = os.path.join(TOP, "tests", "host", "corpus")

FUZZ_SECONDS_FAST = 12
FUZZ_SECONDS_LONG = 300
LONG_FUZZ = os.environ.get("LITEDAV_FUZZ", "") not in ("", "0")
FUZZ_SECONDS = int(os.environ.get("LITEDAV_FUZZ_SECONDS",
                                  FUZZ_SECONDS_LONG if LONG_FUZZ else FUZZ_SECONDS_FAST))
SEED = int(os.environ.get("LITEDAV_SEED", "12345"))
SOAK = os.environ.get("LITEDAV_SOAK") == "1"
SOAK_RUNS = int(os.environ.get("LITEDAV_FUZZ_RUNS", "10000000"))
FUZZERS = ["xml", "ical", "http", "sync", "auth"]

SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")
EXECUTED = re.compile(r"stat::number_of_executed_units:\s*(\d+)")
COVERAGE = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/", re.M)


def run(cmd, timeout):
    proc = subprocess.run(cmd, cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", timeout=timeout)
    sys.stdout.write("$ " + " ".join(cmd) + "\n" + proc.stdout[-20000:])
    return proc


@pytest.fixture(scope="module")
def unit_build():
    proc = run(["make", "-C", PORT, "OUT=" + OUT, "caldav-parsers"], timeout=180)
    assert proc.returncode == 0, "host build of the CalDAV parsers failed:\n" + proc.stdout
    return OUT


@pytest.fixture(scope="module")
def fuzz_build():
    proc = run(["make", "-C", PORT, "OUT=" + OUT, "caldav-fuzzers"], timeout=300)
    if proc.returncode != 0 and "libclang_rt" in proc.stdout:
        pytest.fail("clang cannot link libFuzzer: install libclang-rt-14-dev (Debian)\n" + proc.stdout)
    assert proc.returncode == 0, "libFuzzer build failed:\n" + proc.stdout
    return OUT


def check_unit(program, minimum):
    proc = run([program], timeout=120)
    lines = proc.stdout.rstrip("\n").splitlines()
    last = lines[-1] if lines else ""
    assert proc.returncode == 0, f"{program} exited {proc.returncode}:\n{proc.stdout}"
    m = SUMMARY.match(last)
    assert m, f"{program}: last line is not 'N passed, M failed': {last!r}"
    assert int(m.group(2)) == 0 and int(m.group(1)) >= minimum, proc.stdout


def test_xml_unit(unit_build):
    check_unit(os.path.join(unit_build, "test_xml"), 2000)


def test_ical_unit(unit_build):
    check_unit(os.path.join(unit_build, "test_ical"), 5000)


@pytest.mark.parametrize("name", FUZZERS)
def test_fuzz(fuzz_build, name, record_property):
    seeds = os.path.join(CORPUS, name)
    assert len(os.listdir(seeds)) >= 5, f"seed corpus {seeds} is missing"
    # new inputs go to a fresh directory so the run starts from the seeds only
    found = os.path.join(fuzz_build, "fuzz-corpus", name)
    shutil.rmtree(found, ignore_errors=True)
    os.makedirs(found)
    artifacts = os.path.join(fuzz_build, "fuzz-artifacts", name) + os.sep
    os.makedirs(artifacts, exist_ok=True)
    bound = [f"-runs={SOAK_RUNS}"] if SOAK else [f"-max_total_time={FUZZ_SECONDS}"]
    cmd = [os.path.join(fuzz_build, "fuzz_" + name), *bound,
           f"-seed={SEED}", "-timeout=10", "-rss_limit_mb=1024", "-print_final_stats=1",
           f"-artifact_prefix={artifacts}", found, seeds]
    started = time.time()
    proc = run(cmd, timeout=6 * 3600 if SOAK else FUZZ_SECONDS + 120)
    seconds = time.time() - started
    tail = proc.stdout[-6000:]
    assert proc.returncode == 0, f"fuzz_{name} found a failure (input saved under {artifacts}):\n{tail}"
    for bad in ("ERROR: AddressSanitizer", "runtime error:", "ERROR: libFuzzer", "invariant failed"):
        assert bad not in proc.stdout, f"fuzz_{name}: {bad}\n{tail}"
    m = EXECUTED.search(proc.stdout)
    assert m, f"fuzz_{name}: no execution count in its output\n{tail}"
    executions = int(m.group(1))
    record_property("executions", executions)
    print(f"\nfuzz_{name}: {executions} executions in {seconds:.0f} s (seed {SEED})")
    assert executions > 1000, f"fuzz_{name} ran only {executions} inputs"
    if SOAK:
        assert executions >= SOAK_RUNS, f"fuzz_{name}: {executions} executions, fewer than {SOAK_RUNS}"
        cov = COVERAGE.findall(proc.stdout)
        assert cov, f"fuzz_{name}: no coverage line in its output\n{tail}"
        record_soak(name, {"executions": executions, "crashes": 0, "coverage_edges": int(cov[-1][1]),
                           "features": int(cov[-1][2]), "corpus_inputs": int(cov[-1][3]),
                           "seed_inputs": len(os.listdir(seeds)), "wall_seconds": round(seconds)})


def record_soak(name, figures):
    """One report section for all fuzzers: each run adds or replaces its own row."""
    path = os.environ.get(reliability_report.ENV)
    fuzzers = {}
    if path:
        fuzzers = dict(reliability_report.load(path).get("parser_fuzzing", {}).get("fuzzers", {}))
    fuzzers[name] = figures
    rows = ["| fuzzer | what it checks | executions | crashes | coverage (edges / features) | corpus |",
            "|---|---|---|---|---|---|"]
    for fuzzer in sorted(fuzzers):
        f = fuzzers[fuzzer]
        rows.append(f"| fuzz_{fuzzer} | {TARGETS.get(fuzzer, '')} | {f['executions']:,} | {f['crashes']} | "
                    f"{f['coverage_edges']} / {f['features']} | {f['corpus_inputs']} |")
    summary = "\n".join([
        f"libFuzzer with ASan and UBSan (tests/host/fuzz_*.c), {SOAK_RUNS:,} executions per target from "
        f"the seed corpus in tests/host/corpus/, seed {SEED}; wall time is not a figure here.", "", *rows])
    reliability_report.record("parser_fuzzing", {"fuzzers": fuzzers, "runs_per_fuzzer": SOAK_RUNS,
                                                  "seed": SEED}, summary, title="Parser fuzzing")


TARGETS = {
    "xml": "XML reader (xml_parse.c)",
    "ical": "iCalendar reader and time ranges (ical_*.c)",
    "http": "request head, chunked bodies, entity tags (http_parse.c, http_chunked.c, http_cond.c)",
    "sync": "sync tokens (sync.c) against a reference reader",
    "auth": "Basic credentials and base64 (auth.c) against a reference decoder",
}
