#!/usr/bin/env bash
# Fails when the Go linker cannot drop unused methods from edgecore.exe: a
# reachable call of reflect's Method or MethodByName with a non-constant
# argument (text/template, for one) makes it keep every exported method of
# every type used as an interface value, about 20 MB of edgecore.exe (see
# patches/README.md). Prints the call chain that reaches the first such
# function. Usage: build/check-deadcode.sh [build tags]
set -euo pipefail
cd "$(dirname "$0")/.."
tags=${1:-providerless,grpcnotrace}
dump=$(mktemp)
trap 'rm -f "$dump" "$dump.exe"' EXIT
CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=${MINGW_CC:-x86_64-w64-mingw32-gcc} \
  go build -trimpath -tags "$tags" -ldflags=-dumpdep -o "$dump.exe" ./cmd/edgecore 2>"$dump"
# -dumpdep prints "parent -> child" once per symbol, when the linker first
# reaches it; a function marked <ReflectMethod> defeats the pruning.
first=$(grep -m1 -o '^[^ ]* <ReflectMethod>' "$dump" | cut -d' ' -f1 || true)
[ -z "$first" ] && { echo "deadcode: the linker prunes unused methods of edgecore.exe"; exit 0; }
echo "deadcode: $first calls reflect's Method or MethodByName with a non-constant argument; reached through:" >&2
awk -v s="$first" '
  / -> / { split($0, e, " -> "); p = e[1]; c = e[2]; sub(/ <.*/, "", p); sub(/ <.*/, "", c); if (!(c in par)) par[c] = p }
  END { n = 0; while (s != "" && n < 40) { print "  " s; s = par[s]; n++ } }' "$dump" >&2
exit 1
