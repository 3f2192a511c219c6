"""Print an LM3S image's flash and SRAM use against the linker script's
limits, and fail when either is exceeded (the link's own ASSERTs catch the
same; this makes the figures visible on every build).

When the linker script reserves a STORE region (the real-chip build keeps the
store in the internal flash), the chip's flash is FLASH + STORE: the report
counts the store against it and shows the image against the room it has
below the store.

usage: size_report.py VARIANT ELF LINKER_SCRIPT SIZE_TOOL
"""
import re
import subprocess
import sys

REGION = re.compile(r"^\s*(\w+)\s*\([rwx]+\)\s*:\s*ORIGIN\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*,"
                    r"\s*LENGTH\s*=\s*(\d+)K", re.M)


def regions(ld_path):
    found = {name: (int(origin, 0), int(length) * 1024)
             for name, origin, length in REGION.findall(open(ld_path).read())}
    if "FLASH" not in found or "RAM" not in found:
        sys.exit(f"{ld_path}: no FLASH/RAM regions found")
    if "STORE" in found and found["STORE"][0] != found["FLASH"][0] + found["FLASH"][1]:
        sys.exit(f"{ld_path}: the STORE region does not follow FLASH")
    return found


def symbol(elf, size_tool, name):
    nm = size_tool.replace("size", "nm")
    out = subprocess.run([nm, elf], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    sys.exit(f"{elf}: symbol {name} missing")


def line(variant, what, used, limit, note=""):
    over = used > limit
    print(f"[{variant}] {what:5}: {used:7} of {limit:7} bytes ({100.0 * used / limit:5.1f}%)"
          + note + ("  OVER THE LIMIT" if over else ""))
    return not over


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    variant, elf, ld, size_tool = sys.argv[1:5]
    found = regions(ld)
    image = symbol(elf, size_tool, "__flash_used")
    ram = symbol(elf, size_tool, "__ram_used")
    image_room = found["FLASH"][1]
    ok = True
    if "STORE" in found:
        store_at, store = found["STORE"]
        ok &= line(variant, "flash", image + store, image_room + store,
                   f": image {image} + store {store} at 0x{store_at:05x}")
        ok &= line(variant, "image", image, image_room, " (the room below the store)")
    else:
        ok &= line(variant, "flash", image, image_room)
    ok &= line(variant, "SRAM", ram, found["RAM"][1])
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
