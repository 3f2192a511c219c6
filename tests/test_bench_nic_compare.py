"""nic_compare's bookkeeping, without a simulator: when one measurement fails the others still
run and are written, the failed one keeps its old row, and the run ends with an error that names
it. The rows are those of the committed bench/results/latest.json (any measured row will do)."""
import copy
import json
import os

import pytest

from litedav.bench import nic_compare as bench

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def measured_row():
    with open(os.path.join(TOP, "bench", "results", "latest.json")) as f:
        rows = json.load(f)["soc"]
    return next(r for r in rows if r.get("soc") == bench.IDEAL_SOC and r["phy"] == "gmii")


def test_a_failed_measurement_loses_nothing_else(tmp_path, monkeypatch, measured_row):
    old = copy.deepcopy(measured_row)
    old.update(nic="liteeth", commit="old-row")
    (tmp_path / "latest.json").write_text(json.dumps({"soc": [old], "other": {"kept": 1}}))
    (tmp_path / "latest.md").write_text("<!-- other begin -->\nkept table\n<!-- other end -->\n")

    def measure(nic, phy, *args):
        if nic == "liteeth":
            raise bench.BenchError("PUT /bulk answered 500")
        row = copy.deepcopy(measured_row)
        row.update(nic=nic, phy=phy, commit="new-row")
        return row

    monkeypatch.setattr(bench, "build", lambda build_dir, **kw: build_dir)
    monkeypatch.setattr(bench.Simulator, "_sys_clk_hz", staticmethod(lambda gateware: 125_000_000))
    monkeypatch.setattr(bench, "measure", measure)
    with pytest.raises(SystemExit) as failure:
        bench.main(["--soc", bench.IDEAL_SOC, "--nic", "liteeth", "offload", "--phy", "gmii",
                    "--out", str(tmp_path)])
    assert "LiteEth" in str(failure.value) and "PUT /bulk answered 500" in str(failure.value)

    data = json.loads((tmp_path / "latest.json").read_text())
    assert data["other"] == {"kept": 1}
    rows = {(r["nic"], r["phy"]): r["commit"] for r in data["soc"]}
    assert rows == {("liteeth", "gmii"): "old-row", ("offload", "gmii"): "new-row"}
    md = (tmp_path / "latest.md").read_text()
    assert "kept table" in md and "new-row" in md
