# Sourced by the scripts that run documented commands as a new user would:
# a fresh clone of this checkout's HEAD in a temporary directory (removed on
# exit), made the current directory, with rprof installed from it first on
# PATH and a cache of its own. Sets work and repo.
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/rprof"
cd "$work/rprof"
GOBIN="$work/bin" go install ./cmd/rprof
export PATH="$work/bin:$PATH"
export XDG_CACHE_HOME="$work/cache"
