"""The training run of a profile-guided model build (sim/model/model.mk's PGO=generate).

gcc optimizes the Verilated model with a profile of where its code branches: the model is first
built instrumented, booted once here with the build's own firmware and given a little traffic,
and then built again with the profile that run wrote (platforms/sim.py compile_model()). The
model's code is the same for any firmware and almost every branch in it follows the design's
state, so a boot and a few requests already train it for long runs (the speed it gains:
bench/README.md, "The simulator's own speed"). A profile changes no simulated cycle, only how
fast the host computes them.

LITEDAV_SIM_PGO=0 builds the model without a profile (one compile, no training run).
"""

import hashlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import time

from litedav.sim.config import DEFAULT_PHY

# What the training run does after the boot: small keep-alive GETs, a bulk PUT and GET through the
# NIC's DMA and checksum paths, and a WebDAV listing.
TRAINING_GETS = 20
TRAINING_BULK_BYTES = 64 * 1024
BOOT_TRAINING_S = 25    # wall seconds of boot at most; then the requests, if it is serving
REQUEST_TIMEOUT_S = 120
EXIT_TIMEOUT_S = 60
PROFILE_DIR = "pgo-profile"            # in the build's gateware folder
TRAINING_RECORD = "training.json"      # in PROFILE_DIR: the training run's firmware and boot line
BOOT_LINE = "boot: "                   # the firmware's console line with its boot cycles


class TrainingError(Exception):
    """The training run did not produce a profile (the build goes on without one)."""


def enabled():
    """Whether models are built profile-guided (LITEDAV_SIM_PGO=0: no)."""
    return os.environ.get("LITEDAV_SIM_PGO", "1") != "0"


def build_phy(gateware_dir):
    """The PHY of the build's own sim_config.js (a board model below 125 MHz carries MII)."""
    with open(os.path.join(gateware_dir, "sim_config.js")) as f:
        for module in json.load(f):
            if module.get("module") == "slirp_ethernet":
                return module.get("args", {}).get("phy", DEFAULT_PHY)
    return DEFAULT_PHY


def _requests(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        steps = [("GET", "/static/task.ics", None, {})] * TRAINING_GETS + [
            ("PUT", "/bulk", bytes(range(256)) * (TRAINING_BULK_BYTES // 256), {}),
            ("GET", "/bulk", None, {}),
            ("PROPFIND", "/dav/", b"", {"Depth": "1"}),
        ]
        for method, path, body, headers in steps:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status >= 500:
                raise TrainingError(f"{method} {path} answered {response.status}")
    except (OSError, http.client.HTTPException) as e:
        raise TrainingError(f"training request failed: {e}") from e
    finally:
        conn.close()


def train(build_dir, profile_dir):
    """Boot build_dir's instrumented model (fresh flash, its own run directory, removed after),
    send it the training requests and end it with SIGUSR2, so that it writes its profile into
    profile_dir. Returns the wall seconds taken; raises TrainingError when no profile came out."""
    from litedav.sim.run import SimOptions, Simulator, free_port
    gateware = os.path.join(build_dir, "gateware")
    shutil.rmtree(profile_dir, ignore_errors=True)
    t0 = time.time()
    sim = Simulator(build_dir, SimOptions(port=free_port(), echo=False, fresh_flash=True,
                                          phy=build_phy(gateware), progress_s=0))
    try:
        sim.start()
        try:
            booted = sim.wait_ready(timeout=BOOT_TRAINING_S)
        except TimeoutError:
            booted = False   # a long boot (a board model's): its first BOOT_TRAINING_S are the profile
        except RuntimeError as e:
            raise TrainingError(f"the training model did not boot: {e}") from e
        if booted:
            _requests(sim.port)
        sim.proc.send_signal(signal.SIGUSR2)
        try:
            sim.proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise TrainingError(f"the training model did not exit within {EXIT_TIMEOUT_S} s of SIGUSR2") from e
        if sim.proc.returncode != 0:
            raise TrainingError(f"the training model exited with status {sim.proc.returncode}")
    finally:
        sim.stop()
        shutil.rmtree(sim.run_dir, ignore_errors=True)
    profiles = [n for n in os.listdir(profile_dir) if n.endswith(".gcda")] if os.path.isdir(profile_dir) else []
    if not profiles:
        raise TrainingError(f"the training model wrote no profile into {profile_dir}")
    seconds = time.time() - t0
    record = {"firmware_sha256": firmware_digest(build_dir), "seconds": round(seconds, 1),
              "boot_line": boot_line(sim.console)}
    with open(os.path.join(profile_dir, TRAINING_RECORD), "w") as f:
        json.dump(record, f, indent=1)
    return seconds


def boot_line(console):
    """The firmware's boot line among a simulator's console lines, None before it came."""
    return next((line for line in console if line.startswith(BOOT_LINE)), None)


def firmware_digest(build_dir):
    """sha256 of the build's firmware image (None without one)."""
    try:
        with open(os.path.join(build_dir, "firmware", "litedav.bin"), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except FileNotFoundError:
        return None


def training_record(build_dir):
    """What the training run of build_dir's model saw ({"firmware_sha256", "seconds",
    "boot_line"}), None when the model was not trained."""
    try:
        with open(os.path.join(build_dir, "gateware", PROFILE_DIR, TRAINING_RECORD)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
