#!/usr/bin/env bash
# Keeps the container runtime the release bundles current: the Makefile's
# CONTAINERD_VERSION, HCSSHIM_VERSION and CNI_PLUGINS_VERSION, and the
# sandbox image join pins (config.WindowsSandboxImage).
#
#   build/bump-runtime.sh --check   reports what the Go module proxy serves
#                                   that is newer; fails when the bundle is
#                                   behind within its own lines (a newer
#                                   patch of its containerd minor, a newer
#                                   hcsshim or CNI plugins release, a newer
#                                   pause image than the newest containerd's
#                                   default), and names newer containerd
#                                   minors without failing: moving to
#                                   another line is a decision
#                                   (docs/runtime.md says how it was made).
#   build/bump-runtime.sh           moves the Makefile to the newest patch
#                                   of its containerd line and the newest
#                                   hcsshim and CNI plugins releases.
#
# Only releases count (no -rc, -beta), and only those whose programs can be
# built from the proxy: a release that needs a module the proxy does not
# serve (hcsshim v0.15.0's shim needs github.com/Microsoft/cosesign1go,
# which it refuses) is named and passed over. The sandbox image has no registry
# here to ask, so its reference is the default sandbox image of the newest
# containerd release the proxy serves (internal/cri/config in its module),
# which containerd's maintainers move to each new pause release.
# When the proxy cannot be reached it says so and changes nothing; --check
# then passes, since an offline build cannot know.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOWORK=off GOFLAGS=-mod=mod

mk() { awk -v k="$1" '$1 == k && $2 == ":=" { print $3 }' Makefile; }
containerd=$(mk CONTAINERD_VERSION) hcsshim=$(mk HCSSHIM_VERSION) cni=$(mk CNI_PLUGINS_VERSION)
sandbox=$(sed -n 's/^const WindowsSandboxImage = "\(.*\)"$/\1/p' config/validate.go)
[ -n "$containerd" ] && [ -n "$hcsshim" ] && [ -n "$cni" ] && [ -n "$sandbox" ] ||
  { echo "bump-runtime: the Makefile's runtime versions or config.WindowsSandboxImage were not found" >&2; exit 1; }

# newer A B: whether version B is above A (tags of one image compare as versions).
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "${1#v}" "${2#v}" | sort -V | tail -1)" = "${2#v}" ]; }
# served MODULE: the release versions the proxy serves, oldest first.
served() { (cd /tmp && go list -m -versions "$1" 2>/dev/null) | tr ' ' '\n' | tail -n +2 | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V; }
# buildable MODULE VERSION PKG: whether PKG of MODULE at VERSION resolves,
# every package it imports for windows/amd64 served by the proxy.
buildable() {
  local mod rc=0; mod=$(mktemp -d)
  ( cd "$mod" && go mod init bump-check >/dev/null 2>&1 && go get "$1@$2" >/dev/null 2>&1 &&
    GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go list -deps "$3" >/dev/null 2>"$mod.err" ) || rc=1
  [ $rc = 0 ] || why=$(grep -m1 -E 'reading|not available|cannot find' "$mod.err" 2>/dev/null | sed 's/^[[:space:]]*//' || true)
  rm -rf "$mod" "$mod.err"
  return $rc
}
# newest MODULE PKG HAVE: the newest served release above HAVE that builds,
# else HAVE; the releases passed over are named on stderr.
newest() {
  local v best=$3
  for v in $(served "$1" | tac); do
    newer "$3" "$v" || break
    if buildable "$1" "$v" "$2"; then best=$v; break; fi
    echo "note: $1 $v is served but cannot be built here: ${why:-a module it needs is not served}" >&2
  done
  echo "$best"
}
# line VERSION: its major.minor.
line() { echo "$1" | sed -E 's/^(v[0-9]+\.[0-9]+)\..*/\1/'; }

ctrd_all=$(served github.com/containerd/containerd/v2) || true
if [ -z "$ctrd_all" ]; then
  echo "bump-runtime: the Go module proxy does not answer (GOPROXY=$(go env GOPROXY)); nothing checked" >&2
  exit 0
fi
ctrd_patch=$containerd
for v in $(echo "$ctrd_all" | grep -F "$(line "$containerd")." | tac); do
  newer "$containerd" "$v" || break
  if buildable github.com/containerd/containerd/v2 "$v" github.com/containerd/containerd/v2/cmd/containerd; then ctrd_patch=$v; break; fi
  echo "note: containerd $v is served but cannot be built here: ${why:-a module it needs is not served}" >&2
done
ctrd_top=$(echo "$ctrd_all" | tail -1)
hcs_new=$(newest github.com/Microsoft/hcsshim github.com/Microsoft/hcsshim/cmd/containerd-shim-runhcs-v1 "$hcsshim")
cni_new=$(newest github.com/containernetworking/plugins github.com/containernetworking/plugins/plugins/main/windows/win-bridge "$cni")

# The pause image the newest containerd release defaults to.
ctrd_dir=$(cd /tmp && go mod download -json "github.com/containerd/containerd/v2@$ctrd_top" 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin).get("Dir",""))' || true)
pause_new=""
if [ -n "$ctrd_dir" ]; then
  pause_new=$(sed -n 's/^[[:space:]]*DefaultSandboxImage = "\(.*\)"$/\1/p' "$ctrd_dir/internal/cri/config/config.go" | head -1)
fi

behind=0
report() { # COMPONENT HAVE WANT WHY
  if newer "$2" "$3"; then echo "$1: $2 is bundled; $3 is served ($4)"; behind=1; else echo "$1: $2 is the newest ($4)"; fi
}
report "containerd" "$containerd" "$ctrd_patch" "the newest patch of its $(line "$containerd") line"
report "hcsshim" "$hcsshim" "$hcs_new" "the newest release that builds"
report "CNI plugins" "$cni" "$cni_new" "the newest release that builds"
if [ -n "$pause_new" ]; then
  report "sandbox image" "${sandbox##*:}" "${pause_new##*:}" "containerd $ctrd_top's default is $pause_new"
else
  echo "sandbox image: $sandbox (containerd $ctrd_top's default could not be read)"
fi
if newer "$(line "$containerd").999" "$ctrd_top"; then
  echo "note: containerd $(echo "$ctrd_all" | awk -v l="$(line "$containerd")" '{ split($0,a,"."); split(l,b,"."); if (a[2]+0 > b[2]+0) m[a[1]"."a[2]]=$0 } END { for (k in m) print m[k] }' | sort -V | tr '\n' ' ')is served on newer lines: moving to one is a decision (docs/runtime.md, \"Which containerd\")"
fi

if [ "${1:-}" = "--check" ]; then
  if [ $behind = 1 ]; then
    echo "the bundled runtime is behind what is served: run build/bump-runtime.sh (and update config.WindowsSandboxImage), then make runtime and docs/security.md's advisories" >&2
  fi
  exit $behind
fi

sed -i -E "s/^CONTAINERD_VERSION := .*/CONTAINERD_VERSION := $ctrd_patch/; s/^HCSSHIM_VERSION := .*/HCSSHIM_VERSION := $hcs_new/; s/^CNI_PLUGINS_VERSION := .*/CNI_PLUGINS_VERSION := $cni_new/" Makefile
echo "Makefile: containerd $ctrd_patch, hcsshim $hcs_new, CNI plugins $cni_new."
if [ -n "$pause_new" ] && newer "${sandbox##*:}" "${pause_new##*:}"; then
  echo "Next: set config.WindowsSandboxImage to $pause_new once its manifest list has every Windows build the README supports (preflight's table, internal/preflight)."
fi
echo "Next: make runtime, then list the advisories the new versions fix in docs/security.md."
