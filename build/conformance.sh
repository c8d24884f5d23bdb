#!/usr/bin/env bash
# Runs upstream KubeEdge's own unit tests against our beehive: the tests of
# every upstream package whose test binary links beehive, compiled in the
# workspace (go.work), where github.com/kubeedge/beehive is this repository's
# staging/src/github.com/kubeedge/beehive and github.com/kubeedge/kubeedge is
# the patched upstream copy that carries those tests. A module that drives
# the bus directly in its tests (metamanager, edgehub, devicetwin, ...) can
# see any way in which our bus differs from upstream's; this is the check
# that it does not.
#
# The package list is derived, not kept by hand: `go list -test -deps=false`
# names each test variant with the packages it depends on, and a package is
# in when any of them is a beehive package (directly or through another
# upstream package), so a newer upstream brings its tests along. The roots
# are those upstream's own unit-test target uses (hack/lib/golang.sh):
# edge/pkg for the edge, pkg/metaserver for the metaserver it shares, and
# cloud without cloud/test/integration for the cloud. Edge and cloud are run
# and reported apart: edgecore for Windows ships the edge; cloudcore runs on
# our bus only in the end-to-end scenario. A failure in either fails the run.
#
# Inlining and optimisation are off for KubeEdge's own packages, because
# some tests patch KubeEdge functions at run time with gomonkey (without it
# cloudcore/app's TestNegotiateTunnelPort calls the real API client and
# panics). Upstream turns them off for "all"; limiting it to KubeEdge keeps
# the rest of the graph (Kubernetes above all) in the build cache the unit
# tests and builds fill, which saves a whole cold rebuild in CI. Without the
# race detector: see the beehive README.
set -euo pipefail
GCFLAGS='github.com/kubeedge/kubeedge/...=-N -l'
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f go.work ] || { echo "go.work is missing: run make workspace" >&2; exit 1; }
export GOWORK="$root/go.work"

upstream=github.com/kubeedge/kubeedge
bus=github.com/kubeedge/beehive
version=$(GOWORK=off go list -m -f '{{.Version}}' "$upstream")
out="$root/_output/conformance"
mkdir -p "$out"

# packages ROOT... prints, sorted, the upstream packages under the given
# package patterns whose tests link a beehive package.
packages() {
  go list -test -f '{{if .ForTest}}{{.ForTest}} {{join .Deps " "}}{{end}}' "$@" |
    awk -v bus="$bus/" '{ for (i = 2; i <= NF; i++) if (index($i, bus) == 1) { print $1; next } }' |
    sort -u
}

edge_pkgs=$(packages "$upstream/edge/pkg/..." "$upstream/pkg/metaserver/...")
cloud_pkgs=$(packages "$upstream/cloud/..." | grep -v "^$upstream/cloud/test/integration" || true)
[ -n "$edge_pkgs" ] || { echo "no edge package links $bus: the package query is broken" >&2; exit 1; }

# run NAME PACKAGES... runs the tests, writes the test2json events to
# $out/NAME.json and prints what they say; it fails if go test failed, if a
# test or package failed, or if a package is missing from the results.
#
# A test that failed is run once more, alone, before the run fails: some
# upstream tests race with themselves, with no bus in their path, when the
# machine is loaded (CI builds beside them on 2 cores; csidriver's
# TestSendWithBufferSizeLimit closes its server socket without reading the
# request, so the client's write fails when the close wins). The second
# run has one processor (-cpu 1): the goroutines of such a test then take
# turns at their blocking points, so its own race cannot decide it, while
# what the test asserts of the bus still must hold. No test is
# left out: one that passes only on the second run is named in the output
# ("passed on a second run"), and one that fails twice fails the run, as
# does a package that failed with no failed test (a build error, a crash
# outside a test).
run() {
  local name=$1
  shift
  echo "== $name: $# packages: go test -count=1 -gcflags '$GCFLAGS' (upstream $upstream $version, $bus from staging/)"
  local rc=0
  go test -count=1 -gcflags "$GCFLAGS" -json "$@" >"$out/$name.json" 2>"$out/$name.stderr" || rc=$?
  if [ -s "$out/$name.stderr" ]; then cat "$out/$name.stderr" >&2; fi
  report "$name" "$#" && return $rc
  retry "$name" || return 1
}

# retry NAME runs once more each top-level test that failed in
# $out/NAME.json, package by package; it fails if there is none to run (the
# failure was not a test's) or if any fails again.
retry() {
  local name=$1 pkg tests n=0
  local failed
  failed=$(failed_tests "$out/$name.json")
  [ -n "$failed" ] || return 1
  [ -z "$(packages_failed_without_test "$out/$name.json")" ] || return 1
  : >"$out/$name-again.json"
  while read -r pkg tests; do
    n=$((n + 1))
    echo "== $name: running again in $pkg: $tests"
    go test -count=1 -cpu 1 -gcflags "$GCFLAGS" -run "^(${tests// /|})\$" -json "$pkg" >>"$out/$name-again.json" 2>>"$out/$name.stderr" || true
  done <<<"$failed"
  report "$name-again" "$n" || return 1
  echo "== $name: passed on a second run (a race of the test's own; see build/conformance.sh):"
  sed 's/^/     /' <<<"$failed"
}

# failed_tests FILE prints, per package, the top-level tests that failed:
# "PACKAGE TEST TEST...".
failed_tests() {
  grep '"Action":"fail"' "$1" | grep '"Test":"' |
    sed -E 's/.*"Package":"([^"]*)".*"Test":"([^"]*)".*/\1 \2/' |
    awk '{ split($2, t, "/"); if (!seen[$1 " " t[1]]++) list[$1] = list[$1] " " t[1] }
         END { for (p in list) print p list[p] }'
}

# packages_failed_without_test FILE prints the packages that failed while
# none of their tests did.
packages_failed_without_test() {
  local pkg
  grep '"Action":"fail"' "$1" | grep -v '"Test":"' |
    sed -E 's/.*"Package":"([^"]*)".*/\1/' | sort -u |
    while read -r pkg; do
      grep -q "\"Action\":\"fail\",\"Package\":\"$pkg\",\"Test\"" "$1" || echo "$pkg"
    done
}

# report NAME WANT prints every package's result, the output of each failed
# package and the counts of packages and tests; it fails if anything failed
# or fewer than WANT packages reported a result.
report() {
  # test2json writes one object per line with no raw newline in any field,
  # so plain awk can pick the string fields out.
  awk -v name="$1" -v want="$2" '
    function field(key) {
      if (match($0, "\"" key "\":\"([^\"\\\\]|\\\\.)*\""))
        return substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 5)
      return ""
    }
    function unescape(s) {
      gsub(/\\n/, "\n", s); gsub(/\\t/, "\t", s); gsub(/\\"/, "\"", s)
      gsub(/\\u003c/, "<", s); gsub(/\\u003e/, ">", s); gsub(/\\u0026/, "\\&", s)
      gsub(/\\\\/, "\\", s)
      return s
    }
    {
      action = field("Action"); pkg = field("Package"); test = field("Test")
      # Compiler errors come as build-output events (Go 1.24 and later).
      if (action == "build-output") { build = build unescape(field("Output")); next }
      if (action == "output") { out[pkg] = out[pkg] unescape(field("Output")); next }
      if (action != "pass" && action != "fail" && action != "skip") next
      if (test == "") { result[pkg] = action; next }
      all[action]++
      if (index(test, "/") == 0) top[action]++
      if (action == "fail") failed[pkg] = failed[pkg] "    " test "\n"
    }
    END {
      n = 0; bad = 0
      for (p in result) {
        n++
        if (result[p] == "fail") bad++
        printf "%s %s\n", (result[p] == "fail" ? "FAIL" : result[p] == "skip" ? "skip" : "ok  "), p | "sort -b -k2"
      }
      close("sort -b -k2")
      if (build != "") printf "\n--- build output\n%s", build
      for (p in result) if (result[p] == "fail") {
        printf "\n--- output of %s\n%s", p, out[p]
        if (failed[p] != "") printf "--- failed tests of %s:\n%s", p, failed[p]
      }
      printf "== %s: %d packages (%d failed); %d tests: %d passed, %d failed, %d skipped (%d counting subtests: %d passed, %d failed, %d skipped)\n",
        name, n, bad, top["pass"] + top["fail"] + top["skip"], top["pass"], top["fail"], top["skip"],
        all["pass"] + all["fail"] + all["skip"], all["pass"], all["fail"], all["skip"]
      if (n < want) printf "== %s: only %d of %d packages reported a result\n", name, n, want
      exit (bad > 0 || all["fail"] > 0 || n < want)
    }' "$out/$1.json"
}

status=0
# shellcheck disable=SC2086 # the lists are whitespace-separated import paths
run edge $edge_pkgs || status=1
if [ -n "$cloud_pkgs" ]; then
  echo
  # shellcheck disable=SC2086
  run cloud $cloud_pkgs || status=1
fi
exit $status
