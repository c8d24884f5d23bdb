#!/usr/bin/env bash
# Assembles the release zip for an offline Windows host:
#   edgecore.exe, a sample configuration, the quick start from docs/quickstart.md as
#   text, LICENSE, NOTICE, the licenses of every Go module compiled into
#   edgecore.exe (from the module cache), manifest.json (version, platform,
#   KubeEdge version; KUBEEDGE_VERSION overrides the last), and SHA256SUMS
#   over all of them. Refuses (and removes the zip) when VERSION is already
#   released with other contents (build/released-versions).
# With RUNTIME_DIR (build/runtime.sh's output) and CONTAINERD_VERSION,
# HCSSHIM_VERSION and CNI_PLUGINS_VERSION, also the container runtime that
# `join` installs on a host without one: runtime/containerd (containerd,
# ctr, the runhcs shim), runtime/cni (win-bridge, win-overlay, host-local),
# runtime/manifest.json with their versions, and the license of every Go
# module compiled into them under licenses/runtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:?usage: build/package.sh EDGECORE_EXE VERSION OUTPUT_ZIP}
version=${2:?version}
zip_out=${3:?output zip}
cd "$root"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dir="$stage/edgecore-$version-windows-amd64"
mkdir -p "$dir/licenses"

cp "$exe" "$dir/edgecore.exe"
go run ./build/sample > "$dir/edgecore.sample.yaml"
# The quick start is the part of docs/quickstart.md between its two markers.
sed -n '/<!-- quickstart -->/,/<!-- \/quickstart -->/p' docs/quickstart.md | sed '1d;$d' > "$dir/QUICKSTART.txt"
[ -s "$dir/QUICKSTART.txt" ] || { echo "docs/quickstart.md has no quick start between <!-- quickstart --> markers" >&2; exit 1; }
cp LICENSE NOTICE "$dir/"

# module_dir PATH VERSION: the module's folder in the module cache, whose
# folder names escape upper-case letters as !lower-case.
module_dir() {
  local esc; esc=$(printf '%s' "$1" | sed -E 's/([A-Z])/!\L\1/g')
  printf '%s/%s@%s' "$(go env GOMODCACHE)" "$esc" "$2"
}
# copy_license DIR MODPATH MODVER MODDIR: the module's license (and NOTICE,
# which Apache-2.0 asks to travel with the code) into DIR.
copy_license() {
  local to=$1 modpath=$2 modver=$3 moddir=$4 lic notice name
  lic=$(find "$moddir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) | sort | head -1)
  [ -n "$lic" ] || { echo "no license file in $modpath $modver" >&2; exit 1; }
  name=$(echo "$modpath" | tr '/' '_')
  cp "$lic" "$to/$name.txt"
  notice=$(find "$moddir" -maxdepth 1 -type f -iname 'NOTICE*' | sort | head -1)
  if [ -n "$notice" ]; then cp "$notice" "$to/$name.NOTICE.txt"; fi
}

# One license file per module in the binary, as the build recorded them.
go version -m "$exe" | awk '$1 == "dep" { print $2, $3 } $1 == "=>" { print "=>", $2, $3 }' |
while read -r path ver; do
  if [ "$path" = "=>" ]; then continue; fi
  modpath=$path modver=$ver
  moddir=$(go list -m -f '{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}' "$modpath" 2>/dev/null || true)
  [ -n "$moddir" ] && [ -d "$moddir" ] || { echo "no source for $modpath $modver in the module cache" >&2; exit 1; }
  copy_license "$dir/licenses" "$modpath" "$modver" "$moddir"
done

if [ -n "${RUNTIME_DIR:-}" ]; then
  : "${CONTAINERD_VERSION:?}" "${HCSSHIM_VERSION:?}" "${CNI_PLUGINS_VERSION:?}"
  rt="$dir/runtime"
  mkdir -p "$rt/containerd" "$rt/cni" "$dir/licenses/runtime"
  for f in containerd-$CONTAINERD_VERSION/containerd.exe containerd-$CONTAINERD_VERSION/ctr.exe \
           hcsshim-$HCSSHIM_VERSION/containerd-shim-runhcs-v1.exe; do
    cp "$RUNTIME_DIR/$f" "$rt/containerd/"
  done
  for f in win-bridge win-overlay host-local; do
    cp "$RUNTIME_DIR/cni-plugins-$CNI_PLUGINS_VERSION/$f.exe" "$rt/cni/"
  done
  # The runtime's own modules and every one compiled into it, each once
  # (the programs share many, at versions whose licenses agree), from the
  # module cache the build filled (a replacement, go version -m's "=>",
  # is licensed too).
  for exe in "$rt"/containerd/*.exe "$rt"/cni/*.exe; do
    go version -m "$exe" | awk '$1 == "mod" || $1 == "dep" || $1 == "=>" { print $2, $3 }'
  done | awk '!seen[$1]++' | while read -r modpath modver; do
    moddir=$(module_dir "$modpath" "$modver")
    [ -d "$moddir" ] || { echo "no source for $modpath $modver in the module cache: run build/runtime.sh" >&2; exit 1; }
    copy_license "$dir/licenses/runtime" "$modpath" "$modver" "$moddir"
  done
  # The runtime's versions, for join's output and the record it keeps:
  # beside the programs rather than in manifest.json, which earlier
  # releases' upgrade reads strictly and would refuse with a field it does
  # not know.
  printf '{\n  "containerd": "%s",\n  "hcsshim": "%s",\n  "cni-plugins": "%s"\n}\n' \
    "$CONTAINERD_VERSION" "$HCSSHIM_VERSION" "$CNI_PLUGINS_VERSION" > "$rt/manifest.json"
fi

# What the package is, for `edgecore.exe upgrade` and the NodeUpgradeJob
# executor, which read it rather than trust the zip's name: the platform
# comes from the binary's own build information.
setting() { go version -m "$exe" | awk -v k="$1" '$1 == "build" && index($2, k "=") == 1 { print substr($2, length(k) + 2) }'; }
goos=$(setting GOOS) goarch=$(setting GOARCH)
[ "$goos/$goarch" = windows/amd64 ] || { echo "$exe is built for ${goos:-?}/${goarch:-?}, not windows/amd64" >&2; exit 1; }
kubeedge=${KUBEEDGE_VERSION:-$(GOWORK=off go list -m -f '{{.Version}}' github.com/kubeedge/kubeedge)}
printf '{\n  "name": "edgecore",\n  "version": "%s",\n  "os": "%s",\n  "arch": "%s",\n  "kubeedge": "%s",\n  "binary": "edgecore.exe"\n}\n' \
  "$version" "$goos" "$goarch" "$kubeedge" > "$dir/manifest.json"

(cd "$dir" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum > SHA256SUMS)
mkdir -p "$(dirname "$zip_out")"
rm -f "$zip_out"
zip_abs=$(cd "$(dirname "$zip_out")" && pwd)/$(basename "$zip_out")
# Fixed timestamps so that the same build gives the same zip.
find "$dir" -exec touch -d "${SOURCE_DATE_EPOCH:+@$SOURCE_DATE_EPOCH}${SOURCE_DATE_EPOCH:-2000-01-01}" {} +
(cd "$stage" && find "$(basename "$dir")" -type f | LC_ALL=C sort | zip -q -X -D "$zip_abs" -@)
# A version is released once: a package of a version build/released-versions
# lists must be that release's very zip, or there is no package.
go run ./build/checkrelease -list build/released-versions -kubeedge "$kubeedge" "$version" "$zip_abs" || { rm -f "$zip_abs"; exit 1; }
echo "$zip_out"
