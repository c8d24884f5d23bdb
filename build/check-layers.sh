#!/usr/bin/env bash
# The layering rule: lower layers never import higher ones. windows/ holds
# thin adapters to Windows APIs, config/ the configuration rules; neither may
# reach into internal/ (the roles) or cmd/ (the command tree), and no
# internal/ package may reach into cmd/. Inside internal/ three layers: the
# shared layer (small services every procedure uses), the procedures an
# operator runs (join, reset, preflight, upgrade, podnet, servicectl), and the node
# (node, modules); the shared layer imports neither of the others, and the
# procedures never import the node. cmd/ reaches Windows only through
# internal/: it imports no windows/ package itself. Checked for both
# target OSes.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(GOWORK=off go list -m)
fail=0
check() { # check PACKAGES FORBIDDEN_DIR...
  local pkgs=$1; shift
  local re
  re=$(printf "|%s" "$@"); re="$mod/(${re:1})(/|\$)"
  for goos in windows linux; do
    # One line per package: the package, then everything it depends on.
    while read -r p deps; do
      bad=$(tr ' ' '\n' <<<"$deps" | grep -E "^$re" | tr '\n' ' ' || true)
      if [ -n "$bad" ]; then
        echo "layering: $p ($goos) depends on $bad: a higher layer" >&2
        fail=1
      fi
    done < <(GOOS=$goos go list -f '{{.ImportPath}} {{join .Deps " "}}' "$pkgs")
  done
}
check ./windows/... internal cmd
check ./config/... internal cmd windows
check ./internal/... cmd
shared=(deps hostfs steps clock hostprobe protect crashlog version envcheck lifecycle logfile memlimit nodedb release reconnect servertrust jobpolicy servicestore clusterdns podrelist)
procedures=(join reset configfile preflight upgrade podnet servicectl)
node=(node modules)
prefixed() { local p=$1; shift; printf "$p%s " "$@"; }
for s in "${shared[@]}"; do
  [ -d "internal/$s" ] || { echo "layering: the shared layer names internal/$s, which is gone: update build/check-layers.sh" >&2; fail=1; continue; }
  check "./internal/$s/..." $(prefixed internal/ "${procedures[@]}" "${node[@]}")
done
for p in "${procedures[@]}"; do
  check "./internal/$p/..." $(prefixed internal/ "${node[@]}")
done
for goos in windows linux; do
  while read -r p imports; do
    bad=$(tr ' ' '\n' <<<"$imports" | grep -E "^$mod/windows(/|\$)" | tr '\n' ' ' || true)
    if [ -n "$bad" ]; then
      echo "layering: $p ($goos) imports $bad: cmd/ reaches Windows only through internal/" >&2
      fail=1
    fi
  done < <(GOOS=$goos go list -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}}' ./cmd/...)
done
[ $fail -eq 0 ] && echo "layering: windows/ and config/ depend on nothing of internal/ or cmd/; internal/ on nothing of cmd/;" \
  "the shared layer (${shared[*]}) on no procedure (${procedures[*]}) and not on the node (${node[*]}); no procedure on the node;" \
  "cmd/ imports no windows/ package"
exit $fail
