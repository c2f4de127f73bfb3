#!/usr/bin/env bash
# On a GPU machine without bubblewrap, from devbuild/: what the CUDA driver needs of Landlock
# as it starts inside a confined PyTorch worker. CUDA's start under the worker's rules with
# one more path allowed (every right beneath it), without Landlock's scopes, and, where strace
# is installed, the file and socket calls refused under the worker's own rules.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/device_env.sh
probe=/tmp/landlock-probe
mkdir -p "$probe" && chmod 0700 "$probe"
python3 -c "import ctypes; print('landlock ABI', ctypes.CDLL(None).syscall(444, None, 0, 1))"
start() {  # the extra runner arguments
  # shellcheck disable=SC2068
  devbuild/kforge-runner confine --allow-processes --gpu --scratch "$probe" --layers-fd 3 --without seccomp $@ -- \
    python3 -c "import torch; torch.zeros(1, device='cuda').add_(1); torch.cuda.synchronize(); print('cuda ok')" 3>/dev/null 2>&1 |
    tail -1
}
for extra in "" "--landlock-unscoped" "--landlock-allow /" "--landlock-allow /proc" "--landlock-allow /dev" \
  "--landlock-allow /sys" "--landlock-allow /tmp" "--landlock-allow /run"; do
  echo "landlock ${extra:-(as a worker)}: $(start $extra)"
done
# Which of /proc: each top-level entry alone (the numbered ones: init's and our own parent's).
if [ "${PROC_ENTRIES:-1}" = 1 ]; then
  for entry in $(ls /proc | grep -v -E '^[0-9]+$') 1 $$; do
    r=$(start --landlock-allow "/proc/$entry")
    case "$r" in *"cuda ok"*) echo "landlock --landlock-allow /proc/$entry: cuda ok";; esac
  done
  echo "(other /proc entries alone: CUDA does not start)"
fi
if command -v strace >/dev/null; then
  strace -f -e trace=%file,%network,%ipc,ioctl -o "$OUT/strace.txt" \
    devbuild/kforge-runner confine --allow-processes --gpu --scratch "$probe" --layers-fd 3 --without seccomp -- \
    python3 -c "import torch; torch.zeros(1, device='cuda')" 3>/dev/null >/dev/null 2>&1
  echo "== refused calls under a worker confinement"
  grep -E "EACCES|EPERM" "$OUT/strace.txt" | grep -v -E "ENOENT" | head -40
else
  echo "no strace here"
fi
