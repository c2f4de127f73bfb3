#!/usr/bin/env bash
# Installs kforge's build and test dependencies from Debian 12's packages.
set -euo pipefail
PKGS=(g++ cmake ninja-build pkg-config git
      nlohmann-json3-dev libsqlite3-dev libcurl4-openssl-dev libssl-dev
      libcli11-dev libfmt-dev libspdlog-dev libdlpack-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      bubblewrap libseccomp-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
