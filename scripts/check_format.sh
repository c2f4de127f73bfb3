#!/usr/bin/env bash
# Fails, listing the files, when a C++ or CUDA source of the tree is not as clang-format-14
# (pinned in .clang-format) would write it, or kforge's own Python is not as Debian's black
# writes it (pyproject.toml) or has what flake8 finds (.flake8). Fix the layout with:
# scripts/check_format.sh --fix (flake8's findings are mended by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$fmt" ]; then
  echo "clang-format is not installed (apt-get install clang-format); scripts/install-deps.sh installs it" >&2
  exit 1
fi
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'src/*.cu' 'bench/*.cc' 'include/*.h' 2>/dev/null || find src bench include -name '*.cc' -o -name '*.h' -o -name '*.cu')
# kforge's Python; the KernelBench corpora keep their authors' styles (pyproject.toml).
mapfile -t py < <(git ls-files '*.py' | grep -v '^examples/kernelbench/')
for tool in black flake8; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install $tool); scripts/install-deps.sh installs it" >&2; exit 1; }
done
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  black -q "${py[@]}"
  exit 0
fi
py_bad=0
black -q --check "${py[@]}" || { echo "Python not formatted (run scripts/check_format.sh --fix)" >&2; py_bad=1; }
flake8 "${py[@]}" || py_bad=1
bad=()
# One clang-format for the whole tree (a process a file took two minutes on 2 cores); the
# files are named one by one only when it finds something.
if ! "$fmt" --dry-run --Werror "${files[@]}" >/dev/null 2>&1; then
  for f in "${files[@]}"; do
    "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
fi
if ((${#bad[@]})); then
  echo "not formatted (run scripts/check_format.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
[ "$py_bad" -eq 0 ] || exit 1
echo "clang-format: ${#files[@]} files clean; black and flake8: ${#py[@]} Python files clean"
