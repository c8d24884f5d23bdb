#!/usr/bin/env bash
# Assembles the release zip for an offline Windows host:
#   edgecore.exe, a sample configuration, the quick start from docs/quickstart.md as
#   text, LICENSE, NOTICE, the licenses of every Go module compiled into
#   edgecore.exe (from the module cache), manifest.json (version, platform,
#   KubeEdge version; KUBEEDGE_VERSION overrides the last), and SHA256SUMS
#   over all of them. Refuses (and removes the zip) when VERSION is already
#   released with other contents (build/released-versions).
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

# One license file per module in the binary, as the build recorded them.
go version -m "$exe" | awk '$1 == "dep" { print $2, $3 } $1 == "=>" { print "=>", $2, $3 }' |
while read -r path ver; do
  if [ "$path" = "=>" ]; then continue; fi
  modpath=$path modver=$ver
  moddir=$(go list -m -f '{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}' "$modpath" 2>/dev/null || true)
  [ -n "$moddir" ] && [ -d "$moddir" ] || { echo "no source for $modpath $modver in the module cache" >&2; exit 1; }
  lic=$(find "$moddir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) | sort | head -1)
  [ -n "$lic" ] || { echo "no license file in $modpath $modver" >&2; exit 1; }
  name=$(echo "$modpath" | tr '/' '_')
  cp "$lic" "$dir/licenses/$name.txt"
  # Apache-2.0 asks for NOTICE files to travel with the code.
  notice=$(find "$moddir" -maxdepth 1 -type f -iname 'NOTICE*' | sort | head -1)
  if [ -n "$notice" ]; then cp "$notice" "$dir/licenses/$name.NOTICE.txt"; fi
done

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
