"""On a GPU machine: which of PyTorch's profiler entry points imports torch._dynamo (seconds
of start-up), and whether the lower-level one still records kernels with their streams."""
import subprocess
import sys
import time

COMMON = (
    "import sys, time, json, torch\nx = torch.zeros(1, device='cuda'); torch.cuda.synchronize()\nt = time.monotonic()\n"
)
PATHS = {
    "torch.profiler.profile": (
        "from torch.profiler import ProfilerActivity, profile\n"
        "with profile(activities=[ProfilerActivity.CUDA]) as p:\n    x.fill_(1); torch.cuda.synchronize()\n"
        "p.export_chrome_trace('/tmp/t1.json'); tr = json.load(open('/tmp/t1.json'))\n"
    ),
    "autograd.profiler.profile": (
        "from torch.autograd.profiler import profile\n"
        "with profile(use_kineto=True, use_device='cuda', use_cpu=False) as p:\n    x.fill_(1); torch.cuda.synchronize()\n"
        "p.export_chrome_trace('/tmp/t2.json'); tr = json.load(open('/tmp/t2.json'))\n"
    ),
    "_enable_profiler": (
        "from torch.autograd import ProfilerConfig, ProfilerState, _enable_profiler, _disable_profiler, _prepare_profiler\n"
        "from torch._C._profiler import _ExperimentalConfig, ProfilerActivity\n"
        "c = ProfilerConfig(ProfilerState.KINETO, False, False, False, False, False, _ExperimentalConfig())\n"
        "acts = {ProfilerActivity.CUDA}\n_prepare_profiler(c, acts)\n_enable_profiler(c, acts)\n"
        "x.fill_(1); torch.cuda.synchronize()\nr = _disable_profiler(); r.save('/tmp/t3.json'); tr = json.load(open('/tmp/t3.json'))\n"
    ),
}
END = (
    "k = [e for e in tr.get('traceEvents', []) if e.get('cat') == 'kernel']\n"
    "print('%.2f s, dynamo imported: %s, kernels %d, streams %s' % (time.monotonic() - t, 'torch._dynamo' in sys.modules,"
    " len(k), sorted({e.get('args', {}).get('stream') for e in k}, key=str)))\n"
)
for name, code in PATHS.items():
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-c", COMMON + code + END], capture_output=True, text=True)
    tail = (r.stdout.strip().splitlines() or [""])[-1] if r.returncode == 0 else r.stderr.strip().splitlines()[-1]
    print(f"{name}: process {time.monotonic() - start:.2f} s; {tail}", flush=True)
