"""The reliability report's bookkeeping (tests/reliability_report.py): make soak's parts run one at
a time or together, and each must replace only its own section and say what it was measured on."""
import json
import os

import pytest

import reliability_report


def test_a_rerun_replaces_only_its_own_section(tmp_path, monkeypatch):
    path = str(tmp_path / "results" / "reliability.json")
    monkeypatch.setattr(reliability_report, "commit", lambda: "abc1234")
    reliability_report.record("power_cuts", {"trials": 100}, "100 cuts, 0 lost.",
                              title="Power cuts", test="tests/a.py::test_a", path=path)
    reliability_report.record("flood_syn", {"syns": 20000}, "20,000 SYNs.",
                              title="SYN flood", test="tests/b.py::test_b", path=path)
    monkeypatch.setattr(reliability_report, "commit", lambda: "def5678+")
    reliability_report.record("power_cuts", {"trials": 3}, "3 cuts, 0 lost.",
                              title="Power cuts", test="tests/a.py::test_a", path=path)

    with open(path) as f:
        report = json.load(f)
    assert sorted(report) == ["flood_syn", "power_cuts"]
    assert report["power_cuts"]["trials"] == 3 and report["power_cuts"]["commit"] == "def5678+"
    assert report["flood_syn"]["syns"] == 20000 and report["flood_syn"]["commit"] == "abc1234"

    with open(str(tmp_path / "results" / "reliability.md")) as f:
        md = f.read()
    # the table at the top names each section's commit; the old power-cut figures are gone
    assert "| SYN flood | abc1234 |" in md and "| Power cuts | def5678+ |" in md
    assert "3 cuts, 0 lost." in md and "100 cuts" not in md
    assert md.index("## Power cuts") > md.index("## SYN flood")  # sections in name order


def test_without_a_path_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(reliability_report.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert reliability_report.record("x", {"n": 1}, "one") is None
    assert os.listdir(tmp_path) == []


def test_a_report_that_is_not_an_object_is_refused(tmp_path):
    path = tmp_path / "reliability.json"
    path.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="expected a JSON object of sections"):
        reliability_report.load(str(path))
    assert reliability_report.load(str(tmp_path / "absent.json")) == {}


def test_commit_names_this_checkout():
    label = reliability_report.commit()
    if label is None:
        pytest.skip("not a git checkout")
    assert len(label.rstrip("+")) >= 7 and all(c in "0123456789abcdef" for c in label.rstrip("+"))
