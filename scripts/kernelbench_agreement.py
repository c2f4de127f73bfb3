"""Agreement of kforge's KernelBench-compatible verdict with KernelBench's own procedure.

    python3 scripts/kernelbench_agreement.py [--gpu] [--out FILE] [--only SUBSTRING[,SUBSTRING...]]
                                             [--kforge PATH] [--jobs N]

For every case of examples/kernelbench/manifest.json ("cases" on the CPU, "gpu_cases" with
--gpu) that has a verdict to compare, runs scripts/kernelbench_procedure.py (KernelBench's
procedure: torch's own load_inline, both models in one process, no kforge) and `kforge
verify --json`, and prints one row a case: what the procedure said, kforge's
kernelbench.correct, whether they agree, and kforge's certified verdict beside them with its
policy and first integrity check. The last line counts the agreements. The procedure runs
the candidate unconfined, as KernelBench does: run it on the bundled corpus, not on files you
do not trust. --kforge names the binary (default build/kforge), --jobs runs that many cases at
once (rows keep the manifest's order); --gpu verifies with --backend cuda.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "kernelbench")


def procedure(reference: str, candidate: str, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        env = dict(os.environ, TORCH_EXTENSIONS_DIR=os.path.join(scratch, "ext"))
        try:
            p = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts", "kernelbench_procedure.py"), reference, candidate],
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                cwd=scratch,
            )
        except subprocess.TimeoutExpired:
            return {"compiled": False, "correct": False, "error": "timed out"}
    for line in reversed(p.stdout.splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {"compiled": False, "correct": False, "error": (p.stderr or "no output")[-200:]}


def kforge(binary: str, reference: str, candidate: str, case: dict[str, Any], gpu: bool) -> dict[str, Any]:
    args = [binary, "verify", reference, candidate, "--json", "--seed", "7"]
    if gpu:
        args += ["--backend", "cuda"]
    if "policy" in case:
        args += ["--kernelbench-policy", case["policy"]]
    if "timeout" in case:
        args += ["--timeout", case["timeout"]]
    if case.get("full"):
        args.append("--full")
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": p.stderr[-200:]}


def main(argv: list[str]) -> int:
    def option(name: str, default: str) -> str:
        return argv[argv.index(name) + 1] if name in argv else default

    gpu = "--gpu" in argv
    out = option("--out", None)
    only = [o for o in option("--only", "").split(",")]
    binary = os.path.abspath(option("--kforge", os.path.join(ROOT, "build", "kforge")))
    jobs = int(option("--jobs", "1"))
    manifest = json.load(open(os.path.join(EXAMPLES, "manifest.json")))
    header = (
        f"{'candidate':44} {'reference':30} {'procedure':10} {'kforge kb':10} {'agree':6} {'certified':9}"
        " policy    check"
    )
    print(header, flush=True)
    cases, seen = [], set()
    for case in manifest["gpu_cases" if gpu else "cases"]:
        if "exit" in case or not any(o in case["candidate"] for o in only):
            continue
        key = (case["reference"], case["candidate"])
        if key in seen:  # the same files under another policy: the benchmark's answer is the same
            continue
        seen.add(key)
        cases.append(case)

    def one(case: dict[str, Any]) -> tuple[Any, bool, str]:
        reference, candidate = os.path.join(EXAMPLES, case["reference"]), os.path.join(EXAMPLES, case["candidate"])
        started = time.time()
        kb = procedure(reference, candidate, 60 if "timeout" in case else 900)
        v = kforge(binary, reference, candidate, case, gpu)
        k = v.get("kernelbench") or {}
        theirs = bool(kb.get("compiled")) and bool(kb.get("correct"))
        ours = k.get("correct")
        same = ours is not None and bool(ours) == theirs
        check = (v.get("integrity") or [{}])[0].get("check", "") if not v.get("passed") else ""
        if v.get("error"):
            check = "kforge: " + v["error"].strip().splitlines()[-1][:80]
        row = (
            f"{case['candidate']:44} {case['reference']:30} {str(theirs):10} {str(ours):10} {str(same):6} "
            f"{str(v.get('passed')):9} {k.get('policy', '?'):9} {check}  ({time.time() - started:.0f} s)"
        )
        print(row, flush=True)
        return ours, same, row

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, cases))
    rows = [row for _, _, row in results]
    not_given = sum(1 for ours, _, _ in results if ours is None)  # kforge says why it cannot say: apart
    total = len(results) - not_given
    agree = sum(1 for ours, same, _ in results if ours is not None and same)
    summary = (
        f"agreement: {agree} of {total} given; {not_given} not given by kforge, with the reason in the verdict "
        f"({'GPU' if gpu else 'CPU'}, torch {__import__('torch').__version__})"
    )
    print(summary)
    if out:
        with open(out, "w") as f:
            f.write("\n".join([header] + rows + [summary]) + "\n")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
