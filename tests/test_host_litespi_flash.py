"""Host test of the LiteSPI flash driver (firmware/ports/litex/flash_litespi.c), under
ASan/UBSan: the driver file, unchanged, against stand-in generated headers
(tests/host/litespi_generated: the Colorlight i5's layout) whose master CSR accessors drive
a byte-level SPI NOR model (tests/host/test_litespi_flash.c). Each scenario runs in its own
process (port_flash() probes once): a chip (reads, programs, PAGE/NOR/RANGE errors, nothing
written outside the store region, erase + sync), no chip (MISO low or high), a chip too small
for the region, a chip stuck busy, a write-protected chip. The simulator test
(test_sim_spiflash.py) runs the same driver on LiteSPI's gateware."""
import os
import shutil

import pytest

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(TOP, "build", "host-litespi")
BINARY = os.path.join(OUT, "test_litespi_flash")

# scenario -> the driver's console line it must print
SCENARIOS = {
    "chip": "flash: SPI NOR gd25q16, JEDEC ID c84015, 2048 KiB; store at 0x180000, 512 KiB, 4 KiB sectors",
    "absent": "flash: no SPI flash answered (JEDEC ID 000000): store in RAM",
    "floating": "flash: no SPI flash answered (JEDEC ID ffffff): store in RAM",
    "small": "flash: the store region (0x180000, 512 KiB) does not fit the 1024 KiB chip (JEDEC ID c84014): "
             "store in RAM",
    "stuck": "flash: page program: still busy after 10 ms (status 0x01)",
    "protected": "flash: write enable not taken (status 0x00)",
}


@pytest.fixture(scope="module")
def binary():
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    os.makedirs(OUT, exist_ok=True)
    proc = run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                "-Itests/host/litespi_generated", "-Itests/host", "-Ifirmware/app", "-Ifirmware/ports/litex",
                "tests/host/test_litespi_flash.c", "firmware/ports/litex/flash_litespi.c", "-o", BINARY],
               timeout=120)
    assert proc.returncode == 0, "build failed:\n" + proc.stdout
    return BINARY


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_litespi_flash_driver(binary, scenario):
    proc = run([binary, scenario], timeout=60)
    lines = proc.stdout.rstrip("\n").splitlines()
    assert proc.returncode == 0, proc.stdout
    m = SUMMARY.match(lines[-1] if lines else "")
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= 3, proc.stdout
    assert SCENARIOS[scenario] in lines, proc.stdout
