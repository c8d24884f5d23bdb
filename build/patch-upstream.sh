#!/usr/bin/env bash
# Builds against a patched copy of upstream KubeEdge. Go refuses build
# overlays for files in the module cache, so this copies the module from the
# cache into OUT/kubeedge, applies patches/*.patch in name order with
# `patch -p1`, and writes OUT/go.mod and OUT/go.sum: this project's go.mod
# plus a replace directive pointing KubeEdge at the copy, for
# `go build -modfile=OUT/go.mod`. The module cache and the repository stay
# untouched; a patch that no longer applies fails the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build/patch-upstream.sh OUTPUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
module=github.com/kubeedge/kubeedge
src=$(go list -m -f '{{.Dir}}' "$module")
[ -d "$src" ] || { echo "upstream KubeEdge is not in the module cache: run go mod download" >&2; exit 1; }

rm -rf "$out/kubeedge"
cp -r "$src" "$out/kubeedge"
chmod -R u+w "$out/kubeedge"
for p in "$root"/patches/*.patch; do
  [ -e "$p" ] || continue
  patch --batch --forward --silent -p1 -d "$out/kubeedge" -i "$p" ||
    { echo "patch $(basename "$p") does not apply to $module $(go list -m -f '{{.Version}}' "$module")" >&2; exit 1; }
done
find "$out/kubeedge" -name '*.orig' -delete

# Replace paths in a -modfile are resolved from the module root, as in
# go.mod; a relative one keeps the checkout's location out of the binary.
rel=$(realpath --relative-to="$root" "$out/kubeedge")
case "$rel" in ../*) echo "OUTPUT_DIR must be inside $root" >&2; exit 1 ;; esac
cp go.mod "$out/go.mod"
printf '\n// Added by build/patch-upstream.sh: upstream with patches/ applied.\nreplace %s => ./%s\n' "$module" "$rel" >> "$out/go.mod"
cp go.sum "$out/go.sum"
