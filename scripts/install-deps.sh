#!/usr/bin/env bash
# Installs kforge's build and test dependencies from Debian 12's packages.
set -euo pipefail
PKGS=(g++ cmake ninja-build pkg-config git
      nlohmann-json3-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev
      libcli11-dev libfmt-dev libdlpack-dev libcpp-httplib-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      bubblewrap libseccomp-dev libtree-sitter-dev
      python3-torch libtorch-dev pybind11-dev
      clang clang-format black flake8)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# npm fetches the pinned tree-sitter grammar below; machines that already have Node.js
# from elsewhere keep it (Debian's npm conflicts with other nodejs builds).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA/C++ grammar for tree-sitter comes from npm, pinned by version and tarball hash.
# (tree-sitter-cuda 0.20.4 is generated for language ABI 14, the newest that Debian 12's
# libtree-sitter 0.20.7 reads; 0.21.x needs ABI 15.) A copy of another version is replaced.
GRAMMAR=tree-sitter-cuda
GRAMMAR_VERSION=0.20.4
GRAMMAR_SHA256=a366cadf11a663e6ade99338514ebc47b7081093474cd950fbeefa0a4726e763
DEST="$(cd "$(dirname "$0")/.." && pwd)/third_party/$GRAMMAR"
if [ "$(cat "$DEST/VERSION" 2>/dev/null)" != "$GRAMMAR_VERSION" ]; then
  rm -rf "$DEST"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$GRAMMAR@$GRAMMAR_VERSION" >/dev/null)
  echo "$GRAMMAR_SHA256  $tmp/$GRAMMAR-$GRAMMAR_VERSION.tgz" | sha256sum -c --quiet
  mkdir -p "$DEST"
  tar xzf "$tmp/$GRAMMAR-$GRAMMAR_VERSION.tgz" -C "$DEST" --touch --strip-components=1 package/src package/LICENSE
  echo "$GRAMMAR_VERSION" > "$DEST/VERSION"
  rm -rf "$tmp"
fi

