"""On a GPU machine: what asking get_inputs() for its shapes costs a fresh worker, by way
(torch.device("meta") as a context, a factory call on the meta device, the worker's own
shape-only mode), and which import chain brings in torch._dynamo if one does. Each way in a
fresh process after `import torch`; beside them, what importing torch.utils.cpp_extension
(which the candidate's worker patches) and the CUDA context cost. Results to stdout."""
import subprocess
import sys

PRELUDE = "import sys, time, torch\nstart = time.perf_counter()\n"
CODA = (
    "\nprint('%.3f s' % (time.perf_counter() - start), "
    "'dynamo imported' if 'torch._dynamo' in sys.modules else 'no dynamo', "
    "'sympy imported' if 'sympy' in sys.modules else 'no sympy')\n"
)
WAYS = {
    "device_context": "with torch.device('meta'):\n    x = torch.rand(16, 16384)",
    "device_context_arithmetic": "with torch.device('meta'):\n    x = torch.rand(16, 16384) * 2 + 1",
    "device_context_relu": "with torch.device('meta'):\n    x = torch.relu(torch.rand(16, 16384))",
    "meta_rand": "x = torch.rand(16, 16384, device='meta')",
    "meta_empty": "x = torch.empty(16, 16384, device='meta')",
    "shape_mode_draw": (
        "sys.path.insert(0, 'python')\nimport kforge_torch_worker as w\n"
        "with w.on_meta(torch):\n    x = [torch.rand(16, 16384), torch.randn(3)]\n"
        "print([(tuple(t.shape), t.dtype, t.device.type) for t in x])"
    ),
    "shape_mode": (
        "sys.path.insert(0, 'python')\nimport kforge_torch_worker as w\n"
        "with w.on_meta(torch):\n    x = [torch.rand(16, 16384), torch.randn(3) * 2 + 1]\n"
        "print([(tuple(t.shape), t.dtype, t.device.type) for t in x])"
    ),
    "cpp_extension": "import torch.utils.cpp_extension",
    "cuda_context": "torch.zeros(1, device='cuda'); torch.cuda.synchronize()",
}


def import_chain(stderr: str, module: str) -> str:
    """The chain of imports (python -X importtime) that led to `module`'s first import."""
    rows = []
    for line in stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            rows.append((len(name) - len(name.lstrip()), name.strip(), int(parts[1])))
    for i, (depth, name, us) in enumerate(rows):
        if name == module:
            chain, want = [(name, us)], depth
            for d, n, u in rows[i + 1 :]:  # importtime prints children before their parent
                if d < want:
                    chain.append((n, u))
                    want = d
            return " <- ".join(f"{n} ({u / 1e6:.2f} s)" for n, u in chain)
    return "not imported"


for name, code in WAYS.items():
    for attempt in range(2):
        r = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", PRELUDE + code + CODA], capture_output=True, text=True
        )
        print(f"{name} (attempt {attempt + 1}): {r.stdout.strip()}", flush=True)
        if r.returncode:
            print("  failed:", r.stderr.strip().splitlines()[-1])
        elif attempt == 0:
            print("  torch._dynamo:", import_chain(r.stderr, "torch._dynamo"))
