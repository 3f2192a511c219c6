"""One installable package, `litedav`: the repository's top-level directories
become its subpackages (litedav.soc, litedav.sim, ...) so nothing generic like
`sim` or `platforms` lands in the global module namespace."""

from setuptools import setup

SUBPACKAGES = ["soc", "sim", "gateware", "platforms", "bench"]

setup(
    name="litedav",
    version="0.1.0",
    description="CalDAV server appliance: LiteX SoC with an offload NIC, lwIP firmware, Verilator simulation",
    license="BSD-2-Clause",
    python_requires=">=3.9",
    packages=["litedav"] + [f"litedav.{name}" for name in SUBPACKAGES],
    package_dir={"litedav": "litedav", **{f"litedav.{name}": name for name in SUBPACKAGES}},
    install_requires=["migen", "litex", "liteeth"],
    entry_points={
        "console_scripts": [
            "litedav-soc=litedav.soc.build:main",
            "litedav-sim=litedav.sim.run:main",
        ],
    },
)
