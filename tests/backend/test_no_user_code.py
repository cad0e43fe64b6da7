"""Promise 8: no code from users runs.

The app never evaluates a string, never unpickles what a user sent (only the pipe to its
own session processes is pickled, backend/pipe_pickle.py), and reads weights only with
`torch.load(weights_only=True)`. A static scan of the Python and JavaScript sources says so
(and fails the day someone adds an `eval` or a plain `torch.load`), and a run whose weights
are a crafted pickle is refused at the HTTP door without running it.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import pickle
import re
from pathlib import Path

import pytest
import torch

from backend.run_export import export_json
from tests.backend.saved_runs import make_run

ROOT = Path(__file__).resolve().parents[2]
PY_ROOTS = ("backend", "models", "bench")  # what runs on the server (tests may pickle)
JS_ROOT = ROOT / "frontend" / "js"

BANNED_CALLS = {"eval", "exec", "compile", "__import__", "breakpoint", "input"}
BANNED_MODULES = {"pickle", "cPickle", "dill", "cloudpickle", "marshal", "shelve", "jsonpickle"}
# module.attr calls that run code or unpickle whatever the bytes say.
BANNED_ATTRS = {
    ("os", "system"),
    ("os", "popen"),
    ("yaml", "load"),
    ("yaml", "unsafe_load"),
    ("yaml", "full_load"),
    ("pd", "read_pickle"),
    ("pandas", "read_pickle"),
    ("jit", "load"),  # torch.jit.load runs TorchScript from the file
    ("np", "fromfile"),
}
# The registry imports its own lab modules by the names pkgutil lists in its own package;
# the bench runner imports its scenarios from a constant table. Neither name comes from a user.
DYNAMIC_IMPORT_OK = {"backend/labs/__init__.py", "bench/__main__.py"}
# The pipe between the server and the session processes it forked itself (process mode):
# what it unpickles was pickled by the server's own child, never bytes from a user or the
# network (multiprocessing's Connection.recv, which it replaces, unpickles the same way).
PICKLE_OK = {"backend/pipe_pickle.py"}


def python_files() -> list[Path]:
    files = [p for r in PY_ROOTS for p in (ROOT / r).rglob("*.py") if ".venv" not in p.parts]
    assert len(files) > 20  # the scan really scans the code base
    return files


def _dotted(node: ast.AST) -> tuple[str, ...]:
    """`torch.jit.load` -> ("torch", "jit", "load"); anything else -> ()."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return tuple(reversed(parts))
    return ()


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def problems_in(source: str, rel: str) -> list[str]:
    """Every construct in one Python file that could run code from data."""
    out = []
    for node in ast.walk(ast.parse(source)):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            banned = BANNED_MODULES - ({"pickle"} if rel in PICKLE_OK else set())
            out += [f"{where} imports {a.name}" for a in node.names if a.name in banned]
        elif isinstance(node, ast.ImportFrom) and (node.module or "") in BANNED_MODULES:
            out.append(f"{where} imports from {node.module}")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "torch"
            and any(a.name == "load" for a in node.names)
        ):
            out.append(f"{where} imports torch.load by name (call it as torch.load)")
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if isinstance(node.func, ast.Name) and node.func.id in BANNED_CALLS:
            out.append(f"{where} calls {node.func.id}()")
        elif name[-2:] in BANNED_ATTRS:
            out.append(f"{where} calls {'.'.join(name)}()")
        elif name[-2:] == ("torch", "load"):
            if not _is_true(_kw(node, "weights_only")):
                out.append(f"{where} calls torch.load without weights_only=True")
        elif name[-1:] == ("load",) and name[:1] in (("np",), ("numpy",)):
            if _is_true(_kw(node, "allow_pickle")):
                out.append(f"{where} calls {'.'.join(name)}(allow_pickle=True)")
        elif name[:1] == ("subprocess",) and _is_true(_kw(node, "shell")):
            out.append(f"{where} runs a shell command line")
        elif (
            name[-1:] == ("import_module",)
            and rel not in DYNAMIC_IMPORT_OK
            and not (node.args and isinstance(node.args[0], ast.Constant))
        ):
            out.append(f"{where} imports a module named at run time")
    return out


def test_the_scanner_catches_each_way_to_run_code():
    """Break the promise once in each way: the scanner must notice."""
    bad = {
        "eval(text)": "calls eval",
        "exec(code)": "calls exec",
        "import pickle": "imports pickle",
        "from pickle import loads": "imports from pickle",
        "torch.load(f)": "without weights_only",
        "torch.load(f, weights_only=False)": "without weights_only",
        "yaml.load(s)": "yaml.load",
        "np.load(f, allow_pickle=True)": "allow_pickle",
        "subprocess.run(cmd, shell=True)": "shell",
        "importlib.import_module(name)": "run time",
        "os.system(cmd)": "os.system",
        "from torch import load": "by name",
    }
    for code, why in bad.items():
        found = problems_in(code, "x.py")
        assert found and why in found[0], (code, found)
    assert problems_in("torch.load(f, map_location='cpu', weights_only=True)", "x.py") == []
    assert problems_in("model.eval()\nyaml.safe_load(s)\nre.compile('x')", "x.py") == []
    assert problems_in("import pickle", "backend/pipe_pickle.py") == []  # its own child's bytes
    assert problems_in("import marshal", "backend/pipe_pickle.py") != []


def test_server_code_never_evaluates_or_unpickles():
    found = []
    for path in python_files():
        rel = path.relative_to(ROOT).as_posix()
        found += problems_in(path.read_text(encoding="utf-8"), rel)
    assert found == [], "code that could run user data:\n" + "\n".join(found)


def test_weights_are_read_only_with_weights_only():
    """The one place that reads weights (unpack_weights) says weights_only=True (and it is really reached)."""
    loads = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _dotted(node.func)[-2:] == ("torch", "load"):
                loads.append(path.relative_to(ROOT).as_posix())
    assert loads == ["backend/saved_run.py"]


JS_EVAL = re.compile(
    r"\beval\s*\(|\bnew\s+Function\s*\(|\bset(?:Timeout|Interval)\s*\(\s*['\"`]"
    r"|\.setAttribute\s*\(\s*['\"]on\w+|\bdocument\.write\s*\("
)


def test_frontend_never_evaluates_strings():
    files = list(JS_ROOT.rglob("*.js"))
    assert len(files) > 10
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in files
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if JS_EVAL.search(line)
    ]
    assert found == [], "string evaluation in the frontend:\n" + "\n".join(found)
    assert JS_EVAL.search("x = eval('1')") and JS_EVAL.search("setTimeout('go()', 1)")


class _Evil:
    """Unpickling this would create `path` (harmless, but visible)."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def _evil_payloads(marker: Path) -> dict[str, bytes]:
    buf = io.BytesIO()
    torch.save({"model": {"w": torch.ones(2)}, "x": _Evil(marker)}, buf)  # torch's zip, evil inside
    return {
        "plain pickle": pickle.dumps({"w": _Evil(marker)}, protocol=2),
        "torch zip with a pickled object": buf.getvalue(),
    }


@pytest.mark.parametrize("kind", ["plain pickle", "torch zip with a pickled object"])
def test_an_imported_run_with_pickled_weights_is_refused_unrun(client, tmp_path, kind):
    marker = tmp_path / "pwned"
    doc = export_json(make_run())
    doc["weights"] = base64.b64encode(_evil_payloads(marker)[kind]).decode()
    r = client.post("/api/runs/import", content=json.dumps(doc))
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith("weights:")
    assert not marker.exists()
    assert client.get("/api/runs").json() == []  # nothing was stored
