#!/usr/bin/env bash
# The layering rule: lower layers never import higher ones. windows/ holds
# thin adapters to Windows APIs, config/ the configuration rules; neither may
# reach into internal/ (the roles) or cmd/ (the command tree), and no
# internal/ package may reach into cmd/. Checked for both target OSes.
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
[ $fail -eq 0 ] && echo "layering: windows/ and config/ depend on nothing of internal/ or cmd/; internal/ on nothing of cmd/"
exit $fail
