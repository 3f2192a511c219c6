"""sim.run.build() with a relative build folder: every step (LiteX headers, firmware make,
gateware) must get the same absolute folder. make runs in firmware/, so a relative
SOC_BUILD there named another folder and the firmware build failed ("missing .../csr.h")."""
import os

import pytest

from litedav.sim import run


def test_a_relative_build_folder_reaches_every_step_as_one_absolute_path(monkeypatch, tmp_path):
    calls = []

    def fake_run(cmd, log_path, **kw):
        calls.append((cmd, log_path))

    monkeypatch.setattr(run, "_run", fake_run)
    monkeypatch.setattr(run, "_model_fingerprint", lambda gateware: "fingerprint")
    (tmp_path / "rel-build" / "gateware").mkdir(parents=True)  # where the stamp is written
    monkeypatch.chdir(tmp_path)
    returned = run.build("rel-build")
    expected = str(tmp_path / "rel-build")
    assert returned == expected
    make = [c for c, _ in calls if c[0] == "make"]
    assert make and f"SOC_BUILD={expected}" in make[0]
    socs = [c for c, _ in calls if "--output-dir" in c]
    assert socs and all(c[c.index("--output-dir") + 1] == expected for c in socs)
    assert all(os.path.isabs(log_path) and log_path.startswith(expected) for _, log_path in calls)


def test_a_simulator_of_a_relative_build_folder_names_its_files_absolutely(monkeypatch, tmp_path):
    # the simulator process runs in its run directory, so a relative path there would name another file
    monkeypatch.chdir(tmp_path)
    sim = run.Simulator("rel-build", run.SimOptions(port=8123))
    assert sim.build_dir == str(tmp_path / "rel-build")
    assert sim.run_dir == str(tmp_path / "rel-build" / "run-8123")
    assert os.path.isabs(sim.flash) and os.path.isabs(sim.boot_flash)
