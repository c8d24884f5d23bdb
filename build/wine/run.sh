#!/usr/bin/env bash
# Runs a Windows program in the project's Wine prefix and returns its exit
# code; Debian's wine64 package keeps the loader under /usr/lib/wine.
set -euo pipefail
export WINEPREFIX=${WINEPREFIX:?set WINEPREFIX (make does)} WINEDEBUG=${WINEDEBUG:--all}
PATH="$PATH:/usr/lib/wine"
wine=$(command -v wine64 || command -v wine) || { echo "wine64 not found: apt-get install wine64" >&2; exit 1; }
exec "$wine" "$@"
