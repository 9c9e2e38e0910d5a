#!/bin/sh
# Prepares the peer for bench/peer/run.ts: Debian's Python packages it runs on, and the
# meta-human backend's source (examples/backend-python of github:LessUp/meta-human) extracted,
# untouched, into bench/peer/source/ (git-ignored: the peer's code is never committed here).
#
# Usage: bench/peer/setup.sh [SOURCE]
#   SOURCE  where meta-human comes from, one of
#           - a git directory of it, bare or not (e.g. a mirror fetched beforehand),
#           - a checkout of it (a folder holding examples/backend-python),
#           - a URL git can clone (default: https://github.com/LessUp/meta-human).
#           Without SOURCE an existing bench/peer/source/ is kept as it is.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
target="$here/source"
packages="python3-fastapi python3-uvicorn python3-pydantic python3-httpx python3-multipart python3-websockets python3-uvloop python3-httptools"

missing=""
for package in $packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "peer setup: installing from Debian:$missing" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get install -y --no-install-recommends $missing >&2
fi

source="${1:-}"
if [ -z "$source" ] && [ -f "$target/app/main.py" ]; then exit 0; fi
source="${source:-https://github.com/LessUp/meta-human}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -d "$source/examples/backend-python" ]; then
  cp -R "$source/examples/backend-python" "$work/backend-python"
  commit=$(git -C "$source" rev-parse HEAD 2>/dev/null || echo unknown)
else
  if ! git -C "$source" rev-parse --git-dir >/dev/null 2>&1; then
    echo "peer setup: cloning $source" >&2
    git clone --quiet --depth 1 "$source" "$work/clone"
    source="$work/clone"
  fi
  commit=$(git -C "$source" rev-parse HEAD)
  git -C "$source" archive HEAD examples/backend-python | tar -x -C "$work"
  mv "$work/examples/backend-python" "$work/backend-python"
fi
rm -rf "$target"
mv "$work/backend-python" "$target"
echo "$commit" > "$target/.meta-human-commit"
echo "peer setup: meta-human $commit in $target" >&2
