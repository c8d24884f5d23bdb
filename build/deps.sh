#!/usr/bin/env bash
# Installs what building edgecore.exe, running it under Wine and the
# end-to-end scenarios need on a Debian machine with Go already installed:
# the mingw C compiler (cgo builds go-sqlite3), Wine, make, patch (for
# patches/), zip and unzip (the release package; the previous release's
# binary is taken out of its rebuilt zip), etcd (the e2e cloud's store),
# python3 (reading go's JSON in build scripts) and git (the previous
# release is built from its commit);
# then fetches the Go modules. build/check-tools.sh names the same tools, so
# that `make test` says at once what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "Go is not installed: install Go 1.22 or later first" >&2; exit 1; }

need=()
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || need+=(wine64)
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
command -v patch >/dev/null || need+=(patch)
command -v zip >/dev/null || need+=(zip)
command -v unzip >/dev/null || need+=(unzip)
command -v etcd >/dev/null || need+=(etcd-server)
command -v python3 >/dev/null || need+=(python3)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
build/check-tools.sh

# KubeEdge's Kubernetes fork (k8s.io/* replaced by github.com/kubeedge/*)
# is not in the checksum database; go.sum pins its hashes instead.
export GONOSUMDB=${GONOSUMDB:-github.com/kubeedge}
GOWORK=off go mod download
(cd staging/src/github.com/kubeedge/beehive && GOWORK=off go mod download)
# The registry make containerd-test pulls from, a module of its own.
(cd test/registryd && GOWORK=off go mod download)
