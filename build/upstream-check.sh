#!/usr/bin/env bash
# After build/bump-upstream.sh: says which patches/ no longer apply to the
# upstream modules go.mod now builds, then (when all apply) which upstream
# module tests fail against our beehive (build/conformance.sh). Changes
# nothing outside _output.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off GONOSUMDB=github.com/kubeedge
failed=()
echo "== patches against the modules go.mod builds"
for p in patches/*.patch; do
  m=$(awk '/^(diff |--- |\+\+\+ )/ { exit } /^Module:/ { print $2 }' "$p")
  m=${m:-github.com/kubeedge/kubeedge}
  dir=$(go list -m -f '{{with .Replace}}{{.Dir}}{{else}}{{.Dir}}{{end}}' "$m" 2>/dev/null)
  ver=$(go list -m -f '{{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' "$m" 2>/dev/null)
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    printf '%-55s %s\n' "$(basename "$p")" "MODULE MISSING ($m: run go mod download)"; failed+=("$p"); continue
  fi
  if out=$(patch --dry-run --batch --forward -p1 -d "$dir" -i "$PWD/$p" 2>&1); then
    printf '%-55s %s\n' "$(basename "$p")" "applies to $m $ver"
  else
    printf '%-55s %s\n' "$(basename "$p")" "DOES NOT APPLY to $m $ver"
    echo "$out" | grep -E 'FAILED|Reversed|can.t find' | sed 's/^/    /'
    failed+=("$p")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "${#failed[@]} patch(es) to re-derive (or drop where upstream now does the same) before the module tests can run."
  exit 1
fi
unset GOWORK
build/patch-upstream.sh _output/upstream || exit 1
echo "== upstream module tests against our beehive"
build/conformance.sh
