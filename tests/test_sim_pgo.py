"""The profile-guided model (sim/pgo.py, platforms/sim.py compile_model()): the build trains it
with a boot, and the profile changes how fast the host simulates, never what is simulated."""
import os

import pytest

from litedav.platforms import sim as sim_platform
from litedav.sim import pgo


@pytest.mark.skipif(not pgo.enabled(), reason="LITEDAV_SIM_PGO=0: models are built without a profile")
def test_the_model_is_trained_and_boots_in_the_same_cycles_as_its_training_model(sim_build, appliance):
    record = pgo.training_record(sim_build)
    assert record, "the model was built without a profile (the build log says why)"
    profiles = os.listdir(os.path.join(sim_build, "gateware", pgo.PROFILE_DIR))
    assert any(name.endswith(".gcda") for name in profiles)
    if record["firmware_sha256"] != pgo.firmware_digest(sim_build):
        pytest.skip("the model was trained with an earlier firmware image (only the image was rebuilt since)")
    # both boots start from an erased flash: the instrumented model and the one built with its
    # profile must count the same cycles from reset to serving
    assert record["boot_line"] and record["boot_line"] == pgo.boot_line(appliance.console)


class _Make:
    """Stands in for compile_model()'s make runs and the training run."""

    def __init__(self, monkeypatch, gateware, train):
        self.passes = []
        monkeypatch.setattr(sim_platform.subprocess, "run", self.run)
        monkeypatch.setattr(pgo, "train", train)
        monkeypatch.setenv("LITEDAV_SIM_PGO", "1")
        (gateware / "obj_dir").mkdir()

    def run(self, cmd, **kw):
        target = cmd[3]
        pgo_pass = next(arg for arg in cmd if arg.startswith("PGO="))[4:]
        self.passes.append((target, pgo_pass))


class _Platform:
    sources = [("sim.v", "verilog", "work")]


def test_a_failed_training_run_leaves_a_model_without_a_profile_and_says_why(monkeypatch, tmp_path, capsys):
    gateware = tmp_path / "gateware"
    gateware.mkdir()

    def no_boot(build_dir, profile_dir):
        os.makedirs(profile_dir)
        raise pgo.TrainingError("the training model did not boot: simulator exited during boot")

    make = _Make(monkeypatch, gateware, no_boot)
    sim_platform.compile_model(str(gateware), _Platform(), {"OPT_FAST": "-O2"})
    assert make.passes == [("all", "generate"), ("model", "")]
    assert "did not boot" in capsys.readouterr().out
    assert not (gateware / pgo.PROFILE_DIR).exists()


def test_a_trained_model_is_compiled_again_with_its_profile(monkeypatch, tmp_path):
    gateware = tmp_path / "gateware"
    gateware.mkdir()
    make = _Make(monkeypatch, gateware, lambda build_dir, profile_dir: 1.0)
    sim_platform.compile_model(str(gateware), _Platform(), {"OPT_FAST": "-O2"})
    assert make.passes == [("all", "generate"), ("model", "use")]


def test_no_profile_when_asked_for_none_or_when_tracing(monkeypatch, tmp_path):
    gateware = tmp_path / "gateware"
    gateware.mkdir()

    def must_not_train(build_dir, profile_dir):
        raise AssertionError("trained")

    make = _Make(monkeypatch, gateware, must_not_train)
    monkeypatch.setenv("LITEDAV_SIM_PGO", "0")
    sim_platform.compile_model(str(gateware), _Platform(), {"OPT_FAST": "-O2"})
    monkeypatch.setenv("LITEDAV_SIM_PGO", "1")
    sim_platform.compile_model(str(gateware), _Platform(), {"OPT_FAST": "-O2", "TRACE": "1"})
    assert make.passes == [("all", ""), ("all", "")]


def test_the_build_says_when_its_model_got_no_profile(monkeypatch, tmp_path, capsys):
    from litedav.sim import run
    monkeypatch.setattr(run, "_run", lambda cmd, log_path, **kw: None)
    monkeypatch.setattr(run, "_model_fingerprint", lambda gateware: "fingerprint")
    monkeypatch.setenv("LITEDAV_SIM_PGO", "1")
    (tmp_path / "b" / "gateware").mkdir(parents=True)
    run.build(str(tmp_path / "b"))
    assert "built without a profile" in capsys.readouterr().out
    (tmp_path / "b" / "gateware" / ".model-fingerprint").unlink()
    (tmp_path / "b" / "gateware" / pgo.PROFILE_DIR).mkdir()
    (tmp_path / "b" / "gateware" / pgo.PROFILE_DIR / pgo.TRAINING_RECORD).write_text('{"seconds": 8.0}')
    run.build(str(tmp_path / "b"))
    assert "profile-guided (trained in 8 s)" in capsys.readouterr().out
