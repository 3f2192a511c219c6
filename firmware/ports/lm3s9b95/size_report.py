"""Print an LM3S image's flash and SRAM use against the linker script's
limits, and fail when either is exceeded (the link's own ASSERTs catch the
same; this makes the figures visible on every build).

usage: size_report.py VARIANT ELF LINKER_SCRIPT SIZE_TOOL
"""
import re
import subprocess
import sys


def region_lengths(ld_path):
    text = open(ld_path).read()
    sizes = {}
    for name, length in re.findall(r"^\s*(\w+)\s*\([rwx]+\)\s*:\s*ORIGIN\s*=\s*\w+,\s*LENGTH\s*=\s*(\d+)K",
                                   text, re.M):
        sizes[name] = int(length) * 1024
    if "FLASH" not in sizes or "RAM" not in sizes:
        sys.exit(f"{ld_path}: no FLASH/RAM regions found")
    return sizes


def symbol(elf, size_tool, name):
    nm = size_tool.replace("size", "nm")
    out = subprocess.run([nm, elf], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    sys.exit(f"{elf}: symbol {name} missing")


def main():
    variant, elf, ld, size_tool = sys.argv[1:5]
    limits = region_lengths(ld)
    flash = symbol(elf, size_tool, "__flash_used")
    ram = symbol(elf, size_tool, "__ram_used")
    ok = True
    for what, used, limit in (("flash", flash, limits["FLASH"]), ("SRAM", ram, limits["RAM"])):
        over = used > limit
        ok &= not over
        print(f"[{variant}] {what:5}: {used:7} of {limit:7} bytes ({100.0 * used / limit:5.1f}%)"
              + ("  OVER THE LIMIT" if over else ""))
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
