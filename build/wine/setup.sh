#!/usr/bin/env bash
# Prepares a Wine prefix in which edgecore.exe can run: a 64-bit prefix of the
# project's own, and the bcryptprimitives.dll that Go binaries need.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prefix=${WINEPREFIX:?set WINEPREFIX to the prefix to prepare}
export WINEDEBUG=${WINEDEBUG:--all} WINEARCH=win64
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}

# Debian's wine64 package puts wine64 and wineserver under /usr/lib/wine.
PATH="$PATH:/usr/lib/wine"
wine=$(command -v wine64 || command -v wine || true)
[ -n "$wine" ] || { echo "wine64 not found: apt-get install wine64" >&2; exit 1; }
command -v "$cc" >/dev/null || { echo "$cc not found: apt-get install gcc-mingw-w64-x86-64" >&2; exit 1; }

dll_dir="$prefix/../wine-dll"
mkdir -p "$dll_dir"
dll="$dll_dir/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ "$here/processprng.c" -nt "$dll" ]; then
  "$cc" -O2 -shared -o "$dll" "$here/processprng.c" "$here/processprng.def" -ladvapi32
fi

if [ ! -f "$prefix/system.reg" ]; then
  echo "creating Wine prefix $prefix"
  mkdir -p "$prefix"
  "$wine" wineboot --init >/dev/null 2>&1 || true
  wineserver -w 2>/dev/null || true
fi
[ -d "$prefix/drive_c/windows/system32" ] || { echo "Wine prefix $prefix was not created" >&2; exit 1; }
cp "$dll" "$prefix/drive_c/windows/system32/bcryptprimitives.dll"
echo "Wine prefix ready: $prefix"
