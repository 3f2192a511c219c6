"""Shared fixtures: one simulated appliance for the whole test session."""
import os
import socket
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TOP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def sim_build():
    from sim.run import build
    return build(os.path.join(TOP, "build", "sim"))


@pytest.fixture(scope="session")
def appliance(sim_build):
    """The simulated SoC, booted, with its HTTP port forwarded to 127.0.0.1."""
    from sim.run import Simulator
    sim = Simulator(sim_build, port=free_port(), echo=False)
    sim.start()
    try:
        sim.wait_ready(timeout=300)
        yield sim
    finally:
        sim.stop()
        print("\n--- simulator console (last lines) ---\n" + "\n".join(sim.console[-15:]))
