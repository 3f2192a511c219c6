#!/usr/bin/env bash
# Flash the LM3S9B95 image onto a real board through its debug USB port
# (`make flash-lm3s9b95` builds the image and calls this).
#
# usage: scripts/flash_lm3s9b95.sh [--help] IMAGE.bin
#
# Environment (make variables of the same name pass through):
#   FLASHER=openocd|lm4flash   the tool (default openocd)
#   ADAPTER=ek-lm3s9b9x|stellaris-eval|ti-icdi   the debug interface, for openocd:
#       ek-lm3s9b9x     the ICDI board of the EK-LM3S9B90/92 kits (FTDI, USB 0403:bcda),
#                       OpenOCD's board/ek-lm3s9b9x.cfg (the default)
#       stellaris-eval  the FTDI ICDI built into other Stellaris evaluation and
#                       development boards (USB 0403:bcd9), interface/ftdi/luminary.cfg
#       ti-icdi         TI's Stellaris/Tiva ICDI (USB 1cbe:00fd, e.g. a LaunchPad's
#                       debug-out), interface/ti-icdi.cfg; lm4flash only talks to this one
#   ERASE_STORE=1              also erase the store region (0x20000-0x3FFFF); by default
#                              only the blocks the image covers are erased, so the
#                              calendars on the board survive a firmware update
#   USB_DEVICES=DIR            where USB devices are listed (default /sys/bus/usb/devices)
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
fail() { printf 'flash-lm3s9b95: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") usage >&2; exit 2 ;;
esac
image=$1
[ -f "$image" ] || fail "no image $image (build it with make flash-lm3s9b95)"

flasher=${FLASHER:-openocd}
adapter=${ADAPTER:-ek-lm3s9b9x}
[ "$flasher" = lm4flash ] && adapter=ti-icdi
store_start=0x20000
store_size=0x20000

case "$adapter" in
  ek-lm3s9b9x)
    usb_id=0403:bcda; what="the Luminary Micro ICDI board of an EK-LM3S9B9x kit"
    openocd_cfg=(-f board/ek-lm3s9b9x.cfg) ;;
  stellaris-eval)
    usb_id=0403:bcd9; what="a Stellaris evaluation board's built-in ICDI"
    openocd_cfg=(-f interface/ftdi/luminary.cfg -c "set CHIPNAME lm3s9b9x" -f target/stellaris.cfg) ;;
  ti-icdi)
    usb_id=1cbe:00fd; what="a TI Stellaris/Tiva In-Circuit Debug Interface"
    openocd_cfg=(-f interface/ti-icdi.cfg -c "set CHIPNAME lm3s9b9x" -f target/stellaris.cfg) ;;
  *) fail "unknown ADAPTER=$adapter (ek-lm3s9b9x, stellaris-eval or ti-icdi)" ;;
esac
case "$flasher" in
  openocd|lm4flash) command -v "$flasher" >/dev/null || fail "$flasher is not installed: run make deps" ;;
  *) fail "unknown FLASHER=$flasher (openocd or lm4flash)" ;;
esac

# Is the debug interface on the USB bus? (Looked up in sysfs: no lsusb needed.)
usb_dir=${USB_DEVICES:-/sys/bus/usb/devices}
found=0
for dev in "$usb_dir"/*; do
  [ -f "$dev/idVendor" ] && [ -f "$dev/idProduct" ] || continue
  [ "$(cat "$dev/idVendor"):$(cat "$dev/idProduct")" = "$usb_id" ] && found=1 && break
done
if [ $found -eq 0 ]; then
  fail "no board found: looked for $what (USB $usb_id) in $usb_dir.
Connect the board's debug USB port, or pick the interface with ADAPTER=ek-lm3s9b9x|stellaris-eval|ti-icdi."
fi

echo "flash-lm3s9b95: $image ($(stat -c %s "$image") bytes) with $flasher through $what"
if [ "$flasher" = lm4flash ]; then
  # -E: erase only the blocks the image covers (the default erases the whole flash)
  erase_opt=(-E)
  [ "${ERASE_STORE:-0}" = 1 ] && erase_opt=()
  lm4flash "${erase_opt[@]}" -v "$image"
else
  erase_cmd=()
  [ "${ERASE_STORE:-0}" = 1 ] && erase_cmd=(-c "flash erase_address $store_start $store_size")
  # program erases only the sectors the image covers
  openocd "${openocd_cfg[@]}" -c init -c "reset halt" "${erase_cmd[@]}" \
    -c "program $image 0x00000000 verify" -c "reset run" -c shutdown
fi
