"""KernelBench's correctness procedure, as its eval.py (main, after v0.1) runs it, written
for kforge's agreement check: the reference and ModelNew in one process, weights under
torch.manual_seed(42), 5 trials with seeds torch.randint(0, 2**32 - 1) after
torch.manual_seed(42), torch.allclose with atol = rtol = 1e-4 (float32) or 1e-2 (half types).

    python3 kernelbench_procedure.py REFERENCE.py CANDIDATE.py

prints one JSON line: {"compiled", "correct", "trials": [...], "seconds"}. Torch's own
load_inline builds the extensions (no kforge involved), on the GPU when there is one.
"""
import json
import sys
import time
import types
from typing import Any

import torch


def load(path: str, name: str, namespace: dict[str, Any] | None = None) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = path
    if namespace:
        module.__dict__.update(namespace)
    sys.modules[name] = module
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), module.__dict__)
    return module


def seed(s: int) -> None:
    torch.manual_seed(s)
    torch.cuda.manual_seed(s)


def main(reference_path: str, candidate_path: str) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ref = load(reference_path, "kb_reference")
    seed(42)
    init_inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_init_inputs()]
    with torch.no_grad():
        seed(42)
        model = ref.Model(*init_inputs)
    out = {"compiled": False, "correct": False, "trials": []}
    try:
        cand = load(candidate_path, "kb_candidate", {"Model": ref.Model})
        with torch.no_grad():
            seed(42)
            model_new = cand.ModelNew(*init_inputs)
        out["compiled"] = True
    except Exception as e:  # KernelBench records this as a compilation failure
        out["error"] = repr(e)[:500]
        return out, start
    model, model_new = model.to(device), model_new.to(device)
    torch.manual_seed(42)
    seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(5)]
    with torch.no_grad():
        for s in seeds:
            seed(s)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
            seed(s)
            expected = model(*inputs)
            got = model_new(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
            tol = 1e-2 if expected.dtype in (torch.float16, torch.bfloat16) else 1e-4
            ok = got.shape == expected.shape and torch.allclose(expected, got, atol=tol, rtol=tol)
            out["trials"].append({"seed": s, "passed": bool(ok)})
    out["correct"] = all(t["passed"] for t in out["trials"])
    return out, start


if __name__ == "__main__":
    result, t0 = main(sys.argv[1], sys.argv[2])
    result["seconds"] = time.perf_counter() - t0
    print(json.dumps(result))
