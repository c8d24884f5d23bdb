#!/usr/bin/env bash
# Prepares a Wine prefix in which edgecore.exe can run: a 64-bit prefix of the
# project's own, the bcryptprimitives.dll that Go binaries need, and what the
# embedded kubelet reads from Windows: a Windows 10 version, the registry
# values its stats code reads and a pdh.dll with its performance counters.
# Running it again on a prepared prefix changes nothing.
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
pdh="$dll_dir/pdh.dll"
if [ ! -f "$pdh" ] || [ "$here/pdh.c" -nt "$pdh" ] || [ "$here/pdh.def" -nt "$pdh" ]; then
  "$cc" -O2 -Wall -shared -o "$pdh" "$here/pdh.c" "$here/pdh.def" -liphlpapi
fi

if [ ! -f "$prefix/system.reg" ]; then
  echo "creating Wine prefix $prefix"
  mkdir -p "$prefix"
  "$wine" wineboot --init >/dev/null 2>&1 || true
  wineserver -w 2>/dev/null || true
fi
[ -d "$prefix/drive_c/windows/system32" ] || { echo "Wine prefix $prefix was not created" >&2; exit 1; }
cp "$dll" "$prefix/drive_c/windows/system32/bcryptprimitives.dll"
cp "$pdh" "$prefix/drive_c/windows/system32/pdh.dll"

# The kubelet's node stats (k8s.io/kubernetes/pkg/kubelet/winstats) read
# CurrentMajorVersionNumber, CurrentMinorVersionNumber, CurrentBuildNumber
# and ProductName, which winecfg writes for Windows 10, and UBR, which
# Wine never writes.
"$wine" winecfg -v win10 >/dev/null 2>&1 || { echo "winecfg -v win10 failed in $prefix" >&2; exit 1; }
reg_file=$(mktemp --suffix=.reg)
trap 'rm -f "$reg_file"' EXIT
cat > "$reg_file" <<'REG'
Windows Registry Editor Version 5.00

; The update revision of the build; any number will do for a test prefix.
[HKEY_LOCAL_MACHINE\SOFTWARE\Microsoft\Windows NT\CurrentVersion]
"UBR"=dword:00000001

[HKEY_LOCAL_MACHINE\SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management\PrefetchParameters]
"BootId"=dword:00000001

[HKEY_CURRENT_USER\Software\Wine\DllOverrides]
"pdh"="native"
REG
"$wine" reg import "Z:${reg_file//\//\\}" >/dev/null 2>&1 ||
  { echo "importing registry values into $prefix failed" >&2; exit 1; }
# The system UUID of the node (HKLM\SYSTEM\HardwareConfig LastConfig) is
# made once per prefix, so that the node keeps it across runs.
if ! "$wine" reg query 'HKLM\SYSTEM\HardwareConfig' /v LastConfig >/dev/null 2>&1; then
  "$wine" reg add 'HKLM\SYSTEM\HardwareConfig' /v LastConfig /t REG_SZ /d "{$(cat /proc/sys/kernel/random/uuid)}" /f >/dev/null 2>&1 ||
    { echo "writing HKLM\SYSTEM\HardwareConfig LastConfig into $prefix failed" >&2; exit 1; }
fi
wineserver -w 2>/dev/null || true
echo "Wine prefix ready: $prefix"
