#!/usr/bin/env bash
# Every unit of src/ (a .cc or .cu file that is not a test) has a row in src/README.md's
# table "Every unit", every row names a unit that exists, and every test a row names exists.
# A unit without a test of its own beside it (foo_test.cc) must name, in its row's last
# column, at least one test file that covers it; only fuzz targets (*_fuzzer.cc, themselves
# tests) and the test helpers (testing/) need none. Exit 1 naming each problem.
set -euo pipefail
cd "$(dirname "$0")/../src"
bad=0
problem() { echo "$1"; bad=1; }
rows=$(sed -n '/^## Every unit/,$p' README.md | grep '^| `' || true)
# unit <TAB> last column, one per row.
table=$(awk -F' [|] ' '{u = $1; sub(/^[|] `/, "", u); sub(/`.*/, "", u); t = $NF; sub(/ [|]$/, "", t); print u "\t" t}' <<<"$rows")
while IFS=$'\t' read -r unit _; do
  [[ -f "$unit" ]] || problem "src/README.md has a row for $unit, which does not exist"
done <<<"$table"
while IFS= read -r unit; do
  tested_by=$(awk -F'\t' -v u="$unit" '$1 == u {print $2}' <<<"$table")
  if [[ -z "$(awk -F'\t' -v u="$unit" '$1 == u' <<<"$table")" ]]; then
    problem "src/$unit: not in src/README.md's table 'Every unit'; add a row (what it is, which test covers it)"
    continue
  fi
  [[ -f "${unit%.*}_test.cc" || "$unit" == *_fuzzer.cc || "$unit" == testing/* ]] && continue
  named=0
  for t in $(grep -oE '[A-Za-z0-9_/]+_test\.cc' <<<"$tested_by" || true); do
    if [[ -f "$t" ]]; then named=1; else problem "src/$unit: its row names $t, which does not exist"; fi
  done
  ((named)) || problem "src/$unit: has no ${unit%.*}_test.cc and its row names no test file that covers it"
done < <(find . \( -name '*.cc' -o -name '*.cu' \) ! -name '*_test.cc' | sed 's|^\./||' | sort)
exit $bad
