"""The simulator's own main loop (sim/model/sim_main.c): its clocks against LiteX's clocker
formula, and clear errors for a sim_config.js it cannot run.

sim/model/sim_main.c drives each `clocker` entry of sim_config.js itself, carrying the phase from
step to step instead of LiteX's two divisions per step. Every simulated figure depends on those
edges landing on the same steps, so this compiles the header into a small program and compares
it with the clocker's formula, pad = ((t - shift) mod period) < period / 2, at every step of many
clocks: sys_clk rates of the ideal SoC and the board models, phase shifts, LiteX's timebases and
time that jumps or goes back (where the header must fall back to the division)."""

import json
import os
import subprocess

import pytest

from litedav.sim.config import MODEL_DIR, clocker_freq_hz
from litedav.sim.run import link_model_files

CHECK = r"""
#include <stdio.h>
#include <stdlib.h>
#include "sim_clock.h"

static int clocker(uint64_t freq, uint64_t phase, uint64_t t)
{
    uint64_t period = 1000000000000ull / freq, shift = period * phase / 360;
    return (t - shift) % period < period / 2;
}

int main(int argc, char **argv)
{
    uint64_t freq = strtoull(argv[1], 0, 10), phase = strtoull(argv[2], 0, 10);
    uint64_t step = strtoull(argv[3], 0, 10), steps = strtoull(argv[4], 0, 10), t = 0;
    unsigned long long edges = 0;
    char pad = 0, last = 0;
    struct clock c = {0};

    (void)argc;
    c.pad = &pad;
    clock_init(&c, freq, phase);
    for (uint64_t i = 0; i < steps; i++) {
        /* every 997th step jumps 3 periods, every 1009th goes back 5 steps */
        if (i % 997 == 996)
            t += 3 * c.period_ps;
        else if (i % 1009 == 1008 && t >= 5 * step)
            t -= 5 * step;
        clock_step(&c, t);
        if (pad != clocker(freq, phase, t)) {
            printf("mismatch at step %llu, t=%llu ps: %d\n", (unsigned long long)i, (unsigned long long)t, pad);
            return 1;
        }
        edges += pad != last;
        last = pad;
        t += step;
    }
    printf("%llu\n", edges);
    return 0;
}
"""


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim_clock")
    source = folder / "check.c"
    source.write_text(CHECK)
    binary = folder / "check"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-I", MODEL_DIR, "-o", str(binary), str(source)],
                   check=True)
    return binary


@pytest.mark.parametrize("freq_hz", [125_000_000, clocker_freq_hz(75e6), clocker_freq_hz(50e6),
                                     100_000_000, 33_333_333, 1_000_000])
@pytest.mark.parametrize("phase_deg", [0, 45, 90, 180, 359])
@pytest.mark.parametrize("timebase", ["half", 1000, 1])
def test_clock_edges_match_litex_clocker(check, freq_hz, phase_deg, timebase):
    period = 10**12 // freq_hz
    step = period // 2 if timebase == "half" else timebase
    steps = 200_000 if step > 1 else 2 * period + 50_000
    out = subprocess.run([str(check), str(freq_hz), str(phase_deg), str(step), str(steps)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert int(out.stdout) > 0, "the clock never toggled: the comparison saw no edges"


def run_model(gateware, folder, config):
    """obj_dir/Vsim of a build, in folder with the build's modules and memory images and the
    given sim_config.js; (returncode, stdout + stderr). It exits before its first step."""
    link_model_files(gateware, str(folder))
    (folder / "sim_config.js").write_text(json.dumps(config))
    out = subprocess.run([os.path.join(gateware, "obj_dir", "Vsim")], cwd=folder, capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    return out.returncode, out.stdout + out.stderr


def build_config(sim_build):
    with open(os.path.join(sim_build, "gateware", "sim_config.js")) as f:
        return json.load(f)


def test_unknown_module_is_an_error(sim_build, tmp_path):
    config = build_config(sim_build)
    config.insert(1, {"module": "no_such_module", "interface": ["sys_clk"]})
    rc, out = run_model(os.path.join(sim_build, "gateware"), tmp_path, config)
    assert rc == 1, out
    assert "names module no_such_module, which no library in modules/ provides" in out


@pytest.mark.parametrize("args", [{"freq_hz": 125_000_000, "phase_deg": 360}, {"freq_hz": 0, "phase_deg": 0},
                                  {"phase_deg": 0}])
def test_bad_clock_is_an_error(sim_build, tmp_path, args):
    config = build_config(sim_build)
    clocker = next(m for m in config if m.get("module") == "clocker")
    clocker["args"] = args
    rc, out = run_model(os.path.join(sim_build, "gateware"), tmp_path, config)
    assert rc == 1, out
    assert "clocker sys_clk: expected" in out
