"""The spi_nor_flash sim module (sim/modules/spi_nor_flash) on the host, without LiteX or
Verilator: tests/host/spi_nor_flash_driver.c compiles the module's source in (ASan/UBSan),
makes its sessions through the module's registered functions as LiteX's sim.c does, and
bit-bangs SPI mode 0 on the pads between the sys_clk edges the module samples on. The SPI
commands are spelt out here, from the JEDEC / Micron command set, and every result is checked
on the image file the module maps, not only through the module's own READ.

Covered: RDID; 3-byte commands reaching only the lowest 16 MiB of a 32 MiB chip; the 4-byte
commands (READ4 0x13, PP4 0x12, SE4 0x21, BE4 0xDC) reaching above it; programs and erases
ignored without WEL; NOR programs only clearing bits; the `pads` argument (two chips on two
pad groups, a mismatched or incomplete group refused); power cuts (the driver is SIGKILLed as
the simulator is): a program or erase still busy is torn, an idle chip keeps everything; and
the argument checks. The simulator tests (test_sim_spiflash.py, test_sim_powerfail.py) run the
same module under LiteSPI's gateware."""
import json
import os
import re
import shutil
import signal
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(TOP, "sim", "modules", "spi_nor_flash")
DRIVER = os.path.join(TOP, "tests", "host", "spi_nor_flash_driver.c")

MIB = 1 << 20
STORE_SIZE = 32 * MIB          # the Pmod SF3's MT25QL256
STORE_JEDEC_ID = 0x20BA19
SLOW = 1_000_000               # busy cycles long enough for a cut to fall inside them
POLL = 65536                   # the module's look for the power-cut file
CUT_DELAY = 1000

CUT = re.compile(r"^\[spi_nor_flash (\w+)\] power cut at cycle (\d+)(?: \((program|4 KiB erase|64 KiB erase) "
                 r"at 0x([0-9a-f]+) torn: (\d+) bytes differ from the completed operation\))?$", re.M)
ARMED = re.compile(r"^\[spi_nor_flash (\w+)\] power cut armed for cycle (\d+)$", re.M)


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if not shutil.which("gcc"):
        pytest.skip("gcc not found")
    litex = pytest.importorskip("litex")
    sim_core = os.path.join(os.path.dirname(litex.__file__), "build", "sim", "core")
    exe = str(tmp_path_factory.mktemp("spi_nor_flash") / "spi_nor_flash_driver")
    proc = subprocess.run(["gcc", "-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                           "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                           "-I", sim_core, "-I", MODULE, DRIVER, "-ljson-c", "-o", exe],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "build failed:\n" + proc.stderr
    return exe


# SPI NOR commands, as driver OPs -------------------------------------------------------------

def xfer(out, nread=0):
    return ["xfer", out.hex(), str(nread)]


def cmd3(opcode, addr, data=b""):
    return bytes([opcode]) + addr.to_bytes(3, "big") + data


def cmd4(opcode, addr, data=b""):
    return bytes([opcode]) + addr.to_bytes(4, "big") + data


WREN = xfer(b"\x06")
WRDI = xfer(b"\x04")
RDID = xfer(b"\x9f", 3)
RDSR = xfer(b"\x05", 1)


def read3(addr, n):
    return xfer(cmd3(0x03, addr), n)


def read4(addr, n):
    return xfer(cmd4(0x13, addr), n)


def pp3(addr, data):
    return WREN + xfer(cmd3(0x02, addr, data)) + ["wait"]


def pp4(addr, data):
    return WREN + xfer(cmd4(0x12, addr, data)) + ["wait"]


def erase3(opcode, addr):
    return WREN + xfer(cmd3(opcode, addr)) + ["wait"]


def erase4(opcode, addr):
    return WREN + xfer(cmd4(opcode, addr)) + ["wait"]


# running the driver ---------------------------------------------------------------------------

def chip_args(tmp_path, name="store", **more):
    """A store flash's arguments (the MT25QL256 on `storeflash`), image in tmp_path/NAME.bin."""
    args = {"path": str(tmp_path / f"{name}.bin"), "size": STORE_SIZE, "jedec_id": STORE_JEDEC_ID,
            "pads": "storeflash"}
    args.update(more)
    return args


def run(driver, chips, ops, expect=0):
    """chips: [(group, args dict, omitted pad or None)]; returns (stdout, stderr)."""
    cmd = [driver]
    for group, args, omit in chips:
        cmd += ["--chip", group, json.dumps(args)] + (["--omit", omit] if omit else [])
    proc = subprocess.run(cmd + [str(op) for op in ops], capture_output=True, text=True, timeout=60)
    assert proc.returncode == expect, f"exit {proc.returncode}, expected {expect}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout, proc.stderr


def reads(stdout):
    return [bytes.fromhex(h) for h in re.findall(r"^read ([0-9a-f]+)$", stdout, re.M)]


def image(args):
    with open(args["path"], "rb") as f:
        return f.read()


def prefill(args, size, parts):
    """An existing image (the module keeps it): erased, with parts {offset: bytes}."""
    data = bytearray(b"\xff" * size)
    for offset, part in parts.items():
        data[offset:offset + len(part)] = part
    with open(args["path"], "wb") as f:
        f.write(data)
    return bytes(data)


def pattern(n, seed):
    """Bytes with both 0 and 1 bits in most of them, different for each seed."""
    return bytes(((i * 37 + seed * 101) ^ (i >> 3)) & 0xFF for i in range(n))


def store(driver, tmp_path, ops, **more):
    return run(driver, [("storeflash", chip_args(tmp_path, **more), None)], ops)


def store_cut(driver, args, ops):
    """Run ops on a store flash until its power cut SIGKILLs the driver (a forked child)."""
    return run(driver, [("storeflash", args, None)], ops, expect=-signal.SIGKILL)


def check_cut_line(out):
    armed, cut = ARMED.search(out), CUT.search(out)
    assert armed and cut, out
    assert armed.group(1) == cut.group(1) == "storeflash", out
    # armed at a look for the file (every 65,536 cycles), CUT_DELAY cycles before the cut
    assert int(cut.group(2)) == int(armed.group(2)) and (int(cut.group(2)) - CUT_DELAY) % POLL == 0, out
    return cut


def store_run_refused(driver, tmp_path, more):
    args = chip_args(tmp_path)
    args.update(more)
    out, err = run(driver, [("storeflash", args, None)], RDID, expect=3)
    assert not os.path.exists(tmp_path / "store.bin"), "refused, yet the image was made"
    return out, err


# tests --------------------------------------------------------------------------------------

def test_rdid_answers_the_given_jedec_id(driver, tmp_path):
    out, _ = store(driver, tmp_path, RDID + xfer(b"\x9f", 5))
    assert reads(out) == [bytes.fromhex("20ba19"), bytes.fromhex("20ba19ffff")], out
    boot = {"path": str(tmp_path / "boot.bin")}  # the defaults: a 2 MiB GD25Q16 on spiflash
    out, _ = run(driver, [("spiflash", boot, None)], RDID)
    assert reads(out) == [bytes.fromhex("c84015")], out
    assert os.path.getsize(boot["path"]) == 2 * MIB


def test_3_byte_commands_reach_the_lowest_16_mib_only(driver, tmp_path):
    args = chip_args(tmp_path)
    low, high, top = b"low-16-MiB", b"HIGH-16-MiB", pattern(16, 1)
    ops = (pp4(16 * MIB + 0x10, high)              # the upper half, through a 4-byte program
           + pp3(0x10, low)                        # a 3-byte program at the same 24 bits
           + pp4(16 * MIB, b"upper") + pp3(0, b"lower")
           + pp3(0xFFFFF0, top)                    # the last bytes a 24-bit address reaches
           + read3(0x10, len(low)) + read4(16 * MIB + 0x10, len(high))
           + read3(0xFFFFF8, 13))                  # a 3-byte READ wraps at 16 MiB, not 32
    out, _ = run(driver, [("storeflash", args, None)], ops)
    assert reads(out) == [low, high, top[8:] + b"lower"], out
    img = image(args)
    assert img[0x10:0x10 + len(low)] == low and img[16 * MIB + 0x10:16 * MIB + 0x10 + len(high)] == high
    assert img[0xFFFFF0:16 * MIB] == top and img[STORE_SIZE - 16:] == b"\xff" * 16

    # 3-byte erases: the sector and the block at the top of the lowest 16 MiB, never the upper copy
    args = chip_args(tmp_path, name="erase")
    parts = {0xFEF000: pattern(64, 2), 0xFFF000: pattern(64, 3),
             16 * MIB + 0xFEF000: pattern(64, 4), 16 * MIB + 0xFFF000: pattern(64, 5)}
    before = prefill(args, STORE_SIZE, parts)
    run(driver, [("storeflash", args, None)], erase3(0x20, 0xFFF123))
    img = image(args)
    expected = bytearray(before)
    expected[0xFFF000:0x1000000] = b"\xff" * 4096
    assert img == bytes(expected), "SE 0x20 erased something else than 0xFFF000..0xFFFFFF"
    run(driver, [("storeflash", args, None)], erase3(0xD8, 0xFE0000))
    expected[0xFE0000:0xFF0000] = b"\xff" * 65536
    assert image(args) == bytes(expected), "BE 0xD8 erased something else than 0xFE0000..0xFEFFFF"


def test_4_byte_commands_reach_above_16_mib(driver, tmp_path):
    args = chip_args(tmp_path)
    page, data = 0x1ABCD00, pattern(256, 6)
    wrapped = pattern(16, 7)
    ops = (pp4(page, data)
           + pp4(0x1ABE0F8, wrapped)                 # wraps inside its page: 8 bytes at 0x1ABE000
           + pp4(0x1ABD000, b"next sector") + pp4(0x1FE0000, b"block below") + pp4(0x1FF8000, b"in block")
           + read4(page, 256) + read4(page + 2 * STORE_SIZE, 4)  # addresses wrap at the chip's end
           + read3(page & 0xFFFFFF, 4))              # the 24-bit mirror below 16 MiB is untouched
    out, _ = run(driver, [("storeflash", args, None)], ops)
    got = reads(out)
    assert got == [data, data[:4], b"\xff" * 4], out
    img = image(args)
    assert img[page:page + 256] == data and img[page & 0xFFFFFF:(page & 0xFFFFFF) + 256] == b"\xff" * 256
    assert img[0x1ABE0F8:0x1ABE100] == wrapped[:8] and img[0x1ABE000:0x1ABE008] == wrapped[8:]
    assert img[0x1ABE100:0x1ABE108] == b"\xff" * 8

    # SE4 with only 3 address bytes (a 3-byte driver's form) and BE4 with 5 are not commands
    ops = (WREN + xfer(cmd3(0x21, 0x1ABC00)) + RDSR
           + WREN + xfer(cmd4(0xDC, 0x1FF0000) + b"\x00") + RDSR)
    out, _ = run(driver, [("storeflash", args, None)], ops)
    assert reads(out) == [b"\x02", b"\x02"], "WEL set, WIP clear: nothing was erased"
    assert image(args) == img

    ops = (erase4(0x21, 0x1ABCDEF)      # the 4 KiB sector 0x1ABC000, inside the 4-byte space only
           + erase4(0xDC, 0x1FF1234))   # the 64 KiB block 0x1FF0000
    run(driver, [("storeflash", args, None)], ops)
    expected = bytearray(img)
    expected[0x1ABC000:0x1ABD000] = b"\xff" * 4096
    expected[0x1FF0000:0x2000000] = b"\xff" * 65536
    after = image(args)
    assert after == bytes(expected)
    assert after[0x1ABD000:0x1ABD00B] == b"next sector" and after[0x1FE0000:0x1FE000B] == b"block below"


def test_program_and_erase_need_wel(driver, tmp_path):
    args = chip_args(tmp_path)
    before = prefill(args, STORE_SIZE, {0x1000000: pattern(256, 8)})
    ops = (xfer(cmd4(0x12, 0x1000100, b"\x00" * 16)) + RDSR          # no WREN
           + WREN + WRDI + xfer(cmd4(0x12, 0x1000100, b"\x00" * 16)) + RDSR
           + xfer(cmd4(0x21, 0x1000000)) + xfer(cmd3(0x02, 0x100, b"\x00")) + RDSR
           + WREN + RDSR + xfer(cmd4(0x12, 0x1000200, b"\x00" * 4)) + RDSR)  # the control: taken
    out, _ = run(driver, [("storeflash", args, None)], ops)
    assert reads(out) == [b"\x00", b"\x00", b"\x00", b"\x02", b"\x01"], out
    expected = bytearray(before)
    expected[0x1000200:0x1000204] = b"\x00" * 4
    assert image(args) == bytes(expected)


def test_a_program_only_clears_bits(driver, tmp_path):
    args = chip_args(tmp_path)
    addr = 0x1800000
    ops = (pp4(addr, bytes([0x0F, 0x3C, 0xFF, 0xA5]))
           + pp4(addr, bytes([0xF0, 0xFF, 0x3C, 0xFF]))   # 1s over 0s stay 0: old & new
           + read4(addr, 4)
           + erase4(0x21, addr) + read4(addr, 4)
           + pp4(addr, bytes([0x5A])) + read4(addr, 2))
    out, err = run(driver, [("storeflash", args, None)], ops)
    assert reads(out) == [bytes([0x00, 0x3C, 0x3C, 0xA5]), b"\xff" * 4, b"\x5a\xff"], out
    assert "program of 0xf0 over 0x0f at 0x1800000: 0 bits stay 0" in err, err
    assert image(args)[addr:addr + 2] == b"\x5a\xff"


def test_pads_binds_the_named_group_of_two_chips(driver, tmp_path):
    boot = {"path": str(tmp_path / "boot.bin"), "pads": "spiflash"}
    storeflash = chip_args(tmp_path)
    ops = (RDID + ["use", "storeflash"] + RDID + pp4(0x1000000, b"store")
           + ["use", "spiflash"] + read3(0, 5))
    out, _ = run(driver, [("spiflash", boot, None), ("storeflash", storeflash, None)], ops)
    assert reads(out) == [bytes.fromhex("c84015"), bytes.fromhex("20ba19"), b"\xff" * 5], out
    assert "[spi_nor_flash spiflash] " + boot["path"] + ": 2048 KiB SPI NOR, JEDEC ID c84015 (new, erased)" in out
    assert "[spi_nor_flash storeflash] " + storeflash["path"] + ": 32768 KiB SPI NOR, JEDEC ID 20ba19" in out
    assert image(boot) == b"\xff" * 2 * MIB
    assert image(storeflash)[0x1000000:0x1000005] == b"store"


@pytest.mark.parametrize("group, args, omit, message", [
    ("spiflash", {"pads": "storeflash"}, None, 'given the "spiflash" pads, but its "pads" argument says "storeflash"'),
    ("storeflash", {}, None, 'given the "storeflash" pads, but its "pads" argument says "spiflash"'),
    ("storeflash", {"pads": "storeflash"}, "miso", "the storeflash pads are incomplete (need clk, cs_n, mosi, miso)"),
    ("spiflash", {}, "cs_n", "the spiflash pads are incomplete"),
])
def test_a_mismatched_or_incomplete_pad_group_is_refused(driver, tmp_path, group, args, omit, message):
    args = {"path": str(tmp_path / "chip.bin"), **args}
    out, err = run(driver, [(group, args, omit)], RDID, expect=3)
    assert f"refused: add_pads {group}" in out, out
    assert message in err, err


def test_power_cut_in_a_program_tears_it(driver, tmp_path):
    page = 0x1234500
    old = pattern(256, 9)            # some bits already 0: they must stay 0
    data = pattern(256, 10)
    completed = bytes(o & d for o, d in zip(old, data))
    torn_images = {}
    for seed in (1, 2):
        args = chip_args(tmp_path, name=f"seed{seed}", program_cycles=SLOW, power_cut_file=str(tmp_path / "cut"),
                         seed=seed)
        before = prefill(args, STORE_SIZE, {page: old, page + 256: b"neighbour"})
        out, _ = store_cut(driver, args, WREN + xfer(cmd4(0x12, page, data)) + ["arm", CUT_DELAY, "idle", 3 * POLL])
        cut = check_cut_line(out)
        assert cut.group(3) == "program" and int(cut.group(4), 16) == page, out
        img = image(args)
        assert img[:page] == before[:page] and img[page + 256:] == before[page + 256:], "outside the page"
        torn = img[page:page + 256]
        for t, o, c in zip(torn, old, completed):
            assert t & ~o & 0xFF == 0, "a torn program set a bit that was 0"
            assert c & ~t & 0xFF == 0, "a torn program cleared a bit it was not clearing"
        differ = sum(t != c for t, c in zip(torn, completed))
        assert differ == int(cut.group(5)), out
        changing = sum(o != c for o, c in zip(old, completed))
        # a pseudo-random half of the bits: most changing bytes torn, and some bits cleared
        assert changing // 2 < differ <= changing, (differ, changing)
        assert sum(t != o for t, o in zip(torn, old)) > changing // 4
        torn_images[seed] = torn
    assert torn_images[1] != torn_images[2], "the seed does not change the tear"


@pytest.mark.parametrize("opcode, unit, kind", [(0x21, 4096, "4 KiB erase"), (0xDC, 65536, "64 KiB erase")])
def test_power_cut_in_an_erase_tears_it(driver, tmp_path, opcode, unit, kind):
    base = 0x1FE0000
    old = pattern(unit, 11)
    cycles = {"sector_erase_cycles": SLOW} if unit == 4096 else {"block_erase_cycles": SLOW}
    args = chip_args(tmp_path, power_cut_file=str(tmp_path / "cut"), **cycles)
    before = prefill(args, STORE_SIZE, {base - 16: pattern(unit + 32, 12), base: old})
    out, _ = store_cut(driver, args, WREN + xfer(cmd4(opcode, base + 0x123)) + ["arm", CUT_DELAY, "idle", 3 * POLL])
    cut = check_cut_line(out)
    assert cut.group(3) == kind and int(cut.group(4), 16) == base, out
    img = image(args)
    assert img[:base] == before[:base] and img[base + unit:] == before[base + unit:], "outside the unit"
    torn = img[base:base + unit]
    for t, o in zip(torn, old):
        assert o & ~t & 0xFF == 0, "a torn erase cleared a bit"
    differ = sum(t != 0xFF for t in torn)
    assert differ == int(cut.group(5)), out
    changing = sum(o != 0xFF for o in old)
    assert changing // 2 < differ <= changing, (differ, changing)
    assert sum(t != o for t, o in zip(torn, old)) > changing // 4, "the erase set no bits"


def test_power_cut_when_idle_changes_nothing(driver, tmp_path):
    args = chip_args(tmp_path, program_cycles=2000, power_cut_file=str(tmp_path / "cut"))
    page, data = 0x1234500, pattern(256, 13)
    before = prefill(args, STORE_SIZE, {page: pattern(256, 14)})
    out, _ = store_cut(driver, args, pp4(page, data) + ["arm", CUT_DELAY, "idle", 3 * POLL])
    cut = check_cut_line(out)
    assert cut.group(3) is None, "an idle chip tore something: " + out
    expected = bytearray(before)
    expected[page:page + 256] = bytes(o & d for o, d in zip(before[page:page + 256], data))
    assert image(args) == bytes(expected)
    assert not os.path.exists(args["power_cut_file"]), "the power-cut file was not removed"


@pytest.mark.parametrize("more, message", [
    ({"size": 64 * MIB + 65536}, "size 67174400: must be a multiple of 64 KiB, at most 64 MiB"),
    ({"size": 128 * MIB}, "size 134217728: must be a multiple of 64 KiB, at most 64 MiB"),
    ({"size": 32 * MIB + 4096}, "size 33558528: must be a multiple of 64 KiB, at most 64 MiB"),
    ({"size": 0}, "size 0: must be a multiple of 64 KiB"),
    ({"size": "32MiB"}, '"size" must be an integer'),
    ({"jedec_id": 0x1000000}, '"jedec_id" 16777216: must be 0 .. 16777215'),
    ({"power_cutfile": "x"}, 'unknown argument "power_cutfile"'),
    ({"pads": 3}, '"pads" must be a string'),
    ({"path": ""}, 'needs a "path" argument'),
])
def test_bad_arguments_are_refused(driver, tmp_path, more, message):
    out, err = store_run_refused(driver, tmp_path, more)
    assert "refused: new" in out, out
    assert message in err, err


def test_the_largest_chip_is_64_mib(driver, tmp_path):
    args = chip_args(tmp_path, size=64 * MIB)
    out, _ = run(driver, [("storeflash", args, None)], pp4(64 * MIB - 4, b"end!") + read4(64 * MIB - 4, 8))
    assert reads(out) == [b"end!" + b"\xff" * 4], out  # wraps to 0 at the chip's end
    assert os.path.getsize(args["path"]) == 64 * MIB
