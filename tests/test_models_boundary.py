"""models/ is pure torch: nothing under it imports the backend, fastapi or pydantic (static)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("backend", "fastapi", "pydantic", "starlette", "uvicorn")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an `import` or `from ... import` in the file names, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and getattr(
            node.func, "attr", getattr(node.func, "id", "")
        ) in (
            "import_module",
            "__import__",
        ):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append((node.lineno, arg.value))
    return found


def test_models_import_nothing_from_the_backend_or_the_web_stack():
    files = sorted((ROOT / "models").rglob("*.py"))
    assert files, "no model files found"
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in files
        for line, name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN
    ]
    assert not bad, "models/ must stay pure torch:\n" + "\n".join(bad)


def test_the_check_sees_a_forbidden_import(tmp_path):
    """The parser finds the import forms a model file could use (so the test above can fail)."""
    src = tmp_path / "m.py"
    src.write_text(
        "import torch\nfrom backend.labs import base\nimport pydantic as p\n"
        "def f():\n    import fastapi\n    return importlib.import_module('backend.x')\n"
    )
    names = [name for _, name in imported_modules(src)]
    assert names == ["torch", "backend.labs", "pydantic", "fastapi", "backend.x"]
