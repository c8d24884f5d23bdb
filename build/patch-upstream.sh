#!/usr/bin/env bash
# Builds against patched copies of upstream modules. Go refuses build
# overlays for files in the module cache, so this copies each module that a
# patch targets from the cache into OUT/<last element of its path>, applies
# patches/*.patch in name order with `patch -p1`, and writes OUT/go.mod and
# OUT/go.sum: this project's go.mod with a replace directive pointing each
# patched module at its copy, for `go build -modfile=OUT/go.mod`.
#
# A patch targets github.com/kubeedge/kubeedge unless its preamble (the text
# before the first diff) has a line `Module: <module path>` naming another
# module of the build graph by the path this project requires it under, e.g.
# `Module: k8s.io/kubernetes` for KubeEdge's Kubernetes fork. The module
# cache and the repository stay untouched; a patch that no longer applies
# fails the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build/patch-upstream.sh OUTPUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
default_module=github.com/kubeedge/kubeedge

# Replace paths in a -modfile are resolved from the module root, as in
# go.mod; a relative one keeps the checkout's location out of the binary.
case "$(realpath --relative-to="$root" "$out")" in
  ../*) echo "OUTPUT_DIR must be inside $root" >&2; exit 1 ;;
esac

# target_module PATCH prints the module PATCH applies to.
target_module() {
  awk -v def="$default_module" '
    /^(diff |--- |\+\+\+ )/ { exit }
    /^Module:[ \t]*[^ \t]+[ \t]*$/ { sub(/^Module:[ \t]*/, ""); sub(/[ \t]*$/, ""); m = $0 }
    END { print (m == "" ? def : m) }' "$1"
}

# The module actually built for a path: its replacement, if go.mod has one.
describe() {
  go list -m -f '{{with .Replace}}{{.Path}} {{.Version}}{{else}}{{.Path}} {{.Version}}{{end}}' "$1"
}

cp go.mod "$out/go.mod"
cp go.sum "$out/go.sum"
# The kubeedge copy is always made, so that the build does not depend on
# whether a patch for it exists today.
declare -A copied=()
modules=("$default_module")
for p in "$root"/patches/*.patch; do
  [ -e "$p" ] || continue
  m=$(target_module "$p")
  case " ${modules[*]} " in *" $m "*) ;; *) modules+=("$m") ;; esac
done

for m in "${modules[@]}"; do
  src=$(go list -m -f '{{.Dir}}' "$m" 2>/dev/null) || src=
  [ -n "$src" ] && [ -d "$src" ] ||
    { echo "module $m is not in the build graph or not in the module cache: run go mod download" >&2; exit 1; }
  name=${m##*/}
  [ -z "${copied[$name]:-}" ] || { echo "two patched modules would share $out/$name: $m and ${copied[$name]}" >&2; exit 1; }
  copied[$name]=$m
  rm -rf "${out:?}/$name"
  cp -r "$src" "$out/$name"
  chmod -R u+w "$out/$name"
  for p in "$root"/patches/*.patch; do
    [ -e "$p" ] || continue
    [ "$(target_module "$p")" = "$m" ] || continue
    patch --batch --forward --silent -p1 -d "$out/$name" -i "$p" ||
      { echo "patch $(basename "$p") does not apply to $(describe "$m")" >&2; exit 1; }
  done
  find "$out/$name" -name '*.orig' -delete
  rel=$(realpath --relative-to="$root" "$out/$name")
  # go mod edit replaces an existing replace directive for the same path
  # (go.mod already points k8s.io/kubernetes at the fork) instead of adding
  # a second one, which Go would refuse.
  go mod edit -replace="$m=./$rel" "$out/go.mod"
done
printf '\n// build/patch-upstream.sh pointed %s at patched copies in %s.\n' \
  "${modules[*]}" "$(realpath --relative-to="$root" "$out")" >> "$out/go.mod"
