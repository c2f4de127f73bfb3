"""kforge's static check of KernelBench files, run in a trusted process that never imports them.

    python3 kforge_check_modelnew.py [--reference REF.py] [--candidate CAND.py] [--out FILE]

writes one JSON object (to FILE, or stdout): for the reference, whether it defines `Model`, `get_inputs` and
`get_init_inputs` and which module-level integer constants it has (the engine varies them
for other sizes); for the candidate, whether `ModelNew.forward` reaches a custom kernel, the
wrapper-integrity findings, and every `load_inline` call whose arguments can be read from
the source (string literals, or module-level names bound to them), which the engine builds
ahead of time. The allow-list of framework calls a forward may make is `PLUMBING` below;
everything else under `torch.`, `torch.nn.functional.` or a tensor method in `COMPUTE_METHODS`
computes the operator with the framework and is a finding.
"""
import ast
import json
import os
import sys
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(__file__))  # relative: the engine runs this from scratch
import eval_utils as kb  # noqa: E402

# Tensor plumbing a forward may do with the framework: allocation, views, layout, dtype,
# device moves, shape queries.
PLUMBING = {
    "empty",
    "empty_like",
    "empty_strided",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "full",
    "full_like",
    "tensor",
    "as_tensor",
    "from_numpy",
    "arange",
    "contiguous",
    "view",
    "reshape",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "permute",
    "transpose",
    "t",
    "expand",
    "expand_as",
    "narrow",
    "select",
    "split",
    "chunk",
    "size",
    "dim",
    "numel",
    "stride",
    "data_ptr",
    "is_contiguous",
    "to",
    "cuda",
    "cpu",
    "float",
    "half",
    "bfloat16",
    "double",
    "int",
    "long",
    "type",
    "new_empty",
    "new_zeros",
    "new_ones",
    "new_full",
    "item",
    "get_device",
    "element_size",
    "storage_offset",
    "device",
    "dtype",
    "is_cuda",
    "current_stream",
    "synchronize",
    "manual_seed",
    "Size",
    "no_grad",
    "inference_mode",
    "set_grad_enabled",
    "cdiv",
    "next_power_of_2",
    "is_floating_point",
    "detach",
}
# Tensor methods that compute (a call x.<name>(...) in forward is the framework's kernel).
COMPUTE_METHODS = {
    "add",
    "sub",
    "mul",
    "div",
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "einsum",
    "sum",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "exp",
    "log",
    "log1p",
    "expm1",
    "softmax",
    "log_softmax",
    "relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "sqrt",
    "rsqrt",
    "pow",
    "abs",
    "neg",
    "clamp",
    "clamp_min",
    "clamp_max",
    "clip",
    "norm",
    "var",
    "std",
    "cumsum",
    "cumprod",
    "prod",
    "sort",
    "topk",
    "where",
    "masked_fill",
    "add_",
    "sub_",
    "mul_",
    "div_",
    "relu_",
    "exp_",
    "clamp_",
    "copy_",
    "fill_",
    "zero_",
    "layer_norm",
    "conv1d",
    "conv2d",
    "conv3d",
    "linear",
    "dot",
    "outer",
    "logsumexp",
    "erf",
    "sin",
    "cos",
    "reciprocal",
    "square",
    "maximum",
    "minimum",
    "gather",
    "scatter",
    "index_select",
    "masked_select",
    "tril",
    "triu",
    "diag",
    "flip",
    "roll",
    "repeat",
    "repeat_interleave",
    "cat",
    "stack",
    "all",
    "any",
    "equal",
    "allclose",
    "isclose",
}
INTROSPECTION = {
    "inspect",
    "gc",
    "ctypes",
    "_getframe",
    "f_back",
    "f_locals",
    "f_globals",
    "globals",
    "locals",
    "vars",
    "__dict__",
    "__globals__",
    "__closure__",
    "get_referrers",
    "get_objects",
    "__builtins__",
    "__subclasses__",
}
DYNAMIC = {
    "exec",
    "eval",
    "compile",
    "__import__",
    "importlib",
    "open",
    "os",
    "pathlib",
    "io",
    "subprocess",
    "multiprocessing",
    "threading",
    "signal",
    "pickle",
    "marshal",
    "builtins",
    "shutil",
    "socket",
    "sys",
    "runpy",
}
TIMING = {"time", "perf_counter", "Event", "elapsed_time", "timeit"}
# Modules other modules hold as attributes (torch.os, numpy.sys): the same routes as importing them.
MODULE_ROUTES = {
    "os",
    "sys",
    "subprocess",
    "importlib",
    "builtins",
    "shutil",
    "socket",
    "runpy",
    "pickle",
    "marshal",
    "multiprocessing",
    "pathlib",
    "__import__",
    "posix",
    "_io",
}
# Files, module loading and code run at exit without open(), os or importlib: a candidate's
# process could rewrite its worker's report, read another worker's files or load the
# reference again through them. (Its worker seals its report and holds no reference; these
# are the first filter, with their message.)
FILE_ACCESS_MODULES = {
    "glob",
    "tempfile",
    "pkgutil",
    "zipimport",
    "linecache",
    "mmap",
    "fcntl",
    "posix",
    "_io",
    "fileinput",
    "codecs",
    "weakref",
    "atexit",
    "concurrent",
    "asyncio",
    "_thread",
    "shelve",
    "dbm",
    "sqlite3",
    "zipfile",
    "tarfile",
    "gzip",
    "bz2",
    "lzma",
    "resource",
    "platform",
}
FILE_ACCESS = {
    "tofile",
    "fromfile",
    "savetxt",
    "loadtxt",
    "genfromtxt",
    "memmap",
    "from_file",
    "write_bytes",
    "read_bytes",
    "write_text",
    "read_text",
    "finalize",
    "load_module",
    "exec_module",
    "get_importer",
    "find_spec",
    "find_module",
}
# The profiler records what every judged forward runs (the verdict's attribution): a
# candidate has no business with it.
PROFILER = {
    "profiler",
    "autograd_profiler",
    "_disable_profiler",
    "_disable_profiler_legacy",
    "_enable_profiler",
    "record_function",
    "_record_function_enter",
    "_record_function_exit",
    "RecordFunction",
    "_kineto_step",
    "kineto_available",
    "_profiler_enabled",
    "_is_profiler_enabled",
}
FRAMEWORK_ROOTS = {"torch", "F", "nn", "triton", "tl", "time", "math", "np", "numpy"}
# Methods that describe an object (printing a module calls them); judging never does.
DESCRIBING = {"extra_repr", "__repr__", "__str__", "__format__"}


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Checker:
    def __init__(self, source: str, path: str) -> None:
        self.findings = []
        self.tree = ast.parse(source, filename=path)
        self.aliases = {}  # local name -> dotted module/function it stands for
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = node.module + "." + a.name

    def find(self, check: str, detail: str, node: ast.AST | None) -> None:
        self.findings.append({"check": check, "detail": detail, "line": getattr(node, "lineno", 0)})

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name a call target stands for, with import aliases expanded."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.aliases:
            return self.aliases[head] + ("." + rest if rest else "")
        return name


def module_strings(tree: ast.Module) -> dict[str, Any]:
    """Module-level names bound to a string, a list of strings or a dict of strings."""
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                v = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                continue
            values[node.targets[0].id] = v
    return values


def literal(node: ast.AST, names: dict[str, Any]) -> tuple[bool, Any]:
    if isinstance(node, ast.Name):
        if node.id in names:
            return True, names[node.id]
        return False, None
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for e in node.elts:
            ok, v = literal(e, names)
            if not ok:
                return False, None
            out.append(v)
        return True, out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        ok1, a = literal(node.left, names)
        ok2, b = literal(node.right, names)
        if ok1 and ok2 and type(a) is type(b) and isinstance(a, (str, list)):
            return True, a + b
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return False, None


def load_inline_calls(c: "Checker") -> tuple[list[dict[str, Any]], list[int], set[str]]:
    names = module_strings(c.tree)
    extensions, unresolved, kernel_names = [], [], set()
    for node in ast.walk(c.tree):
        if not isinstance(node, ast.Call):
            continue
        target = c.resolve(node.func) or ""
        if not target.endswith("load_inline"):
            continue
        args, ok = {}, True
        for i, a in enumerate(node.args[: len(kb.LOAD_INLINE_POSITIONAL)]):
            good, v = literal(a, names)
            ok = ok and good
            args[kb.LOAD_INLINE_POSITIONAL[i]] = v
        for kw in node.keywords:
            if kw.arg in kb.KEY_ARGUMENTS:
                good, v = literal(kw.value, names)
                ok = ok and good
                args[kw.arg] = v
        if not ok or not isinstance(args.get("name"), str):
            unresolved.append(node.lineno)
            continue
        n = kb.normalise(args)
        extensions.append(kb.extension_entry(n, node.lineno))
    # Names the extension modules are bound to at module level: ext = load_inline(...)
    for node in c.tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if (c.resolve(node.value.func) or "").endswith("load_inline"):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        kernel_names.add(t.id)
    return extensions, unresolved, kernel_names


def triton_kernels(c: "Checker") -> set[str]:
    names = set()
    for node in ast.walk(c.tree):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                target = c.resolve(d.func if isinstance(d, ast.Call) else d) or ""
                if target.startswith("triton.") and (target.endswith(".jit") or target.endswith(".autotune")):
                    names.add(node.name)
    return names


def names_in(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            out.add("self." + n.attr)
    return out


def check_candidate(source: str, path: str) -> dict[str, Any]:
    c = Checker(source, path)
    extensions, unresolved, kernel_names = load_inline_calls(c)
    kernels = kernel_names | triton_kernels(c)
    functions = {n.name: n for n in c.tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in c.tree.body if isinstance(n, ast.ClassDef)}
    # Other classes reach a kernel through the code their instances run: an
    # autograd.Function through its forward (Function.apply calls it), a helper nn.Module
    # through its methods. Never through backward (judging runs no backward) or the methods
    # that only describe the object.
    for name, cls in classes.items():
        if name == "ModelNew":
            continue
        function = any((c.resolve(b) or "").endswith("autograd.Function") for b in cls.bases)
        kept = [
            m
            for m in cls.body
            if isinstance(m, ast.FunctionDef)
            and m.name not in DESCRIBING
            and m.name != "backward"
            and (not function or m.name == "forward")
        ]
        functions.setdefault(name, ast.Module(body=kept, type_ignores=[]))
    model_new = classes.get("ModelNew")
    if model_new is None:
        return {
            "ok": False,
            "problem": "the candidate defines no class ModelNew (KernelBench's format: "
            "class ModelNew(nn.Module) whose forward calls custom kernels)",
        }
    methods = {n.name: n for n in model_new.body if isinstance(n, ast.FunctionDef)}
    if "forward" not in methods:
        return {"ok": False, "problem": "ModelNew has no forward method"}
    # Module-level functions that reach a kernel (fixpoint; a function that calls load_inline
    # builds one, and a module-level name bound to what such a function returns holds one),
    # then ModelNew's attributes and methods.
    reaching = set(kernels)
    for name, fn in functions.items():
        if any(isinstance(n, ast.Call) and (c.resolve(n.func) or "").endswith("load_inline") for n in ast.walk(fn)):
            reaching.add(name)
    changed = True
    while changed:
        changed = False
        for name, fn in functions.items():
            if name not in reaching and names_in(fn) & reaching:
                reaching.add(name)
                changed = True
        for node in c.tree.body:
            if isinstance(node, ast.Assign) and names_in(node.value) & reaching:
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in reaching:
                        reaching.add(t.id)
                        changed = True
    init = methods.get("__init__")
    framework_layers = set()
    if init is not None:
        for node in ast.walk(init):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        builds = isinstance(node.value, ast.Call) and (c.resolve(node.value.func) or "").endswith(
                            "load_inline"
                        )
                        if builds or names_in(node.value) & reaching:
                            reaching.add("self." + t.attr)
                        if isinstance(node.value, ast.Call):
                            target = c.resolve(node.value.func) or ""
                            if target.startswith("torch.nn.") and not target.endswith(
                                ("Parameter", "ParameterList", "ParameterDict", "Buffer")
                            ):
                                framework_layers.add("self." + t.attr)
    changed = True
    while changed:
        changed = False
        for name, fn in methods.items():
            if "self." + name not in reaching and names_in(fn) & reaching:
                reaching.add("self." + name)
                changed = True
    forward = methods["forward"]
    reaches = "self.forward" in reaching
    # ModelNew's methods judging never runs: those neither forward nor __init__ reaches, and
    # the ones that describe the object unless they format it (str(self), f"{self}").
    used = {"forward", "__init__"} & set(methods)
    for name, m in methods.items():  # named anywhere but in its own body (ModelNew.f(...), getattr(m, "f"))
        own = {id(n) for n in ast.walk(m)}
        if any(
            id(n) not in own
            and (isinstance(n, ast.Attribute) and n.attr == name or isinstance(n, ast.Constant) and n.value == name)
            for n in ast.walk(c.tree)
        ):
            used.add(name)
    changed = True
    while changed:
        changed = False
        for name, fn in methods.items():
            if name in used:
                for n in names_in(fn):
                    if n.startswith("self.") and n[5:] in methods and n[5:] not in used:
                        used.add(n[5:])
                        changed = True
    formats_self = any(
        isinstance(n, ast.FormattedValue)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        or isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ("str", "repr", "format", "print")
        and any(isinstance(a, ast.Name) and a.id == "self" for a in n.args)
        for name in used
        for n in ast.walk(methods[name])
    )
    never_run = {
        id(n)
        for name, m in methods.items()
        if name not in used and not (name in DESCRIBING and formats_self)
        for n in ast.walk(m)
    }
    if not reaches:
        c.find(
            "wrapper.no_custom_kernel",
            "ModelNew.forward reaches no custom kernel (a load_inline extension or a @triton.jit function)",
            forward,
        )
    # The code forward runs: its own methods and the module functions it reaches.
    body = [forward] + [
        m for n, m in methods.items() if n not in ("__init__", "forward") and "self." + n in names_in(forward)
    ]
    body += [functions[n] for n in reaching if n in functions and n not in kernels]
    for fn in body:
        for node in ast.walk(fn):
            if isinstance(node, ast.Try):
                c.find(
                    "wrapper.fallback",
                    "try/except in the code forward runs: a failing kernel must fail, " "not fall back",
                    node,
                )
            if isinstance(node, ast.Call):
                target = c.resolve(node.func) or ""
                last = (
                    target.rsplit(".", 1)[-1]
                    if target
                    else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
                )
                head = target.split(".", 1)[0]
                if (
                    target.startswith("torch.")
                    and last not in PLUMBING
                    and not target.startswith("torch.cuda.")
                    and last[:1].islower()
                ):
                    c.find("wrapper.framework_compute", f"{target}() computes with the framework in forward", node)
                elif (
                    isinstance(node.func, ast.Attribute)
                    and last in COMPUTE_METHODS
                    and head not in c.aliases
                    and head not in reaching
                    and not (head == "self" and target in reaching)
                ):
                    c.find("wrapper.framework_compute", f".{last}() is a framework op in forward", node)
                elif target in framework_layers:
                    c.find("wrapper.framework_compute", f"{target}(...) runs a torch.nn layer in forward", node)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                c.find("wrapper.framework_compute", "the @ operator is a framework matmul in forward", node)
    for node in ast.walk(c.tree):
        if id(node) in never_run:
            continue
        if isinstance(node, ast.Name) and node.id == "Model":
            c.find("wrapper.reference_call", "the candidate refers to the reference Model", node)
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                top = m.split(".")[0]
                if top in INTROSPECTION or top in DYNAMIC:
                    c.find(
                        "wrapper.forbidden_import", f"import {m}: the candidate may not inspect, spawn or open", node
                    )
                elif top in FILE_ACCESS_MODULES:
                    c.find(
                        "wrapper.file_access",
                        f"import {m}: files, module loading and exit hooks are not the " "candidate's",
                        node,
                    )
        elif name in FILE_ACCESS:
            c.find("wrapper.file_access", f"{name}: files, module loading and exit hooks are not the candidate's", node)
        elif name in PROFILER:
            c.find(
                "wrapper.profiler_tampering",
                f"{name}: the profiler that records what forward runs is not the " "candidate's to touch",
                node,
            )
        elif name in INTROSPECTION:
            c.find("wrapper.introspection", f"{name}: reading other objects' frames, globals or memory", node)
        elif isinstance(node, ast.Attribute) and name in MODULE_ROUTES:
            c.find(
                "wrapper.dynamic_code",
                f"{dotted(node) or name}: a module reached through another's attribute "
                "(torch.os, np.sys): no files, processes or dynamic code in a candidate",
                node,
            )
        elif isinstance(node, ast.Name) and name in DYNAMIC and node.id not in c.aliases:
            c.find("wrapper.dynamic_code", f"{name}: no dynamic code, files or processes in a candidate", node)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                if isinstance(t, (ast.Attribute, ast.Subscript)) and root_name(t) in FRAMEWORK_ROOTS | set(
                    k for k, v in c.aliases.items() if v.split(".")[0] in FRAMEWORK_ROOTS
                ):
                    c.find(
                        "wrapper.monkeypatch",
                        f"assigns into {dotted(t) or root_name(t)}: the framework, its "
                        "timers and events are not the candidate's to change",
                        node,
                    )
        if isinstance(node, ast.Call):
            target = c.resolve(node.func) or ""
            if target in ("setattr", "delattr") and node.args and root_name(node.args[0]) in FRAMEWORK_ROOTS:
                c.find("wrapper.monkeypatch", f"{target}() on the framework", node)
            if target.startswith("torch.cuda.") and target.rsplit(".", 1)[-1] in (
                "Stream",
                "stream",
                "set_stream",
                "ExternalStream",
                "StreamContext",
            ):
                c.find(
                    "wrapper.private_stream", f"{target}: work must run on the stream PyTorch considers current", node
                )
            if target.rsplit(".", 1)[-1] in ("Event", "elapsed_time") or target.startswith("time."):
                c.find("wrapper.timing", f"{target}: a candidate does not touch timers or events", node)
        if isinstance(node, ast.ClassDef):
            for b in node.bases:
                if (c.resolve(b) or "") == "torch.Tensor":
                    c.find(
                        "wrapper.tensor_subclass",
                        f"class {node.name} subclasses torch.Tensor: outputs must be " "plain materialised tensors",
                        node,
                    )
        if isinstance(node, ast.FunctionDef) and node.name in (
            "__torch_function__",
            "__torch_dispatch__",
            "__del__",
            "__getattr__",
            "__getattribute__",
        ):
            c.find("wrapper.tensor_subclass", f"{node.name}: hooks into the framework's dispatch", node)
    for line in unresolved:
        c.find(
            "wrapper.unresolved_extension",
            "load_inline's arguments are not string literals or module-level "
            "names bound to them, so kforge cannot build the extension before running the candidate",
            type("L", (), {"lineno": line})(),
        )
    return {
        "ok": True,
        "findings": c.findings,
        "extensions": extensions,
        "triton": bool(triton_kernels(c)),
        "reaches_kernel": reaches,
    }


def without_model(tree: ast.Module) -> str:
    """The reference as the candidate's worker gets it: what get_inputs() and get_init_inputs()
    need (imports, assignments, and the functions and classes they name, transitively), never
    Model nor anything only Model uses. The candidate's process draws its inputs from it and
    cannot run the reference: there is none to import, re-read or re-execute."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    needed, todo = set(), ["get_inputs", "get_init_inputs"]
    for n in tree.body:  # module-level statements run at import: what they name is needed
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += [x.id for x in ast.walk(n) if isinstance(x, ast.Name)]
    while todo:
        name = todo.pop()
        if name in needed or name not in defs or name == "Model":
            continue
        needed.add(name)
        todo += [x.id for x in ast.walk(defs[name]) if isinstance(x, ast.Name)]
    body = [
        n
        for n in tree.body
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or n.name in needed
    ]
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def check_reference(source: str, path: str) -> dict[str, Any]:
    tree = ast.parse(source, filename=path)
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    if missing:
        return {
            "ok": False,
            "problem": "the reference defines no "
            + ", ".join(missing)
            + " (KernelBench's format: class Model(nn.Module), get_inputs(), get_init_inputs())",
        }
    constants = {}
    inputs_source = without_model(tree)
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) is int
        ):
            constants[node.targets[0].id] = node.value.value
    return {"ok": True, "constants": constants, "inputs_source": inputs_source}


def guarded(fn: Callable[[str, str], dict[str, Any]], path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        return fn(source, path)
    except SyntaxError as e:
        return {"ok": False, "problem": f"{path} does not parse: {e.msg} (line {e.lineno})"}
    except (RecursionError, MemoryError, ValueError) as e:
        return {"ok": False, "problem": f"{path} cannot be analysed: {type(e).__name__}"}


def plain_arguments(args: Any) -> dict[str, Any] | None:
    """load_inline's arguments as a run of the candidate's module recorded them (untrusted):
    the normalised dict with every field of its type, or None."""
    if not isinstance(args, dict) or not isinstance(args.get("name"), str):
        return None
    lists = ("cpp_sources", "cuda_sources", "extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths")
    for key in lists:
        v = args.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            return None
    functions = args.get("functions")
    if functions is not None and not (
        isinstance(functions, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in functions.items())
    ):
        return None
    if args.get("with_cuda") not in (None, True, False) or not isinstance(
        args.get("with_pytorch_error_handling", True), bool
    ):
        return None
    return kb.normalise({k: args.get(k) for k in kb.KEY_ARGUMENTS if k in args})


def derive_extensions(text: str, path: str) -> dict[str, Any]:
    """The extensions to build from recorded load_inline calls (`text`, JSON): key and sources
    made here, in kforge's process, from the arguments alone (never taken from the run that
    recorded them)."""
    calls = json.loads(text)
    out = []
    for call in calls if isinstance(calls, list) else []:
        line = call.get("line") if isinstance(call, dict) else None
        n = plain_arguments(call.get("args")) if isinstance(call, dict) else None
        if isinstance(line, int) and n is not None:
            out.append(kb.extension_entry(n, line))
    return {"ok": True, "extensions": out}


def main(argv: list[str]) -> int:
    out = {}
    if "--derive" in argv:
        out["derived"] = guarded(derive_extensions, argv[argv.index("--derive") + 1])
    for flag, fn in (("--reference", check_reference), ("--candidate", check_candidate)):
        if flag in argv:
            out[flag[2:]] = guarded(fn, argv[argv.index(flag) + 1])
    if "--out" in argv:
        with open(argv[argv.index("--out") + 1], "w") as f:
            json.dump(out, f, ensure_ascii=True)
    else:
        json.dump(out, sys.stdout, ensure_ascii=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
