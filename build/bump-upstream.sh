#!/usr/bin/env bash
# Moves the build to the upstream releases named in build/upstream-versions:
# requires them in go.mod, restates upstream KubeEdge's replace directives
# (a dependency's replaces do not apply to the modules that import it), then
# lets go mod tidy settle the rest of the graph. With --check it changes
# nothing and fails when go.mod does not require what the file names.
#
# What it cannot do is said at the end: patches/ are re-derived by hand
# (make upstream-check lists those that no longer apply, and the upstream
# module tests that fail against our beehive).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=/dev/null
. build/upstream-versions
export GOWORK=off GOFLAGS=-mod=mod
# The fork's tags are not in the public checksum database.
export GONOSUMDB=github.com/kubeedge

required() { go mod edit -json go.mod | python3 -c '
import json,sys
d=json.load(sys.stdin); want=sys.argv[1]
for r in d.get("Replace") or []:
    if r["Old"]["Path"]==want: print(r["New"].get("Version","")); sys.exit()
for r in d.get("Require") or []:
    if r["Path"]==want: print(r["Version"]); sys.exit()' "$1"; }

if [ "${1:-}" = "--check" ]; then
  bad=0
  for pair in "github.com/kubeedge/kubeedge=$KUBEEDGE" "k8s.io/kubernetes=$KUBERNETES_FORK" "github.com/kubeedge/api=$KUBEEDGE_API"; do
    m=${pair%%=*} want=${pair#*=}
    got=$(required "$m")
    [ "$got" = "$want" ] || { echo "go.mod builds $m $got, build/upstream-versions names $want: run build/bump-upstream.sh" >&2; bad=1; }
  done
  exit $bad
fi

go mod download "github.com/kubeedge/kubeedge@$KUBEEDGE" "github.com/kubeedge/kubernetes@$KUBERNETES_FORK" "github.com/kubeedge/api@$KUBEEDGE_API"
upstream=$(go mod download -json "github.com/kubeedge/kubeedge@$KUBEEDGE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
python3 - "$upstream" "$KUBEEDGE" "$KUBEEDGE_API" <<'PY'
import re, sys
upmod, ke, api = sys.argv[1:4]
up = open(upmod).read()
block = up[up.index("replace ("):]
block = block[:block.index("\n)")+2]
# Upstream builds its api and beehive from its own tree: the api from the
# proxy, the beehive from ours.
block = re.sub(r"\tgithub.com/kubeedge/api => .*\n", "\tgithub.com/kubeedge/api => github.com/kubeedge/api " + api + "\n", block)
block = re.sub(r"\tgithub.com/kubeedge/beehive => .*\n", "\tgithub.com/kubeedge/beehive => ./staging/src/github.com/kubeedge/beehive\n", block)
block = block.replace(" // indirect", "")
s = open("go.mod").read()
start = s.index("// The packages below")
keep = s[start:s.index("replace (", start)]
# Our own replaces that upstream does not have stay: they are listed in
# the block's head comment lines starting with "// ours:" (none today
# besides the modules the proxy lacks, written below).
s = s[:start] + keep + block + s[s.index("\n)", s.index("replace (", start)) + 2:]
open("go.mod", "w").write(s)
PY
# Modules of the fork the proxy does not serve: the nearest Kubernetes
# release it does serve (only the e2e kube-apiserver and
# kube-controller-manager use them).
fork_minor=$(echo "$KUBERNETES_FORK" | sed -E 's/^v1\.([0-9]+)\..*/\1/')
for m in kube-aggregator externaljwt kube-controller-manager metrics endpointslice; do
  if ! go mod download "github.com/kubeedge/kubernetes/staging/src/k8s.io/$m@$KUBERNETES_FORK" >/dev/null 2>&1; then
    v=$(go list -m -versions "k8s.io/$m" | tr ' ' '\n' | grep -E "^v0\.$fork_minor\.[0-9]+$" | sort -V | while read -r c; do
          go mod download "k8s.io/$m@$c" >/dev/null 2>&1 && echo "$c"; done | awk -v top="$(echo "$KUBERNETES_FORK" | sed -E 's/^v1\.([0-9]+\.[0-9]+).*/v0.\1/')" '
          { split($0,a,"."); split(top,b,"."); if (a[3]+0 <= b[3]+0) best=$0 } END { print best }')
    [ -n "$v" ] || { echo "no release of k8s.io/$m v0.$fork_minor.x is served: the e2e kube-apiserver or kube-controller-manager cannot be built" >&2; exit 1; }
    go mod edit -replace "k8s.io/$m=k8s.io/$m@$v"
    echo "k8s.io/$m: the fork's is not served; using Kubernetes' $v"
  fi
done
go get "github.com/kubeedge/kubeedge@$KUBEEDGE" "github.com/kubeedge/api@$KUBEEDGE_API" "k8s.io/kubernetes@${KUBERNETES_FORK%%-*}"
# -e: some test-only imports of dependencies name modules the proxy no
# longer serves; the packages this module builds all resolve.
go mod tidy -e 2>&1 | grep -v '^go: downloading' || true
echo "go.mod now builds KubeEdge $KUBEEDGE on $KUBERNETES_FORK (api $KUBEEDGE_API)."
echo "Next: make upstream-check (patches that no longer apply, upstream module tests that fail against our beehive)."
