#!/usr/bin/env bash
# Every unit of src/ (a .cc file that is not a test) has a row in src/README.md's table
# "Every unit", and every test file a row names exists. A unit without a test of its own
# beside it (foo_test.cc) must say in its row which test covers it. Exit 1 naming each
# unit or test that is missing.
set -euo pipefail
cd "$(dirname "$0")/../src"
bad=0
rows=$(sed -n '/^## Every unit/,$p' README.md | grep '^| `' || true)
while IFS= read -r unit; do
  row=$(grep -F "| \`$unit\` |" <<<"$rows" || true)
  if [[ -z "$row" ]]; then
    echo "src/$unit: not in src/README.md's table 'Every unit'; add a row (what it is, which test covers it)"
    bad=1
    continue
  fi
  tested_by=$(awk -F' \\| ' '{print $NF}' <<<"$row")
  if [[ ! -f "${unit%.cc}_test.cc" && "$tested_by" != *_test.cc* && "$tested_by" != *"fuzz target"* &&
        "$tested_by" != *"test helpers"* ]]; then
    echo "src/$unit: has no ${unit%.cc}_test.cc and its row names no test that covers it"
    bad=1
  fi
done < <(find . -name '*.cc' ! -name '*_test.cc' | sed 's|^\./||' | sort)
# Every test a row names is there.
while IFS= read -r t; do
  [[ -f "$t" ]] || { echo "src/README.md names $t, which does not exist"; bad=1; }
done < <(grep -o '`[a-z_/0-9]*_test\.cc`' <<<"$rows" | tr -d '`' | sort -u)
exit $bad
