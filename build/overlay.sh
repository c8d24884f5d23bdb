#!/usr/bin/env bash
# Applies patches/*.patch to copies of the upstream KubeEdge files from the
# module cache and writes OUT/overlay.json for `go build -overlay`. The
# module cache stays untouched; a patch that no longer applies fails the
# build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build/overlay.sh OUTPUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/kubeedge/kubeedge)
[ -d "$src" ] || { echo "upstream KubeEdge is not in the module cache: run go mod download" >&2; exit 1; }

rm -rf "$out/tree"
mkdir -p "$out/tree"
files=()
for p in "$root"/patches/*.patch; do
  [ -e "$p" ] || continue
  while read -r f; do
    if [ ! -e "$out/tree/$f" ]; then
      mkdir -p "$out/tree/$(dirname "$f")"
      if [ -f "$src/$f" ]; then cp "$src/$f" "$out/tree/$f"; chmod u+w "$out/tree/$f"; fi
      files+=("$f")
    fi
  done < <(sed -n 's#^+++ b/##p' "$p")
  patch --batch --forward --silent -p1 -d "$out/tree" -i "$p" ||
    { echo "patch $(basename "$p") does not apply to $src" >&2; exit 1; }
done

{
  echo '{"Replace": {'
  sep=""
  for f in "${files[@]}"; do
    printf '%s\n  "%s": "%s"' "$sep" "$src/$f" "$out/tree/$f"
    sep=","
  done
  echo
  echo '}}'
} > "$out/overlay.json"
