#!/usr/bin/env bash
# The Wine tests of `make wine-test`, then their summary: test/wine (Linux
# tests that run edgecore.exe under Wine) and the test binary of every
# package whose Windows build differs from its Linux one (a _windows.go or
# _windows_test.go file, test/winservice), cross-compiled and run in the
# project's prefix. Every part runs even when an earlier one fails, so that
# the summary counts all of them; the script fails when any part or the
# summary does.
#
# Environment (the Makefile sets it): RESULTS, the directory of the
# recorded results; TAGS, edgecore's build tags; EDGECORE_EXE and
# FAKECRI_EXE, Linux paths of the Windows binaries; DMICLIENT_EXE, the DMI
# client test/wine runs; WINEPREFIX.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${RESULTS:?}" "${TAGS:?}" "${EDGECORE_EXE:?}" "${WINEPREFIX:?}"
rm -rf "$RESULTS" && mkdir -p "$RESULTS" || exit 1
wintest=$RESULTS/wintest
go build -o "$wintest" ./build/wine/wintest || exit 1

# edgecore.exe runs from where the README has an operator copy it,
# C:\Program Files\edgecore: join and service install refuse an
# executable in a directory others may change (the service runs it as
# SYSTEM), and the checkout may be anywhere, such as under /tmp, which
# every account may change.
installed="$WINEPREFIX/drive_c/Program Files/edgecore"
mkdir -p "$installed" && chmod 755 "$installed" && install -m 755 "$EDGECORE_EXE" "$installed/edgecore.exe" || exit 1
# No bundled runtime beside it while test/wine runs: its joins use the
# host's (fake) runtime, as on a host without the release's runtime folder.
rm -rf "$installed/runtime" || exit 1

# One Wine server for the whole run, kept up between commands: a server
# left to end by itself a few seconds after the last program can be ending
# just as the next one connects, which then fails with "wine client
# error: recvmsg: Connection reset by peer" (seen in a cold CI run).
# Wine's own services (services.exe, its devices, rpcss) start with the
# first program and then live as long as the server: started here, with
# no test's output attached, they do not hold a test's pipes open.
export PATH="$PATH:/usr/lib/wine"
wineserver -p || exit 1
trap 'wineserver -k 2>/dev/null || true' EXIT
wine64 wineboot </dev/null >/dev/null 2>&1 || exit 1

# Each part's exit status: one that failed fails the run, whatever the
# summary counts (a part that ended before recording its failure counts
# nothing).
failed=()
EDGECORE_EXE="$installed/edgecore.exe" \
  go test -tags wine -count=1 -json ./test/wine/ | "$wintest" json -results "$RESULTS" -label test/wine ||
  failed+=("test/wine")

# The container runtime beside edgecore.exe, laid out as the release zip
# has it (build/package.sh), for internal/runtimeinstall's Wine test only.
if [ -n "${RUNTIME_DIR:-}" ]; then
  rm -rf "$installed/runtime" && mkdir -p "$installed/runtime/containerd" "$installed/runtime/cni" || exit 1
  cp "$RUNTIME_DIR/containerd-$CONTAINERD_VERSION"/*.exe "$RUNTIME_DIR/hcsshim-$HCSSHIM_VERSION"/*.exe "$installed/runtime/containerd/" || exit 1
  cp "$RUNTIME_DIR/cni-plugins-$CNI_PLUGINS_VERSION"/*.exe "$installed/runtime/cni/" || exit 1
  printf '{"containerd": "%s", "hcsshim": "%s", "cni-plugins": "%s"}\n' \
    "$CONTAINERD_VERSION" "$HCSSHIM_VERSION" "$CNI_PLUGINS_VERSION" > "$installed/runtime/manifest.json"
fi

# The Windows binaries take Windows paths. EDGECORE_SERVICE_TEST lets
# windows/service install its test services: the prefix is the project's
# own.
EDGECORE_EXE='C:\Program Files\edgecore\edgecore.exe' EDGECORE_SERVICE_TEST=1 \
  "$wintest" windows -results "$RESULTS" -tags "$TAGS" -run build/wine/run.sh ||
  failed+=("the Windows test binaries")

rm -rf "$installed/runtime"
# End the server and Wine's own services, so that nothing outlives the run.
wineserver -k 2>/dev/null || true
"$wintest" summary -results "$RESULTS" || failed+=("the summary")
if [ ${#failed[@]} -gt 0 ]; then
  echo "make wine-test failed: ${failed[*]}" >&2
  exit 1
fi
