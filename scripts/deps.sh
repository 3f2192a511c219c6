#!/usr/bin/env bash
# Idempotent machine set-up for LiteDAV: Debian packages, lwIP sources, the Python stack.
# Safe to run again and safe beside another apt user (lock timeout, private archive cache).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache="$top/build/deps"
mkdir -p "$cache"

say() { printf '[deps] %s\n' "$*"; }

apt_packages=(
  verilator gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
  libevent-dev libjson-c-dev zlib1g-dev libslirp-dev
  apache2-utils curl dpkg-dev xz-utils patch
  clang libclang-rt-dev litmus
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm valgrind
  lm4flash openocd
  openjdk-17-jdk-headless
  openfpgaloader
)

apt_opts=(-y -q -o DPkg::Lock::Timeout=600 -o "Dir::Cache::archives=$cache/apt-archives")

need_apt=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done

run_apt() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo "$@"
}

sources_file=/etc/apt/sources.list.d/litedav-src.sources
# lwIP: unpacked again (from the cached tarball, fetched when missing) whenever build/lwip does
# not carry firmware/lwip-patches exactly as they are now.
lwip_tarball() { ls "$cache"/lwip-src/lwip_*.orig.tar.* 2>/dev/null | head -n 1; }
need_lwip=0
need_src=0
if [ ! -f "$top/build/lwip/src/core/tcp.c" ] || ! "$top/scripts/lwip_patches.sh" check "$top/build/lwip"; then
  need_lwip=1
  [ -n "$(lwip_tarball)" ] || need_src=1
fi

if [ ${#need_apt[@]} -gt 0 ] || [ $need_src -eq 1 ]; then
  mkdir -p "$cache/apt-archives/partial"
  if [ $need_src -eq 1 ] && [ ! -f "$sources_file" ]; then
    say "enabling Debian source packages (for lwIP)"
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | run_apt tee "$sources_file" >/dev/null
  fi
  say "apt-get update"
  run_apt apt-get -q -o DPkg::Lock::Timeout=600 update >/dev/null
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing Debian packages: ${need_apt[*]}"
  DEBIAN_FRONTEND=noninteractive run_apt apt-get install "${apt_opts[@]}" --no-install-recommends "${need_apt[@]}"
else
  say "Debian packages present"
fi

# lwIP 2.1.3 from Debian's source package, unpacked under build/ (never committed), with LiteDAV's
# patches (firmware/lwip-patches) applied. The files get the unpacking time (tar -m), so every
# build recompiles lwIP after a change of the patches.
if [ $need_src -eq 1 ]; then
  say "fetching lwIP sources (Debian source package lwip)"
  rm -rf "$cache/lwip-src" && mkdir -p "$cache/lwip-src"
  (cd "$cache/lwip-src" && apt-get source --download-only -q lwip >/dev/null)
fi
if [ $need_lwip -eq 1 ]; then
  tarball=$(lwip_tarball)
  rm -rf "$top/build/lwip" && mkdir -p "$top/build/lwip"
  tar -xmf "$tarball" -C "$top/build/lwip" --strip-components=1
  [ -f "$top/build/lwip/src/core/tcp.c" ] || { echo "lwIP tarball has no src/core/tcp.c" >&2; exit 1; }
  applied=$("$top/scripts/lwip_patches.sh" apply "$top/build/lwip")
  say "lwIP unpacked: $(grep -m1 'LWIP_VERSION_STRING\|#define LWIP_VERSION_MAJOR' "$top/build/lwip/src/include/lwip/init.h" | tr -s ' '), patched: $applied patch(es) of firmware/lwip-patches"
else
  say "lwIP sources present, patched"
fi

# Python stack, pinned (see requirements.txt); the package itself in editable mode.
stamp="$cache/pip.stamp"
installed_from=$(cd / && python3 -c 'import litedav.soc, os; print(os.path.dirname(os.path.dirname(litedav.soc.__file__)))' 2>/dev/null || true)
if [ ! -f "$stamp" ] || [ "$top/requirements.txt" -nt "$stamp" ] || [ "$top/setup.py" -nt "$stamp" ] \
   || [ "$installed_from" != "$top" ]; then
  say "installing Python packages (requirements.txt, litedav)"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$top/requirements.txt"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps -e "$top"
  touch "$stamp"
else
  say "Python packages present"
fi
say "done"
