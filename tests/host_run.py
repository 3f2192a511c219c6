"""Running the host build's C test programs from pytest (test_host_*.py)."""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the last line every C test program prints (tests/host/check.h)
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")


def run(cmd, timeout):
    """Run cmd from the top of the tree; its output goes to pytest's captured stdout."""
    proc = subprocess.run(cmd, cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", timeout=timeout)
    # shown by pytest for failing tests, and with -s for passing ones
    sys.stdout.write("$ " + " ".join(cmd) + "\n" + proc.stdout)
    return proc
