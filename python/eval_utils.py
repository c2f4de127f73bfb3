"""What kforge's trusted checker and its PyTorch worker agree on about KernelBench files.

A `load_inline` call is built by kforge before any candidate code runs: the checker reads the
call's arguments from the source (string literals, or module-level names bound to them),
the engine compiles the extension in its compile sandbox and caches it by `extension_key`,
and the worker's `load_inline` loads the prebuilt module whose key matches the arguments it
is called with. Both sides compute the key here, from the same normalised arguments.

Standard library only: the checker runs without importing torch.
"""
import hashlib
import json
from typing import Any

# load_inline's leading parameters, in the order a positional call gives them.
LOAD_INLINE_POSITIONAL = (
    "name",
    "cpp_sources",
    "cuda_sources",
    "functions",
    "extra_cflags",
    "extra_cuda_cflags",
    "extra_ldflags",
    "extra_include_paths",
)

# The load_inline arguments that decide what is built (build_directory, verbose and the
# like do not).
KEY_ARGUMENTS = LOAD_INLINE_POSITIONAL + ("with_cuda", "with_pytorch_error_handling")


def normalise(args: dict[str, Any]) -> dict[str, Any]:
    """The load_inline arguments as plain JSON values, in load_inline's own defaults."""

    def strings(v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        return [str(s) for s in v]

    def flags(v: Any) -> list[str]:
        # As load_inline's build sees them: joined into one command line, so an empty string
        # is nothing and "-x c++" is two arguments.
        return [t for f in strings(v) for t in f.split()]

    functions = args.get("functions")
    if isinstance(functions, str):
        functions = {functions: functions}
    elif isinstance(functions, (list, tuple)):
        functions = {f: f for f in functions}
    elif functions is not None:
        functions = {str(k): str(v) for k, v in dict(functions).items()}
    return {
        "name": str(args.get("name", "")),
        "cpp_sources": strings(args.get("cpp_sources")),
        "cuda_sources": strings(args.get("cuda_sources")),
        "functions": functions,
        "extra_cflags": flags(args.get("extra_cflags")),
        "extra_cuda_cflags": flags(args.get("extra_cuda_cflags")),
        "extra_ldflags": flags(args.get("extra_ldflags")),
        "extra_include_paths": strings(args.get("extra_include_paths")),
        "with_cuda": args.get("with_cuda"),
        "with_pytorch_error_handling": bool(args.get("with_pytorch_error_handling", True)),
    }


def extension_key(normalised: dict[str, Any]) -> str:
    text = json.dumps(normalised, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def main_cpp(n: dict[str, Any]) -> str:
    """main.cpp as torch.utils.cpp_extension.load_inline writes it."""
    lines = ["#include <torch/extension.h>"] + list(n["cpp_sources"])
    if n["functions"] is not None:
        lines.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for name, doc in n["functions"].items():
            if n["with_pytorch_error_handling"]:
                lines.append('m.def("{0}", torch::wrap_pybind_function({0}), "{1}");'.format(name, doc))
            else:
                lines.append('m.def("{0}", {0}, "{1}");'.format(name, doc))
        lines.append("}")
    return "\n".join(lines)


def thunks_cpp(n: dict[str, Any]) -> str:
    """main.cpp with kforge's bindings (include/kforge/torch_thunks.h) in place of pybind11's,
    or "" when load_inline's are needed: no `functions`, or a name that is not an identifier."""
    names = list(n["functions"] or [])
    if not names or not all(f.isidentifier() and f.isascii() for f in names):
        return ""
    return "\n".join(
        ["#include <torch/extension.h>"] + list(n["cpp_sources"]) + ["KFORGE_THUNK({0})".format(f) for f in names]
    )


def cuda_cu(n: dict[str, Any]) -> str:
    """cuda.cu as load_inline writes it ("" without CUDA sources)."""
    if not n["cuda_sources"]:
        return ""
    return "\n".join(
        ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] + list(n["cuda_sources"])
    )


def extension_entry(n: dict[str, Any], line: int) -> dict[str, Any]:
    """One extension as the checker reports it to the engine: what kforge builds, keyed."""
    return {
        "key": extension_key(n),
        "name": n["name"],
        "line": line,
        "main_cpp": main_cpp(n),
        "thunks_cpp": thunks_cpp(n),
        "functions": list(n["functions"] or []),
        "cuda_cu": cuda_cu(n),
        "extra_cflags": n["extra_cflags"],
        "extra_cuda_cflags": n["extra_cuda_cflags"],
        "extra_ldflags": n["extra_ldflags"],
        "extra_include_paths": n["extra_include_paths"],
        "normalised": n,
    }
