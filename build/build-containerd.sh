#!/usr/bin/env bash
# build-containerd.sh VERSION OUT: builds containerd's daemon for Linux at
# VERSION from the Go module proxy, in its own module graph (its go.mod
# has exclude directives, so `go install pkg@version` refuses it): the
# client's version for the image import test, the bundle's (a v2) for the
# registry test (make containerd-test). Without cgo and without the btrfs,
# devmapper, zfs and aufs snapshotters, which need C headers; the tests
# use the native snapshotter.
set -euo pipefail
version=$1 out=$(realpath -m "$2")
export GOWORK=off GOFLAGS=-mod=mod
module=github.com/containerd/containerd
case $version in v1.*) ;; *) module=$module/${version%%.*} ;; esac
dir=$(go mod download -json "$module@$version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
src=$(mktemp -d)
trap 'chmod -R u+w "$src"; rm -rf "$src"' EXIT
cp -r "$dir/." "$src"
chmod -R u+w "$src"
mkdir -p "$(dirname "$out")"
(cd "$src" && CGO_ENABLED=0 go build -trimpath -tags no_btrfs,no_devmapper,no_zfs,no_aufs \
  -ldflags "-X $module/version.Version=$version -X $module/version.Package=$module" -o "$out.part" ./cmd/containerd)
mv "$out.part" "$out"
if [ "$(go env GOOS)" = "$(GOOS= go env GOOS)" ]; then "$out" --version; fi
