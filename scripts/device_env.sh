# Sourced by the device_*.sh scripts, from the repository root: where devbuild/ (made by
# scripts/make_devbuild.sh) keeps kforge on a GPU machine, and $OUT for the results.
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/devbuild/devlibs:/usr/local/cuda/lib64:/usr/local/cuda/lib"
export KFORGE_SOURCE_DIR="$PWD" KFORGE_BINARY_DIR="$PWD/devbuild" KFORGE_CACHE_DIR=/tmp/kforge-cache
export KFORGE_DLPACK_INCLUDE="$PWD/devbuild/dlpack-include"
if ! command -v bwrap >/dev/null; then export KFORGE_SANDBOX=none; fi
