"""The two things kforge asks of torch's own load_inline, in a confined process of their own.

    python3 -I build_ext.py JOB.json        (writes the job's "out" file, JSON)

The engine runs this under the same confinement as a candidate's worker (CPU only, no GPU),
because both steps run what the candidate wrote:

- "resolve": a candidate whose load_inline arguments are not string literals (an f-string, a
  template filled in with .replace, a list joined at import) cannot be read without running
  it. Its module is executed with a stand-in load_inline that records each call's arguments
  (normalised as eval_utils does, with the line of the call) and returns a module whose
  functions cannot be called; then ModelNew is made on torch's meta device with the
  reference's init inputs, for extensions loaded in __init__. Out: {"calls": [{"line", "args":
  the normalised arguments}], "error": "what stopped the module, if anything"}. What is
  recorded is only ever data: kforge's checker makes the keys and sources from the arguments
  alone (kforge_check_modelnew.py --derive), the engine runs its static checks on them and
  builds them, and a candidate that loads something else when judged finds nothing built.
- "build": one extension built by torch.utils.cpp_extension.load_inline itself, for what
  kforge's own fast build does not take (include paths, linker flags, any flag load_inline
  passes on; kforge refuses what would run code of the candidate's at build time, since
  load_inline's build line goes through a shell). Out: {"so": path of the module}.

Standard library and torch only.
"""
import json
import os
import sys
import traceback
import types
from typing import Any, Callable, NoReturn

kb = None  # eval_utils, imported once the script's folder is on the path (main)


class NotCallableWhileResolving(types.ModuleType):
    """What the stand-in load_inline returns: any function read from it raises when called."""

    def __getattr__(self, attribute: str) -> Callable[..., NoReturn]:
        if attribute.startswith("__"):
            raise AttributeError(attribute)

        def unavailable(*args: Any, **kwargs: Any) -> NoReturn:
            raise RuntimeError("kforge: an extension's functions are not callable while its sources are read")

        return unavailable


def recording_load_inline(recorded: list[dict[str, Any]], candidate_path: str) -> Callable[..., types.ModuleType]:
    def load_inline(*args: Any, **kwargs: Any) -> types.ModuleType:
        call = dict(zip(kb.LOAD_INLINE_POSITIONAL, args))
        call.update({k: v for k, v in kwargs.items() if k in kb.KEY_ARGUMENTS})
        # The candidate's own line that made the call (through helpers of its own, the
        # innermost one in its file).
        line, frame = 0, sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == candidate_path:
                line = frame.f_lineno
                break
            frame = frame.f_back
        n = kb.normalise(call)
        recorded.append({"line": line, "args": n})
        return NotCallableWhileResolving(n["name"] or "extension")

    return load_inline


def resolve(job: dict) -> dict:
    import torch
    import torch.utils.cpp_extension as real

    recorded: list = []
    # Every other name the candidate may import from it (include_paths, CUDA_HOME, ...) is
    # the real module's.
    stand_in = types.ModuleType("torch.utils.cpp_extension")
    stand_in.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
    stand_in.load_inline = recording_load_inline(recorded, job["candidate"])
    sys.modules["torch.utils.cpp_extension"] = stand_in
    torch.utils.cpp_extension = stand_in
    error = ""
    try:
        reference = kb_load("ref_arch", job["reference"])
        candidate = kb_load("custom_model", job["candidate"])
        if hasattr(candidate, "ModelNew"):
            meta = torch.device("meta")
            if hasattr(meta, "__enter__"):  # torch 2: parameters made without memory
                with meta:
                    candidate.ModelNew(*reference.get_init_inputs())
            else:
                candidate.ModelNew(*reference.get_init_inputs())
    except BaseException as e:  # whatever stopped it: what was recorded until then stands
        error = "".join(traceback.format_exception_only(type(e), e)).strip()[-400:]
    return {"calls": recorded, "error": error}


def kb_load(name: str, path: str) -> types.ModuleType:
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def build(job: dict) -> dict:
    from torch.utils.cpp_extension import load_inline

    n = job["extension"]
    where = os.path.abspath(job["build_directory"])
    os.makedirs(where, exist_ok=True)
    load_inline(
        name=n["name"],
        cpp_sources=n["cpp_sources"],
        cuda_sources=n["cuda_sources"] or None,
        functions=n["functions"],
        extra_cflags=n["extra_cflags"],
        extra_cuda_cflags=n["extra_cuda_cflags"],
        extra_ldflags=n["extra_ldflags"],
        extra_include_paths=n["extra_include_paths"],
        with_cuda=n["with_cuda"],
        with_pytorch_error_handling=n["with_pytorch_error_handling"],
        build_directory=where,
        verbose=True,
    )
    return {"so": os.path.join(job["build_directory"], n["name"] + ".so")}


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: build_ext.py JOB.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        job = json.load(f)
    os.remove(argv[1])  # the candidate's code has no business with the job
    out = job["out"]
    try:
        result = resolve(job) if job["mode"] == "resolve" else build(job)
    except BaseException as e:
        result = {"error": "".join(traceback.format_exception_only(type(e), e)).strip()[-2000:]}
    with open(out + ".tmp", "w") as f:
        json.dump(result, f)
    os.rename(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))  # relative: the engine runs this from scratch
    import eval_utils as kb

    sys.exit(main(sys.argv))
