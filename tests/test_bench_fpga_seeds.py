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
    seeds = fpga_report.merge_seeds(fpga_report.load_report(str(path)), 1, fpga_report.seed_summary(new))
    assert list(seeds) == ["1", "3"]
    assert seeds["1"]["timing_met"] is False and seeds["1"]["sys_clk_achieved_mhz"] == 74.1
    assert seeds["3"]["timing_met"] is True and seeds["3"]["commit"] == "not recorded"

    path.write_text(json.dumps({**new, "seeds": seeds}))
    again = record(1, 76.8)
    seeds = fpga_report.merge_seeds(fpga_report.load_report(str(path)), 1, fpga_report.seed_summary(again))
    assert seeds["1"]["timing_met"] is True and seeds["1"]["commit"] == "c1"
    assert list(seeds) == ["1", "3"]
    md = fpga_report.markdown({**again, "board": "board", "cpu_variant": "v", "nic": "offload", "soc": {}, "nic_alone": {},
                               "seeds": seeds})
    assert "| 1 | 76.8 MHz | 75 MHz | met |" in md and "| 3 | 75.7 MHz | 75 MHz | met |" in md


def test_a_failed_seed_is_recorded(tmp_path):
    """A seed whose build nextpnr finished below the constraint goes into the table as FAILED,
    from nextpnr's report; the rest of the report stays the last finished build's."""
    build_dir = tmp_path / "build"
    (build_dir / "gateware").mkdir(parents=True)
    (build_dir / "gateware" / "colorlight_i5_report.json").write_text(json.dumps({
        "fmax": {"$glbnet$VexRiscv.clk": {"achieved": 74.87, "constraint": 75.0},
                 "$glbnet$eth_clocks0_rx": {"achieved": 165.0, "constraint": 125.0}},
        "utilization": {"TRELLIS_COMB": {"used": 14000, "available": 24288}}}))
    line = fpga_report.failed_seed("colorlight_i5", str(build_dir), 2, 1170)
    assert line["timing_met"] is False and line["sys_clk_achieved_mhz"] == 74.87
    assert line["sys_clk_constraint_mhz"] == 75.0 and line["lut_free"] == 0.424

    base = tmp_path / "fpga-colorlight_i5"
    finished = {**record(1, 76.8), "board": "colorlight_i5", "cpu_variant": "v", "nic": "offload",
                "soc": {}, "nic_alone": {}}
    base.with_suffix(".json").write_text(json.dumps(finished))
    fpga_report.record_seed_line(str(base), 2, line)
    r = json.loads(base.with_suffix(".json").read_text())
    assert r["seed"] == 1 and list(r["seeds"]) == ["1", "2"]
    assert "| 2 | 74.87 MHz | 75 MHz | FAILED |" in base.with_suffix(".md").read_text()
    assert fpga_report.failed_seed("colorlight_i5", str(tmp_path / "nothing"), 2, 10) is None
