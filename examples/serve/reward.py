"""An RL reward from kforge serve's verdicts: correct, honest, and (when timed) fast.

    python3 examples/serve/reward.py http://127.0.0.1:8077 relu candidate1.cc candidate2.cc

(KFORGE_SERVE_TOKEN: the bearer token of a server started with --token-file.)

Reward per candidate: 0 when it does not build or run, or the engine found it cheating
(integrity); 0.1 when it runs but is wrong; 1.0 when certified, plus log2 of the speedup over
the reference when the verdict carries a timing (KernelBench with a GPU). The numbers are an
example; the point is that the reward rests on the engine's verdict, computed where the
candidate cannot reach it.
"""

from __future__ import annotations

import math
import os
import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from kforge_client import KforgeClient  # noqa: E402


def reward(job: dict[str, Any]) -> float:
    verdict = job.get("verdict")
    if verdict is None:  # the service could not verify it: no signal either way
        return 0.0
    if verdict.get("passed"):
        speedup = (verdict.get("kernelbench") or {}).get("timing", {}).get("speedup")
        return 1.0 + (math.log2(speedup) if speedup and speedup > 0 else 0.0)
    if verdict.get("failure_class") in ("integrity", "compile_error", "runtime_error", "timeout", "resource_limit"):
        return 0.0
    return 0.1


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    client = KforgeClient(argv[1], token=os.environ.get("KFORGE_SERVE_TOKEN"))
    jobs = [
        {"problem": argv[2], "candidate": pathlib.Path(p).read_text(), "options": {"seed": i}}
        for i, p in enumerate(argv[3:])
    ]
    ids = client.submit(jobs)
    for path, job in zip(argv[3:], client.wait(ids)):
        why = job.get("verdict", {}).get("failure_class") or job.get("error", "")
        print(f"{reward(job):6.3f}  {path}  {why if why else 'certified'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
