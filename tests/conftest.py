"""Shared fixtures: one simulated appliance for the whole test session."""
import os

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def sim_build():
    """The LiteEth SoC's build (build/sim; LITEDAV_SIM_BUILD: another folder, e.g. one a long
    run keeps to itself while build/sim is rebuilt; LITEDAV_SIM_SOC_ARGS: more litedav-soc
    arguments for it, e.g. "--cpu-variant linux+no-dsp", with a folder of their own)."""
    from litedav.sim.run import build
    soc_args = os.environ.get("LITEDAV_SIM_SOC_ARGS", "").split()
    if soc_args and not os.environ.get("LITEDAV_SIM_BUILD"):
        raise RuntimeError("LITEDAV_SIM_SOC_ARGS needs its own LITEDAV_SIM_BUILD folder")
    return build(os.environ.get("LITEDAV_SIM_BUILD") or os.path.join(TOP, "build", "sim"), soc_args=soc_args)


@pytest.fixture(scope="session")
def spiflash_build():
    """The SoC with the boards' flash path (litedav-soc --spi-flash: LiteSPI on the boot chip and
    on the store flash, built in build/sim-spiflash; LITEDAV_SPIFLASH_BUILD: another folder)."""
    from litedav.sim.run import build, default_build_dir
    folder = os.environ.get("LITEDAV_SPIFLASH_BUILD") or default_build_dir(spi_flash=True)
    return build(folder, soc_args=["--spi-flash"])


@pytest.fixture(scope="session")
def appliance(sim_build):
    """The simulated SoC, booted, with its HTTP port forwarded to 127.0.0.1."""
    from sim_boot import booted
    yield from booted(sim_build, "simulator")
