#!/usr/bin/env bash
# Fails, listing the files, when a C++ source of the tree is not as clang-format-14 (pinned
# in .clang-format) would write it. Fix with: scripts/check_format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$fmt" ]; then
  echo "clang-format is not installed (apt-get install clang-format); scripts/install-deps.sh installs it" >&2
  exit 1
fi
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'src/*.cu' 'bench/*.cc' 'include/*.h' 2>/dev/null || find src bench include -name '*.cc' -o -name '*.h' -o -name '*.cu')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "not formatted (run scripts/check_format.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "clang-format: ${#files[@]} files clean"
