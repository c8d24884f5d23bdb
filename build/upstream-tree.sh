#!/usr/bin/env bash
# Extracts upstream KubeEdge's git tree at a release tag into DIR, as
# upstream builds its releases from: with its staging/ modules (beehive,
# api) and vendor/.
#   build/upstream-tree.sh GIT TAG COMMIT DIR
# GIT is a local clone (a mirror) or a URL, cloned then (the tag only). The
# tag must be COMMIT. A mirror may lack the largest blobs; one under vendor/
# is taken from the Go module cache (the module and version vendor/modules.txt
# names) and accepted only when its git blob id is the tree's, so the tree is
# upstream's either way; one outside vendor/ that no build reads (not Go, C
# or a module file) is left out and named.
set -euo pipefail
src=${1:?usage: build/upstream-tree.sh GIT TAG COMMIT DIR} tag=${2:?tag} commit=${3:?commit} dst=${4:?dir}

rm -rf "$dst" "$dst.git"
mkdir -p "$dst"
if [ ! -d "$src" ]; then
  git clone -q --bare --depth 1 --branch "$tag" "$src" "$dst.git"
  src=$dst.git
fi
got=$(git -C "$src" rev-parse "$tag^{commit}")
[ "$got" = "$commit" ] || { echo "$src: tag $tag is commit $got, not $commit as pinned (UPSTREAM_TAG_COMMIT in the Makefile)" >&2; exit 1; }

# Blobs of the tree the repository does not hold.
tree=$(mktemp)
trap 'rm -f "$tree"' EXIT
git -C "$src" ls-tree -r "$commit" 2>/dev/null | awk '$2 == "blob" { print $3, $4 }' > "$tree"
missing=$(cut -d' ' -f1 "$tree" | git -C "$src" cat-file --batch-check | awk '$2 == "missing" { print $1 }')
excludes=()
fill=()
for id in $missing; do
  path=$(awk -v id="$id" '$1 == id { print $2 }' "$tree" | head -n 1 || true)
  case $path in
    vendor/*) fill+=("$id $path") ;;
    *.go|*.c|*.h|*.s|go.mod|go.sum|*/go.mod|*/go.sum) echo "$src lacks $path ($id), which the build reads" >&2; exit 1 ;;
    *) echo "upstream-tree: $src lacks $path ($id); left out, no build reads it" >&2 ;;
  esac
  excludes+=(":(exclude)$path")
done
git -C "$src" archive "$commit" -- . "${excludes[@]}" | tar -x -C "$dst"

for entry in "${fill[@]}"; do
  id=${entry%% *} path=${entry#* }
  rel=${path#vendor/}
  # The longest module of vendor/modules.txt that holds the file, and the
  # module@version it comes from (its replacement's, if replaced).
  read -r mod from < <(awk '$1 == "#" && NF >= 3 { print $2, ($4 == "=>" ? $5 "@" $6 : $2 "@" $3) }' "$dst/vendor/modules.txt" |
    awk -v p="$rel" 'index(p, $1 "/") == 1 && length($1) > n { n = length($1); m = $0 } END { print m }')
  [ -n "${mod:-}" ] || { echo "no module of vendor/modules.txt holds $path" >&2; exit 1; }
  dir=$(cd / && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$from" | awk -F'"' '$2 == "Dir" { print $4 }')
  file=$dir/${rel#"$mod"/}
  [ -f "$file" ] || { echo "$from in the module cache has no ${rel#"$mod"/}" >&2; exit 1; }
  [ "$(git hash-object "$file")" = "$id" ] || { echo "$file is not upstream's $path (blob $id)" >&2; exit 1; }
  cp "$file" "$dst/$path"
  chmod u+w "$dst/$path"
  echo "upstream-tree: $path from $from in the module cache (blob $id, as the tree has it)"
done
rm -rf "$dst.git"
