"""The LM3S9B95 port's instructions-per-request bench (litedav.bench.lm3s_instructions) in a
quick mode: a few requests of a small GET and a PROPFIND in one QEMU boot. Checks behaviour, not
figures: the section is written beside what latest.json/md already hold, every count is
positive, a PROPFIND costs more than a GET, N -> 2N requests doubles the count, and the two
independent counts (the firmware's busy cycles under -icount, the plugin's executed
instructions) agree."""
import json
import os
import shutil

import pytest

from litedav.bench import lm3s_instructions as bench

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the build folder test_qemu_lm3s uses (make is incremental: no second build)
BUILD = os.path.abspath(os.environ.get("LITEDAV_LM3S_OUT", os.path.join(TOP, "build", "lm3s9b95")))
SOC_ROWS = [{"nic": "liteeth", "phy": "gmii", "marker": "kept"}]
SOC_TABLE = "**the SoC table**\n"


def bench_out(tmp_path_factory, sections, table):
    """An output folder that already holds other sections (they must survive the merge), once
    QEMU, the Cortex-M compiler and the host's cc (the plugin) are there."""
    for tool in ("qemu-system-arm", "arm-none-eabi-gcc", "cc"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} missing: run `make deps`")
    out = tmp_path_factory.mktemp("bench")
    (out / "latest.json").write_text(json.dumps(sections))
    (out / "latest.md").write_text(table)
    return out


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    # what nic_compare leaves there
    out = bench_out(tmp_path_factory, {"soc": SOC_ROWS}, SOC_TABLE)
    bench.main(["--out", str(out), "--requests", "4", "--runs", "1", "--build-dir", BUILD, "--no-host",
                "--kinds", "get_keep_alive", "propfind_home"])
    return out, json.loads((out / "latest.json").read_text())


def test_section_merged_beside_the_soc_rows(result):
    out, data = result
    assert data["soc"] == SOC_ROWS
    section = data[bench.SECTION]
    assert set(section["kinds"]) == {"get_keep_alive", "propfind_home"}
    md = (out / "latest.md").read_text()
    assert md.startswith(SOC_TABLE) and bench.MD_BEGIN in md and bench.MD_END in md
    assert "PROPFIND Depth 1 /dav/demo/" in md


def test_counts_positive_and_parts_add_up(result):
    kinds = result[1][bench.SECTION]["kinds"]
    for name, k in kinds.items():
        for key in ("busy_instructions", "all_instructions", "all_instructions_net"):
            assert k[key] > 0, (name, key, k)
        assert k["frames_in"] >= 1 and k["frames_out"] >= 1, k
        assert k["by_part"]["lwip"] > 0 and k["by_part"]["app"] > 0 and k["by_part"]["driver"] > 0, k
        # the parts are a split of the plugin's total (rounded per part)
        assert abs(sum(k["by_part"].values()) - k["all_instructions"]) <= len(k["by_part"]), k


def test_propfind_costs_more_than_a_get(result):
    kinds = result[1][bench.SECTION]["kinds"]
    get, propfind = kinds["get_keep_alive"], kinds["propfind_home"]
    assert propfind["busy_instructions"] > 1.5 * get["busy_instructions"], kinds
    assert propfind["all_instructions"] > 1.5 * get["all_instructions"], kinds
    assert propfind["by_part"]["app"] > get["by_part"]["app"], kinds


def test_twice_the_requests_twice_the_instructions(result):
    for name, k in result[1][bench.SECTION]["kinds"].items():
        for key in ("scaling_busy", "scaling_all_net"):
            assert all(1.85 <= s <= 2.15 for s in k[key]), (name, key, k[key])


def test_icount_cycles_agree_with_the_plugin(result):
    """Busy cycles converted at 2^shift ns per instruction against instructions the plugin
    counted: the busy turns are most of the work, the idle turns the rest."""
    for name, k in result[1][bench.SECTION]["kinds"].items():
        assert 0.9 <= k["busy_instructions"] / k["all_instructions_net"] <= 1.05, (name, k)


def test_list_shaped_latest_json_becomes_the_soc_section(tmp_path):
    (tmp_path / "latest.json").write_text(json.dumps(SOC_ROWS))
    section = {"sys_clk_hz": 1, "method": "m", "requests": {"n": 1, "2n": 2}, "runs": 1, "kinds": {}}
    bench.merge_reports(section, str(tmp_path))
    bench.merge_reports(section, str(tmp_path))   # again: replaced, not appended
    data = json.loads((tmp_path / "latest.json").read_text())
    assert data == {"soc": SOC_ROWS, bench.SECTION: section}
    assert (tmp_path / "latest.md").read_text().count(bench.MD_BEGIN) == 1


def test_bad_arguments_are_refused(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--requests", "0"])
    assert "at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="does not exist"):
        bench.main(["--elf", "/nonexistent/litedav.elf", "--out", "/nonexistent"])


CALLGRIND_DUMP = """\
version: 1
creator: callgrind-3.19.0
events: Ir
ob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(1) ./string/../sysdeps/x86_64/multiarch/strlen-avx2.S
fn=(1) __strlen_avx2
10 100
ob=(2) /src/build/host/litedav-host
fl=(2) /src/firmware/app/caldav/ical.c
fn=(2) ical_parse
5 1000
cob=(1)
cfi=(1)
cfn=(1)
calls=3 0
7 300
+1 50
fi=(3) /src/build/lwip/src/include/lwip/def.h
+2 7
fe=(2)
-1 3
fl=(4) /src/build/lwip/src/core/tcp_in.c
fn=(3) tcp_input
1 200
fl=(2)
fn=(2)
9 5
"""


def test_callgrind_self_costs_by_part(tmp_path):
    """The host comparison's parser: name compression per kind (ob/fl/fn ids overlap), a call's
    inclusive cost left to the callee, inlined code (fi=/fe=) counted by its own file."""
    from litedav.bench.host_callgrind import self_costs
    dump = tmp_path / "callgrind.out.1"
    dump.write_text(CALLGRIND_DUMP)
    totals, functions = self_costs(str(dump))
    assert totals == {"app": 1058, "lwip": 207, "port": 0, "libc": 100, "slirp": 0, "other": 0}
    assert functions == {"libc:__strlen_avx2": 100, "app:ical_parse": 1058, "lwip:ical_parse": 7,
                         "lwip:tcp_input": 200}
