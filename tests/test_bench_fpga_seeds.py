"""fpga_report's seed table: each seed's last build is kept beside the others, a seed built again
replaces its line, and a report written before the table counts as its own seed's run."""
import json

from litedav.bench import fpga_report


def record(seed, achieved, constraint=75.0, lut_free=0.42):
    return {"seed": seed, "sys_clk_mhz": constraint, "build_seconds": 2000.0, "lut_free": lut_free,
            "commit": f"c{seed}",
            "clocks": {"sys": {"role": "sys_clk", "achieved_mhz": achieved, "constraint_mhz": constraint,
                               "pass": achieved >= constraint},
                       "eth": {"role": "RGMII RX/TX", "achieved_mhz": 160.0, "constraint_mhz": 125.0,
                               "pass": True}}}


def test_seeds_accumulate(tmp_path):
    path = tmp_path / "fpga-board.json"
    old = record(3, 75.7)
    old.pop("commit")
    path.write_text(json.dumps(old))                    # a report from before the seed table
    new = record(1, 74.1)
    seeds = fpga_report.merge_seeds(str(path), new)
    assert list(seeds) == ["1", "3"]
    assert seeds["1"]["timing_met"] is False and seeds["1"]["sys_clk_achieved_mhz"] == 74.1
    assert seeds["3"]["timing_met"] is True and seeds["3"]["commit"] == "not recorded"

    path.write_text(json.dumps({**new, "seeds": seeds}))
    again = record(1, 76.8)
    seeds = fpga_report.merge_seeds(str(path), again)
    assert seeds["1"]["timing_met"] is True and seeds["1"]["commit"] == "c1"
    assert list(seeds) == ["1", "3"]
    md = fpga_report.markdown({**again, "board": "board", "cpu_variant": "v", "nic": "offload", "soc": {}, "nic_alone": {},
                               "seeds": seeds})
    assert "| 1 | 76.8 MHz | 75 MHz | met |" in md and "| 3 | 75.7 MHz | 75 MHz | met |" in md
