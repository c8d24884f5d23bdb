#!/usr/bin/env bash
# Says in one line which tools `make test` needs and this machine lacks, and
# which script installs them, before anything is built: a missing etcd used
# to surface only at the end-to-end step, fifty minutes into a cold run.
set -euo pipefail
missing=()
command -v go >/dev/null || missing+=("go (install Go 1.22 or later)")
for t in x86_64-w64-mingw32-gcc make gcc patch zip unzip etcd python3 git; do
  command -v "$t" >/dev/null || missing+=("$t")
done
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || missing+=(wine64)
if [ ${#missing[@]} -gt 0 ]; then
  echo "missing: ${missing[*]}; run build/deps.sh (it installs them with apt-get)" >&2
  exit 1
fi
