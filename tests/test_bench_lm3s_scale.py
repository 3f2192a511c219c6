"""The LM3S9B95 port's scale bench (litedav.bench.lm3s_scale) on a small size: the idle-connection
limit search, instructions per keep-alive GET at 0 and a few idle connections, and a user's day
of 12 items with the incremental sync, in QEMU with the semihosted 128 KiB store. Checks the
machinery, not figures: the section is merged beside what latest.json/md already hold, the limit
search finds the PCB pool's size (the bench image's LM3S_TCP_PCBS) and a new request is served
after, the counts are positive, the two independent counts agree, a day costs more than its
incremental sync, and a run of one part keeps the other's figures."""
import json
import os
import re

import pytest

from litedav.bench import lm3s_scale as bench
from test_bench_lm3s import bench_out

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get("LITEDAV_LM3S_SCALE_OUT", os.path.join(TOP, "build", "lm3s-scale")))
OTHER = {"soc": [{"nic": "liteeth", "marker": "kept"}]}
OTHER_TABLE = "**another section**\n"
ITEMS = 12


def bench_pcbs():
    m = re.search(r"-DLM3S_TCP_PCBS=(\d+)", bench.QEMU_DEFS)
    assert m, bench.QEMU_DEFS
    return int(m.group(1))


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    out = bench_out(tmp_path_factory, OTHER, OTHER_TABLE)
    bench.main(["--out", str(out), "--build-dir", BUILD, "--requests", "5", "--counts", "0", "3",
                "--answer-timeout", "10", "--no-day"])
    first = json.loads((out / "latest.json").read_text())
    bench.main(["--out", str(out), "--build-dir", BUILD, "--items", str(ITEMS), "--no-idle"])
    return out, first, json.loads((out / "latest.json").read_text())


def test_merged_beside_other_sections_and_parts_kept(result):
    out, first, data = result
    assert data["soc"] == OTHER["soc"]
    section = data[bench.SECTION]
    # the day-only run kept the idle part of the first run
    assert section["idle_connections"] == first[bench.SECTION]["idle_connections"]
    assert section["users_day"]["initial"]["items"] == ITEMS
    md = (out / "latest.md").read_text()
    assert md.startswith(OTHER_TABLE) and md.count(bench.MD_BEGIN) == 1 and bench.MD_END in md
    assert "Idle keep-alive connections sustained" in md and "One user's day" in md


def test_limit_is_the_pcb_pool_and_new_requests_are_served_after(result):
    limit = result[2][bench.SECTION]["idle_connections"]["limit"]
    pcbs = bench_pcbs()
    assert limit["status_after"]["tcp_pcbs_limit"] == pcbs, limit
    assert limit["idle_connections_max"] == pcbs, limit
    assert limit["still_open_at_limit"] == pcbs, limit
    assert "MEMP_NUM_TCP_PCB" in limit["limited_by"], limit
    # the unanswered connection's SYN was held, not dropped, and served once a PCB freed
    assert limit["status_after"]["syn_held_total"] >= 1, limit
    assert limit["new_request_served_after_two_closed"], limit
    assert limit["status_after"]["heap_err"] == 0, limit


def test_idle_rows(result):
    rows = result[2][bench.SECTION]["idle_connections"]["rows"]
    assert [r["idle_connections"] for r in rows] == [0, 3]
    for r in rows:
        assert r["busy_instructions"] > 10_000 and r["all_instructions_net"] > 10_000, r
        # as test_bench_lm3s: over a few requests, the window's fixed share (the connection's
        # last ACKs, a status read's remainder) shows; 100 requests agree within 0.3 %
        assert 0.9 <= r["busy_instructions"] / r["all_instructions_net"] <= 1.05, r
        assert r["idle_closed_by_server"] == 0, r
    assert rows[1]["conns_idle"] >= 3, rows[1]


def test_users_day(result):
    day = result[2][bench.SECTION]["users_day"]
    initial, incremental = day["initial"], day["incremental"]
    assert "host file" in day["store"] and day["capacity"] is None
    assert initial["multiget_reports"] >= 1 and initial["requests"] == 1 + initial["multiget_reports"]
    assert incremental["hrefs_reported"] == 10 and incremental["requests"] == 2
    for r in (initial, incremental):
        assert r["busy_instructions"] > 0 and -0.1 <= r["agreement"] <= 0.05, r
        assert r["bytes_out"] > r["bytes_in"] > 0 and r["cpu_ms_at_80mhz"] > 0, r
    assert initial["busy_instructions"] > incremental["busy_instructions"]
    # the multiget carries every item's calendar data
    assert initial["bytes_out"] > initial["ical_bytes"]


def test_bad_arguments_are_refused(capsys):
    for argv in (["--requests", "0"], ["--store-kib", "8"], ["--store-kib", "256", "--no-day"], ["--items", "3"]):
        with pytest.raises(SystemExit):
            bench.main(argv)
        assert "error" in capsys.readouterr().err, argv
