#!/usr/bin/env bash
# Every include points down: a file in src/<layer>/ includes only its own layer and the
# layers below it (src/README.md), and only tests include testing/. Exit 1 with each
# offending include named. app/ goes further: it reaches the engine through service/ only,
# so a command's code includes app/, service/ and core/ (its tests may include anything).
set -euo pipefail
cd "$(dirname "$0")/../src"
LAYERS="core record exec verify agent engine service app"
mapfile -t files < <(find . -name '*.cc' -o -name '*.h' | sed 's|^\./||' | sort)
# One awk over every include line of the tree (grep -Hn: file:line:#include "x/y.h").
grep -Hn '^#include "' "${files[@]}" | awk -v layers="$LAYERS" '
  BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i - 1; rank["testing"] = 99; bad = 0 }
  {
    split($0, part, ":"); file = part[1]; line = part[2]
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
    layer = file; sub(/\/.*/, "", layer)
    target = inc; sub(/\/.*/, "", target)
    if (!(target in rank)) next  # not a kforge header
    own = (layer in rank) ? rank[layer] : -1  # a folder that is no layer may include none
    test = (file ~ /_test\.cc$|_gpu_test\.cc$/)
    if (target == "testing") {
      if (test || file ~ /_fuzzer\.cc$/ || layer == "testing") next
      printf "src/%s:%s: includes testing/ (only tests may)\n", file, line; bad = 1
    } else if (layer != "testing" && rank[target] > own) {
      printf "src/%s:%s: %s/ includes %s, a layer above it\n", file, line, layer, inc; bad = 1
    } else if (layer == "app" && target != "app" && target != "service" && target != "core" && !test) {
      printf "src/%s:%s: app/ includes %s; commands reach %s/ through service/ (service/service.h)\n", file, line, inc, target; bad = 1
    }
  }
  END { exit bad }' || exit 1
echo "layers: every include points down ($LAYERS); app/ reaches the rest through service/"
