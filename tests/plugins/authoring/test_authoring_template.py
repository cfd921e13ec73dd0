"""The cookiecutter template renders, installs into a fresh venv and passes its own tests."""

from __future__ import annotations

import json
import site
import subprocess
import sys
from pathlib import Path

import pytest
from cookiecutter.exceptions import CookiecutterException, FailedHookException
from cookiecutter.main import cookiecutter
from suite_paths import ROOT as ROOT_DIR

TEMPLATE = ROOT_DIR / "plugin_template"


def _run(args: list[str], cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _fresh_venv(path: Path) -> Path:
    """A venv that sees this interpreter's packages (atomic-host, pytest, setuptools) but
    installs into its own prefix, so the rendered plugin never leaks into the test env."""
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", "--without-pip", str(path)])
    python = path / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout
    # addsitedir (not a plain path line) so the parent's editable-install .pth files run too.
    lines = [f"import site; site.addsitedir({d!r})" for d in site.getsitepackages()]
    (Path(purelib.strip()) / "_atomic_parent.pth").write_text("\n".join(lines) + "\n")
    return python


def test_template_renders_installs_and_passes_its_tests(tmp_path: Path) -> None:
    out = Path(
        cookiecutter(
            str(TEMPLATE),
            no_input=True,
            output_dir=str(tmp_path),
            extra_context={"plugin_name": "Word Count", "description": "Count words", "author": "Tester"},
        )
    )
    assert out.name == "word-count"
    assert (out / "atomic_host_word_count" / "__init__.py").is_file()
    assert (out / "tests" / "test_word_count.py").is_file()
    pyproject = (out / "pyproject.toml").read_text()
    assert 'name = "atomic-host-word-count"' in pyproject
    assert '"atomic-host>=0.1,<1"' in pyproject
    assert '"word-count" = "atomic_host_word_count"' in pyproject

    python = _fresh_venv(tmp_path / "venv")
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "--no-compile",
            "-e",
            str(out),
        ],
    )

    listing = json.loads(_run([str(python), "-m", "atomic_host", "plugins", "--json"], cwd=tmp_path).stdout)
    mine = [p for p in listing["plugins"] if p["name"] == "word-count"]
    assert len(mine) == 1, listing["plugins"]
    assert mine[0]["source"] == "entrypoint"
    assert mine[0]["status"] == "loaded"
    assert mine[0]["version"] == "0.1"
    assert mine[0]["hooks"] == ["register_commands", "register_tools"]

    result = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=out)
    assert "3 passed" in result.stdout, result.stdout


def test_the_rendered_project_is_mit_like_the_host_and_keeps_derived_names_private(tmp_path: Path) -> None:
    context = json.loads((TEMPLATE / "cookiecutter.json").read_text())
    asked = set(context["__prompts__"])
    assert asked == {k for k in context if not k.startswith("_")} == {"plugin_name", "description", "author",
                                                                       "host_source"}  # fmt: skip
    answers = {"plugin_name": "Word_Count ", "description": "d", "author": "Ada"}
    out = Path(cookiecutter(str(TEMPLATE), no_input=True, output_dir=str(tmp_path), extra_context=answers))
    assert out.name == "word-count"
    license_text = (out / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "Ada" in license_text
    assert 'license = { text = "MIT" }' in (out / "pyproject.toml").read_text()
    assert (TEMPLATE.parent / "LICENSE").read_text().startswith("MIT License")
    readme = (out / "README.md").read_text()
    assert "pip install 'atomic-host'" in readme and "git+https" in readme


@pytest.mark.parametrize("name", ["", "123 go", "bad!name", "-dash", "ünïcode"])
def test_names_that_cannot_be_a_package_are_refused_before_anything_is_written(tmp_path: Path, name: str) -> None:
    # the pre-generation hook refuses them; an empty name already fails cookiecutter's own check
    with pytest.raises(CookiecutterException if name == "" else FailedHookException):
        cookiecutter(str(TEMPLATE), no_input=True, output_dir=str(tmp_path),
                     extra_context={"plugin_name": name, "description": "d", "author": "a"})  # fmt: skip
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_rendered_readme_development_steps_work_as_written(tmp_path: Path) -> None:
    """The generated README's shell block, run line by line in a clean venv, with atomic-host
    installed from this checkout (as a user does before it is on a package index)."""
    repo = TEMPLATE.parent
    out = Path(cookiecutter(str(TEMPLATE), no_input=True, output_dir=str(tmp_path),
                            extra_context={"plugin_name": "word count", "description": "d", "author": "a",
                                           "host_source": str(repo)}))  # fmt: skip
    block = (out / "README.md").read_text().split("## Development", 1)[1].split("```bash\n", 1)[1].split("```")[0]
    script = "set -e\n" + block
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "3 passed" in proc.stdout


def test_plugin_is_not_visible_outside_its_venv(tmp_path: Path) -> None:
    # Guards the isolation the test above relies on: this interpreter has no such entry point.
    listing = json.loads(
        _run([sys.executable, "-m", "atomic_host", "plugins", "--json", "--no-load"], cwd=tmp_path).stdout
    )
    assert "word-count" not in {p["name"] for p in listing["plugins"]}
