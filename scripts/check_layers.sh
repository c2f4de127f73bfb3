#!/usr/bin/env bash
# Every include points down: a file in src/<layer>/ includes only its own layer and the
# layers below it (src/README.md), and only tests include testing/. Exit 1 with each
# offending include named. app/ goes further: it reaches the engine through service/ only,
# so a command's code includes app/, service/ and core/ (its tests may include anything).
set -euo pipefail
cd "$(dirname "$0")/../src"
LAYERS=(core record exec verify agent engine service app)
rank() {
  local i
  for i in "${!LAYERS[@]}"; do [ "${LAYERS[$i]}" = "$1" ] && { echo "$i"; return; }; done
  [ "$1" = testing ] && { echo 99; return; }
  echo -1
}
bad=0
while IFS= read -r file; do
  layer="${file%%/*}"
  own=$(rank "$layer")
  while IFS=: read -r line inc; do
    target="${inc%%/*}"
    r=$(rank "$target")
    [ "$r" -lt 0 ] && continue  # not a kforge header
    if [ "$target" = testing ]; then
      case "$file" in *_test.cc | *_gpu_test.cc | *_fuzzer.cc | testing/*) continue ;; esac
      echo "src/$file:$line: includes testing/ (only tests may)"; bad=1
    elif [ "$layer" != testing ] && [ "$r" -gt "$own" ]; then
      echo "src/$file:$line: $layer/ includes $inc, a layer above it"; bad=1
    elif [ "$layer" = app ] && [ "$target" != app ] && [ "$target" != service ] && [ "$target" != core ]; then
      case "$file" in *_test.cc | *_gpu_test.cc) continue ;; esac
      echo "src/$file:$line: app/ includes $inc; commands reach $target/ through service/ (service/service.h)"; bad=1
    fi
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(find . -name '*.cc' -o -name '*.h' | sed 's|^\./||' | sort)
[ "$bad" -eq 0 ] && echo "layers: every include points down (${LAYERS[*]}); app/ reaches the rest through service/"
exit "$bad"
