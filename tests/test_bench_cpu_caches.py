"""bench/cpu_caches.py: configurations are parsed or refused with the syntax in the message, and
the table puts one SoC's CPU variants side by side, naming each column's variant."""
import argparse

import pytest

from litedav.bench import cpu_caches


def test_configs():
    assert cpu_caches.parse_config("32768:8192") == (32768, 8192, False)
    assert cpu_caches.parse_config("32768:8192:whole") == (32768, 8192, True)
    assert cpu_caches.parse_config("prebuilt") == (None, None, True)
    for bad in ("32768", "32k:8k", "32768:8192:lines", "1:2:3:4"):
        with pytest.raises(argparse.ArgumentTypeError, match="INSTRUCTION:DATA"):
            cpu_caches.parse_config(bad)


def result(keep_alive):
    return {"sys_clk_hz": 75_000_000, "commit": "abc1234",
            "small_get_keep_alive": {"cpu_cycles_per_request": keep_alive}}


def test_table_side_by_side():
    rows = [
        {"soc": "colorlight_i5", "cpu_variant": "standard+no-dsp", "nic": "offload", "phy": "mii",
         "icache": 16384, "dcache": 8192, "whole": False, "result": result(80454)},
        {"soc": "colorlight_i5", "cpu_variant": "linux+no-dsp", "nic": "offload", "phy": "mii",
         "icache": None, "dcache": None, "whole": True, "result": result(104969)},
    ]
    table = cpu_caches.markdown(rows)
    assert table.count("| row |") == 1
    head = next(line for line in table.splitlines() if line.startswith("| row |"))
    assert head.index("linux+no-dsp, I 4 / D 4 KiB, prebuilt") < head.index("standard+no-dsp, I 16 / D 8 KiB")
    assert "| 104,969 | 80,454 |" in table
    assert "| - | - |" in table     # rows this result has no figure for
