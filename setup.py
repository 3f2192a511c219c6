from setuptools import setup, find_packages

setup(
    name="litedav",
    version="0.1.0",
    description="CalDAV server appliance: LiteX SoC with an offload NIC, lwIP firmware, Verilator simulation",
    license="BSD-2-Clause",
    python_requires=">=3.9",
    packages=find_packages(include=["litedav", "litedav.*", "gateware", "gateware.*", "soc", "soc.*", "sim", "sim.*", "bench", "bench.*"]),
    install_requires=["migen", "litex", "liteeth"],
    entry_points={
        "console_scripts": [
            "litedav-soc=soc.build:main",
            "litedav-sim=sim.run:main",
        ],
    },
)
