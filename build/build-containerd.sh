#!/usr/bin/env bash
# build-containerd.sh VERSION OUT: builds containerd's daemon for Linux at
# VERSION (the Makefile's CONTAINERD_VERSION, the release bundle's) from
# the Go module proxy, in its own module graph (its go.mod has exclude
# directives, so `go install pkg@version` refuses it), for the image import
# and registry tests against the containerd the release ships (make
# containerd-test). Without cgo and without the btrfs, devmapper, zfs and
# aufs snapshotters, which need C headers; the tests use the native
# snapshotter. Stamped with VERSION as build/runtime.sh stamps the Windows
# build, so that its Version API answers the bundle's version.
set -euo pipefail
version=$1 out=$(realpath -m "$2")
# containerd's module path carries its major version from 2 on.
major=${version#v}
major=${major%%.*}
module=github.com/containerd/containerd
[ "$major" -lt 2 ] || module=$module/v$major
export GOWORK=off GOFLAGS=-mod=mod
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
