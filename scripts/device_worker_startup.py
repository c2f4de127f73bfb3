"""On a GPU machine: where a KernelBench worker's start-up goes (import torch, the CUDA
context, the profiler's first use, the meta device's first use), each step timed in a fresh
process, and the modules each imports (python -X importtime). Results to stdout."""
import subprocess
import sys
import time

STEPS = {
    "import_torch": "import torch",
    "cuda_context": "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()",
    "profiler": (
        "import torch; torch.zeros(1, device='cuda')\n"
        "from torch.profiler import ProfilerActivity, profile\n"
        "with profile(activities=[ProfilerActivity.CUDA]):\n"
        "    torch.zeros(1, device='cuda').fill_(1); torch.cuda.synchronize()"
    ),
    "meta_device": ("import torch\nwith torch.device('meta'):\n" "    torch.nn.ReLU()(torch.rand(16, 16384))"),
}
for name, code in STEPS.items():
    for attempt in range(2):
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", code], check=True)
        print(f"{name}: {time.monotonic() - start:.2f} s (whole process, attempt {attempt + 1})", flush=True)
for name in ("profiler", "meta_device"):
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", STEPS[name]], capture_output=True, text=True)
    rows = []
    for line in r.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    total = sum(us for us, mod in rows if not mod.startswith(" "))
    print(f"-- {name}: top-level imports {total / 1e6:.2f} s; largest cumulative:")
    for us, mod in sorted(rows, reverse=True)[:12]:
        print(f"   {us / 1e6:7.2f} s {mod}")
