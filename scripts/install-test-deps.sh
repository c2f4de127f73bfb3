#!/usr/bin/env bash
# Installs what only the test suite needs (scripts/test.sh runs it after install-deps.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

# The official MCP TypeScript SDK's client drives `kforge mcp` in src/app/mcp_e2e_test.cc:
# installed with `npm ci` from the committed lockfile (versions and integrity hashes pinned),
# again only when the lockfile changes.
CLIENT_SRC="$ROOT/src/app/mcp_client"
CLIENT="$ROOT/third_party/mcp-client"
LOCK_SUM="$(sha256sum "$CLIENT_SRC/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$CLIENT/LOCK_SHA256" 2>/dev/null)" != "$LOCK_SUM" ]; then
  rm -rf "$CLIENT"
  mkdir -p "$CLIENT"
  cp "$CLIENT_SRC/package.json" "$CLIENT_SRC/package-lock.json" "$CLIENT/"
  (cd "$CLIENT" && npm ci --silent --no-audit --no-fund >/dev/null)
  echo "$LOCK_SUM" > "$CLIENT/LOCK_SHA256"
fi

# Debian's Chromium renders kforge's HTML report headless in src/app/report_e2e_test.cc.
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
fi

# A single-node Slurm (Debian 12's slurmctld, slurmd and munge) for `kforge experiment
# --executor slurm` in src/app/experiment_e2e_test.cc: installed, configured and started here
# (no systemd needed). Without root the test says it skips, and why.
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge
fi
if [ "$(id -u)" -eq 0 ]; then
  "$ROOT/scripts/slurm_single_node.sh" start
else
  sudo -n "$ROOT/scripts/slurm_single_node.sh" start || echo "install-test-deps: no root; the Slurm test will skip"
fi
