#!/usr/bin/env bash
# Builds the container runtime the release bundles, for windows/amd64, from
# the Go module proxy with this machine's Go and CGO_ENABLED=0:
#   containerd and ctr       github.com/containerd/containerd/v2  CONTAINERD_VERSION
#   the runhcs shim          github.com/Microsoft/hcsshim         HCSSHIM_VERSION
#   win-bridge, win-overlay, github.com/containernetworking/plugins CNI_PLUGINS_VERSION
#   host-local
# Each is a program of its own with its own module graph, so each is built
# in a throwaway module that requires only it (the build list is the one its
# go.mod gives, as with `go install pkg@version`) and never in this
# project's go.mod. Output: OUT/<component>-<version>/*.exe; a component
# whose directory is complete is not rebuilt, so bumping one version
# rebuilds only that one.
set -euo pipefail
out=${1:?usage: build/runtime.sh OUTPUT_DIR}
: "${CONTAINERD_VERSION:?}" "${HCSSHIM_VERSION:?}" "${CNI_PLUGINS_VERSION:?}"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# build NAME VERSION MODULE LDFLAGS PACKAGE...: the packages of MODULE at
# VERSION into OUT/NAME-VERSION, each named after its last path element.
build() {
  local name=$1 version=$2 module=$3 ldflags=$4; shift 4
  local dest="$out/$name-$version" pkg missing=0
  for pkg in "$@"; do [ -s "$dest/$(basename "$pkg").exe" ] || missing=1; done
  if [ $missing = 0 ]; then echo "$name $version: cached in $dest"; return; fi
  local mod; mod=$(mktemp -d)
  # Subshell: the trap-free cleanup below runs whatever the build's outcome.
  (
    cd "$mod"
    export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOOS=windows GOARCH=amd64
    go mod init runtime-build >/dev/null 2>&1
    go get "$module@$version" >/dev/null
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    for pkg in "$@"; do
      go build -trimpath -buildvcs=false -ldflags "-s -w $ldflags" -o "$dest.tmp/$(basename "$pkg").exe" "$pkg"
    done
  ) || { rm -rf "$mod" "$dest.tmp"; echo "building $name $version failed" >&2; exit 1; }
  rm -rf "$mod" "$dest" && mv "$dest.tmp" "$dest"
  echo "$name $version: built in $dest"
}

ctrd=github.com/containerd/containerd/v2
build containerd "$CONTAINERD_VERSION" $ctrd \
  "-X $ctrd/version.Version=$CONTAINERD_VERSION -X $ctrd/version.Package=$ctrd" \
  $ctrd/cmd/containerd $ctrd/cmd/ctr
build hcsshim "$HCSSHIM_VERSION" github.com/Microsoft/hcsshim \
  "-X main.version=$HCSSHIM_VERSION" \
  github.com/Microsoft/hcsshim/cmd/containerd-shim-runhcs-v1
cni=github.com/containernetworking/plugins
build cni-plugins "$CNI_PLUGINS_VERSION" $cni \
  "-X $cni/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
  $cni/plugins/main/windows/win-bridge $cni/plugins/main/windows/win-overlay $cni/plugins/ipam/host-local
