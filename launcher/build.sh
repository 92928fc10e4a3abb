#!/bin/sh
# Builds bin/keeper.exe from launcher/keeper.c with Debian's mingw-w64 (apt-get install mingw-w64),
# reproducibly: the same source gives the same bytes on every machine and every run (no time stamp
# in the PE header, no build id, no build path, no C runtime, symbols stripped). A test rebuilds it
# and fails when the committed bin/keeper.exe differs. The committed file was built with Debian 12's
# x86_64-w64-mingw32-gcc 12-win32 (gcc-mingw-w64-x86-64-win32 12.2.0-14+deb12u1, binutils 2.40);
# another compiler version gives other bytes, so CI builds it in a Debian 12 container.
#   launcher/build.sh [OUT]      (default: bin/keeper.exe)
set -eu
out=${1:-$(dirname "$0")/../bin/keeper.exe}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")"  # builds from here, so no other path reaches the binary
CC=${CC:-x86_64-w64-mingw32-gcc}
SOURCE_DATE_EPOCH=0
export SOURCE_DATE_EPOCH
LC_ALL=C
export LC_ALL
"$CC" -std=c11 -Os -Wall -Wextra -Werror \
  -ffreestanding -fno-builtin -fno-stack-protector -fno-stack-check \
  -fno-ident -ffile-prefix-map="$PWD"=. \
  -nostdlib -nostartfiles -e keeper_start \
  -Wl,--subsystem,console -Wl,--no-insert-timestamp -Wl,--build-id=none -s \
  -o "$out" keeper.c -lkernel32
