#!/usr/bin/env bash
# lwip_patches.sh apply|check|stamp LWIP_DIR: LiteDAV's changes to lwIP, kept as patches
# (firmware/lwip-patches/series names them in order) and applied to the sources `make deps`
# unpacks from Debian's package; lwIP itself is never committed.
#   apply  applies the series to pristine sources in LWIP_DIR, records it in
#          LWIP_DIR/.litedav-patches and prints how many patches it applied (a patch
#          that does not apply cleanly is an error)
#   check  exits 0 when LWIP_DIR carries exactly the series as it is now
#   stamp  prints what .litedav-patches holds for the series as it is now
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
patches="$top/firmware/lwip-patches"
action=${1:?usage: lwip_patches.sh apply|check|stamp LWIP_DIR}
lwip=${2:-$top/build/lwip}

series() { grep -v -e '^#' -e '^[[:space:]]*$' "$patches/series"; }
stamp() { (cd "$patches" && sha256sum series $(series)); }

case $action in
  apply)
    [ ! -e "$lwip/.litedav-patches" ] || { echo "lwip_patches.sh: $lwip is already patched" >&2; exit 1; }
    for p in $(series); do
      patch -p1 --forward --batch --quiet -d "$lwip" < "$patches/$p" \
        || { echo "lwip_patches.sh: $p does not apply to $lwip" >&2; exit 1; }
    done
    stamp > "$lwip/.litedav-patches"
    series | wc -l
    ;;
  check) [ -f "$lwip/.litedav-patches" ] && cmp -s <(stamp) "$lwip/.litedav-patches" ;;
  stamp) stamp ;;
  *) echo "usage: lwip_patches.sh apply|check|stamp LWIP_DIR" >&2; exit 2 ;;
esac
