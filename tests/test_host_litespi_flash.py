"""Host test of the LiteSPI flash driver (firmware/ports/litex/flash_litespi.c), under
ASan/UBSan: the driver file, unchanged, against stand-in generated headers
(tests/host/litespi_generated: the Colorlight i5's layout) whose master CSRs drive byte-level
SPI NOR models (tests/host/test_litespi_flash.c). Built three times: for the SoC without the
store flash (the boot chip's store region only); with it as the boards' SoC has it
(-DLITEDAV_TEST_STOREFLASH: the second LiteSPI core `storeflash`, master only, no window:
every read of it a READ through the master, platforms/store_flash.py); and with the store
flash's window as well (-DLITEDAV_TEST_STOREFLASH_WINDOW: the driver's window reads, which it
keeps for an SoC that maps STOREFLASH_BASE). Each scenario runs in its own process
(port_flash() probes once) and must print exactly its console lines (every line starting with
"flash:", in order).

Every build runs the boot chip's scenarios (in the store flash builds with no chip on the store
flash: the Pmod's MISO pulled up, JEDEC ID ffffff): a chip (reads through its window, programs,
PAGE/NOR/RANGE errors, nothing written outside the store region, erase + sync), no chip (MISO
low or high), a chip too small for the region, a chip stuck busy, a write-protected chip. The
store flash builds add the store flash's: its 32 MiB chip holds the store, with 4-byte reads,
programs and erases above 16 MiB landing at their chip address and the boot chip untouched;
ragged reads at odd addresses across a page and 16 MiB, byte for byte, and a 4 KiB read being
one READ command; a 16 MiB chip (3-byte commands); a 64 MiB chip capped at the module's 32 MiB;
no chip (ID 000000: the boot chip's region); a master that never answers (the boot chip's
region); a chip stuck busy after a program; a write-protected one; a program the read-back
catches; one busy from boot (store in RAM); and without the window, a master that stops in the
middle of a read (FLASH_ERR_IO, bounded). The simulator test (test_sim_spiflash.py) runs the
same driver on LiteSPI's gateware."""
import os
import shutil

import pytest

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(TOP, "build", "host-litespi")

BOOT_CHIP = "flash: SPI NOR gd25q16, JEDEC ID c84015, 2048 KiB; store at 0x180000, 512 KiB, 4 KiB sectors"

# scenario -> the driver's console lines, all of them, for the SoC without the store flash
SCENARIOS = {
    "chip": [BOOT_CHIP],
    "absent": ["flash: no SPI flash answered (JEDEC ID 000000): store in RAM"],
    "floating": ["flash: no SPI flash answered (JEDEC ID ffffff): store in RAM"],
    "small": ["flash: the store region (0x180000, 512 KiB) does not fit the 1024 KiB chip (JEDEC ID c84014): "
              "store in RAM"],
    "stuck": [BOOT_CHIP, "flash: page program: still busy after 10 ms (status 0x01)"],
    # a program, then an erase
    "protected": [BOOT_CHIP, "flash: write enable not taken (status 0x00)",
                  "flash: write enable not taken (status 0x00)"],
}

NO_STORE_FLASH = "flash: no store flash answered (JEDEC ID ffffff): store on the boot flash"
STORE_CHIP = ("flash: store flash (Pmod) SPI NOR mt25ql256, JEDEC ID 20ba19, 32768 KiB; "
              "store at 0x000000, 32768 KiB, 4 KiB sectors")

# the SoC with the store flash: the same scenarios with no chip on it, and the store flash's
STORE_FLASH_SCENARIOS = {
    **{name: [NO_STORE_FLASH] + lines for name, lines in SCENARIOS.items()},
    "store_chip": [STORE_CHIP],
    "store_read": [STORE_CHIP],
    "store_16mib": ["flash: store flash (Pmod) SPI NOR mt25ql256, JEDEC ID 20ba18, 16384 KiB; "
                    "store at 0x000000, 16384 KiB, 4 KiB sectors"],
    "store_large": ["flash: store flash (Pmod) SPI NOR mt25ql256, JEDEC ID 20ba20, 65536 KiB; "
                    "store at 0x000000, 32768 KiB, 4 KiB sectors"],
    "store_absent": ["flash: no store flash answered (JEDEC ID 000000): store on the boot flash", BOOT_CHIP],
    "store_dead": ["flash: the store flash's SPI master did not answer: store on the boot flash", BOOT_CHIP],
    "store_stuck": [STORE_CHIP, "flash: page program: still busy after 10 ms (status 0x01)",
                    "flash: write enable not taken (status 0x01)"],
    "store_protected": [STORE_CHIP, "flash: write enable not taken (status 0x00)",
                        "flash: write enable not taken (status 0x00)"],
    "store_readback": [STORE_CHIP, "flash: program at 0x1000105 read back 0x10, expected 0x00"],
    "store_busy": ["flash: erase: still busy after 2000 ms (status 0x01)",
                   "flash: the store flash stays busy: store in RAM"],
}

# the store flash's window reads: the same, but a read has no master to stall
STORE_WINDOW_SCENARIOS = dict(STORE_FLASH_SCENARIOS)

# the boards' SoC: no window, reads through the master, which may stop in the middle of one
STORE_FLASH_SCENARIOS["store_stall"] = [STORE_CHIP]

BUILDS = {
    "boot_only": ([], SCENARIOS),
    "store_flash": (["-DLITEDAV_TEST_STOREFLASH"], STORE_FLASH_SCENARIOS),
    "store_flash_window": (["-DLITEDAV_TEST_STOREFLASH", "-DLITEDAV_TEST_STOREFLASH_WINDOW"],
                           STORE_WINDOW_SCENARIOS),
}


@pytest.fixture(scope="module")
def binaries():
    if shutil.which("gcc") is None:
        pytest.skip("no host gcc")
    os.makedirs(OUT, exist_ok=True)
    built = {}
    for name, (defines, _) in BUILDS.items():
        binary = os.path.join(OUT, "test_litespi_flash_" + name)
        proc = run(["gcc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all", *defines,
                    "-Itests/host/litespi_generated", "-Itests/host", "-Ifirmware/app", "-Ifirmware/ports/litex",
                    "tests/host/test_litespi_flash.c", "firmware/ports/litex/flash_litespi.c", "-o", binary],
                   timeout=120)
        assert proc.returncode == 0, f"build {name} failed:\n" + proc.stdout
        built[name] = binary
    return built


@pytest.mark.parametrize("build,scenario", [(build, scenario) for build, (_, scenarios) in BUILDS.items()
                                            for scenario in sorted(scenarios)])
def test_litespi_flash_driver(binaries, build, scenario):
    proc = run([binaries[build], scenario], timeout=60)
    lines = proc.stdout.rstrip("\n").splitlines()
    assert proc.returncode == 0, proc.stdout
    m = SUMMARY.match(lines[-1] if lines else "")
    assert m and int(m.group(2)) == 0 and int(m.group(1)) >= 3, proc.stdout
    assert [text for text in lines if text.startswith("flash:")] == BUILDS[build][1][scenario], proc.stdout
