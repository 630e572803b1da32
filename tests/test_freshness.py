"""Memories that know when the code moved on: real git repositories, deleted, renamed, rewritten, reverted and
switched files, a folder outside git, commands whose script went away, and the incremental check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Project, Source
from orcmem.rules.freshness import blob_id, command_program, named_symbols
from orcmem.service.memory_service import MemoryService

APP = "def load_config(path):\n    return read(path)\n\n\nclass SessionCache:\n    pass\n"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    (root / "README.md").write_text("# app\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "first")
    return root


def commit(root: Path, message: str) -> None:
    git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-am", message)


def commit_files(root: Path, files: dict[str, str], message: str) -> None:
    """Write `files` (path -> text) and commit them."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", ".")
    commit(root, message)


@pytest.fixture
def svc(orcmem_home: Path):
    service = MemoryService.open(orcmem_home)
    service.settings.set_enabled(True)
    yield service
    service.close()


def project_of(svc: MemoryService, root: Path) -> Project:
    project = svc.project(locate(root))
    assert project is not None
    return project


def lesson(title: str, body: str, *files: str, kind: str = "lesson") -> NewMemory:
    return NewMemory(type=kind, title=title, body=body, source=Source.USER, files=files)


def stale_ids(svc: MemoryService, project: Project) -> dict[str, str]:
    return {memory_id: reason for memory_id, _title, reason, _since in svc.check_freshness(project).stale}


def test_the_names_a_memory_mentions_and_the_blob_id_are_gits() -> None:
    assert named_symbols("load_config reads env", "call `SessionCache.clear()` then retry_once()") == [
        "SessionCache",
        "clear",
        "retry_once",
        "load_config",
    ]
    assert blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object of "hello\n"
    assert command_program("Deploy", "run `FOO=1 ./scripts/deploy.sh --prod`") == "./scripts/deploy.sh"


def test_unchanged_rewritten_vanished_and_reverted(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Config", "`load_config` reads the env first", "src/app.py")).memory
    assert stale_ids(svc, project) == {}
    (repo / "src" / "app.py").write_text(APP + "\n# a comment\n")
    assert stale_ids(svc, project) == {}  # changed, but the name it mentions is still there
    (repo / "src" / "app.py").write_text(APP.replace("load_config", "read_settings"))
    assert stale_ids(svc, project) == {memory.id: "`load_config` no longer in src/app.py"}
    hit = svc.search.hits(project, "config env")[0]
    assert hit.memory.stale_reason and hit.parts.freshness_factor == 0.5
    assert "possibly stale: `load_config` no longer in src/app.py" in svc.context.brief(project)
    git(repo, "checkout", "--", "src/app.py")
    assert stale_ids(svc, project) == {}  # reverted: fresh again


def test_a_deleted_file_is_dated_and_a_renamed_one_is_followed(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    (repo / "src" / "old.py").write_text("def legacy_path():\n    pass\n")
    git(repo, "add", ".")
    commit(repo, "old")
    gone = svc.record(project, lesson("Legacy", "`legacy_path` is kept for v1 clients", "src/old.py")).memory
    moved = svc.record(project, lesson("Cache", "`SessionCache` is per request", "src/app.py")).memory
    git(repo, "rm", "-q", "src/old.py")
    git(repo, "mv", "src/app.py", "src/core.py")
    commit(repo, "move and delete")
    found = stale_ids(svc, project)
    assert list(found) == [gone.id] and found[gone.id].startswith("the file it cites, src/old.py, was deleted on 20")
    assert svc.get(project, moved.id).files == ("src/core.py",)  # the citation followed the rename
    assert stale_ids(svc, project) == {gone.id: found[gone.id]}


def test_switching_branches_marks_and_clears(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Cache", "`SessionCache` is per request", "src/app.py")).memory
    git(repo, "checkout", "-q", "-b", "rewrite")
    (repo / "src" / "app.py").write_text("def load_config(path):\n    return {}\n")
    commit(repo, "drop the cache")
    assert memory.id in stale_ids(svc, project)
    git(repo, "checkout", "-q", "main")
    assert stale_ids(svc, project) == {}


def test_outside_git_and_without_citations(svc: MemoryService, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "tool.sh").write_text("#!/bin/sh\nbuild_all() { :; }\n")
    project = project_of(svc, folder)
    cited = svc.record(project, lesson("Build", "use `build_all` in tool.sh", "tool.sh")).memory
    bare = svc.record(project, lesson("Tabs", "indent with tabs")).memory
    glob = svc.record(project, lesson("Tests", "every test file imports `fixture_x`", "tests/*.py")).memory
    assert stale_ids(svc, project) == {}
    (folder / "tool.sh").unlink()
    found = stale_ids(svc, project)
    assert list(found) == [cited.id] and found[cited.id] == "the file it cites, tool.sh, was deleted"
    assert bare.id not in found and glob.id not in found


def test_a_commands_script_that_went_away(svc: MemoryService, repo: Path) -> None:
    (repo / "scripts").mkdir()
    (repo / "scripts" / "deploy.sh").write_text("#!/bin/sh\n")
    project = project_of(svc, repo)
    deploy = svc.record(project, lesson("Deploy", "run `./scripts/deploy.sh --prod`", kind="command")).memory
    listed = svc.record(project, lesson("List", "run `ls -la`", kind="command")).memory
    never = svc.record(project, lesson("Odd", "run `surely-not-installed-xyz`", kind="command")).memory
    assert stale_ids(svc, project) == {}
    (repo / "scripts" / "deploy.sh").unlink()
    found = stale_ids(svc, project)
    assert found == {deploy.id: "the command's script ./scripts/deploy.sh is no longer in the project"}
    assert listed.id not in found and never.id not in found  # never found here: nothing to say it went away


def test_the_check_is_incremental(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    for n in range(30):
        (repo / "src" / f"m{n}.py").write_text(f"def handler_{n}():\n    pass\n")
        svc.record(project, lesson(f"Handler {n}", f"`handler_{n}` answers", f"src/m{n}.py"))
    first = svc.check_freshness(project)
    assert first.judged == 30 and first.files_read == 30
    again = svc.check_freshness(project)
    assert again.judged == 0 and again.files_read == 0
    (repo / "src" / "m3.py").write_text("def renamed():\n    pass\n")
    third = svc.check_freshness(project)
    assert third.files_read == 1 and third.judged == 1 and len(third.stale) == 1


def test_confirming_renews_the_fingerprint_and_nothing_is_deleted(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Config", "`load_config` reads the env first", "src/app.py")).memory
    (repo / "src" / "app.py").write_text("def read_settings():\n    pass\n")
    assert memory.id in stale_ids(svc, project)
    assert svc.get(project, memory.id).status.value == "active"  # marked, never deleted
    svc.feedback(project, memory.id, "helpful")  # the person says it still holds
    assert stale_ids(svc, project) == {}


def test_recall_labels_it_and_the_mcp_servers_watch_checks_in_the_background(
    svc: MemoryService, repo: Path, orcmem_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import run_watch

    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Config loading", "`load_config` reads the env first", "src/app.py")).memory
    svc.check_freshness(project)
    (repo / "src" / "app.py").write_text("def read_settings():\n    pass\n")
    run_watch(orcmem_home, repo, monkeypatch, lambda watch: watch.checks > 0, "the background check")
    assert svc.get(project, memory.id).stale_reason == "`load_config` no longer in src/app.py"
    recalled = svc.context.recall(project.canonical_root, "how does config loading work")
    assert "possibly stale: `load_config` no longer in src/app.py" in recalled


def test_orcmem_check_lists_them_and_the_page_shows_why(
    svc: MemoryService, repo: Path, orcmem_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from orcmem.cli.commands import cli
    from orcmem.web.app import create_app
    from tests.web.support import BASE, TOKEN

    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Config", "`load_config` reads the env first", "src/app.py")).memory
    (repo / "src" / "app.py").unlink()
    out = CliRunner().invoke(cli, ["--project", str(repo), "check"], catch_exceptions=False).output
    assert memory.id in out and "the file it cites, src/app.py, was deleted" in out and "1 memory possibly stale" in out
    listed = CliRunner().invoke(cli, ["--project", str(repo), "list"], catch_exceptions=False).output
    assert "[possibly stale]" in listed
    with TestClient(create_app(service=svc, token=TOKEN, environ={}), base_url=BASE) as client:
        client.get(f"/?token={TOKEN}", follow_redirects=False)
        page = client.get(f"/?project={project.id}").text
    assert "Possibly stale" in page and "the file it cites, src/app.py, was deleted" in page


def test_paths_outside_the_project_devices_and_never_existing_files_are_left_alone(
    svc: MemoryService, repo: Path
) -> None:
    project = project_of(svc, repo)
    odd = lesson("Odd paths", "`read_all` everywhere", "../../etc/passwd", "/dev/zero", "src/never_was.py")
    memory = svc.record(project, odd).memory
    report = svc.check_freshness(project)  # returns at once: nothing outside the project is read
    assert memory.id not in {memory_id for memory_id, *_ in report.stale}
    cited = {c.target for c in svc.store.citations.to_judge(project.id, [], everything=True) if c.kind == "file"}
    assert cited == {"src/never_was.py"}  # missing then and now: nothing moved, never marked


MODELS = "import json\n\n\ndef parse_header(raw):\n    return json.loads(raw)\n\n\nclass Header:\n    pass\n" + "".join(
    f"\n\ndef helper_{n}(x):\n    return x + {n}\n" for n in range(12)
)


def test_a_file_moved_under_src_and_rewritten_follows_its_function(svc: MemoryService, repo: Path) -> None:
    (repo / "app").mkdir()
    (repo / "app" / "models.py").write_text(MODELS)
    (repo / "app" / "views.py").write_text("def render_page():\n    pass\n")
    git(repo, "add", ".")
    commit(repo, "app package")
    project = project_of(svc, repo)
    kept = svc.record(project, lesson("Headers", "`parse_header` decodes JSON", "app/models.py")).memory
    lost = svc.record(project, lesson("Pages", "`render_page` streams", "app/views.py")).memory
    assert stale_ids(svc, project) == {}
    (repo / "src" / "app").mkdir()
    git(repo, "mv", "app/models.py", "src/app/header.py")  # another name: only its function says where it went
    git(repo, "rm", "-q", "app/views.py")
    (repo / "src" / "app" / "header.py").write_text(  # rewritten too much for git's rename detection
        "from __future__ import annotations\n\nimport orjson\n\n\ndef parse_header(raw: bytes) -> dict:\n"
        "    '''Decode a header.'''\n    return orjson.loads(raw)\n"
    )
    git(repo, "add", ".")
    commit(repo, "move under src and rewrite")
    found = stale_ids(svc, project)
    assert list(found) == [lost.id]  # its function is defined nowhere now
    assert svc.get(project, kept.id).files == ("src/app/header.py",)  # followed to where its function lives


def test_the_words_of_a_cited_path_are_not_watched_names(svc: MemoryService, repo: Path) -> None:
    (repo / "tests").mkdir()
    (repo / "tests" / "test_json_tag.py").write_text("# run: pytest test_json_tag\ndef test_dump():\n    pass\n")
    git(repo, "add", ".")
    commit(repo, "tests")
    project = project_of(svc, repo)
    memory = svc.record(
        project, lesson("JSON tags", "tests/test_json_tag.py covers `test_dump`", "tests/test_json_tag.py")
    ).memory
    (repo / "tests" / "test_json_tag.py").write_text("def test_dump():\n    assert True\n")
    assert memory.id not in stale_ids(svc, project)
    assert named_symbols("Tags", "see `tests/test_json_tag.py` and test_json_tag", ["tests/test_json_tag.py"]) == []


def test_switching_back_after_following_a_rename_keeps_it_fresh(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    named = svc.record(project, lesson("Cache", "`SessionCache` is per request", "src/app.py")).memory
    (repo / "NOTES.txt").write_text("plain notes, no code names\n")
    git(repo, "add", ".")
    commit(repo, "notes")
    plain = svc.record(project, lesson("Notes", "the notes file is plain text", "NOTES.txt")).memory
    git(repo, "mv", "src/app.py", "src/core.py")
    git(repo, "mv", "NOTES.txt", "docs.txt")
    commit(repo, "move")
    assert stale_ids(svc, project) == {}
    assert svc.get(project, named.id).files == ("src/core.py",)
    git(repo, "checkout", "-q", "HEAD~1")
    assert stale_ids(svc, project) == {}  # the old paths exist again
    assert svc.get(project, named.id).files == ("src/app.py",)
    assert svc.get(project, plain.id).files == ("NOTES.txt",)


def test_identifier_shaped_words_in_prose_are_watched_and_english_is_not(svc: MemoryService, repo: Path) -> None:
    assert named_symbols(
        "HTTP errors", "the Client raises HTTPStatusError; _private is internal, see httpx.request"
    ) == [
        "HTTPStatusError",
        "_private",
        "request",
        "Client",
    ]
    assert named_symbols("Deploys", "Always ask the User before a Deploy. Client work first. The API and URLs.") == []
    (repo / "src" / "net.py").write_text("class Client:\n    pass\n\n\ndef _private():\n    pass\n")
    git(repo, "add", ".")
    commit(repo, "net")
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Net", "the Client calls _private first", "src/net.py")).memory
    (repo / "src" / "net.py").write_text("class Client:\n    pass\n")
    assert stale_ids(svc, project) == {memory.id: "`_private` no longer in src/net.py"}


def test_a_name_still_imported_but_no_longer_defined_is_gone(svc: MemoryService, repo: Path) -> None:
    (repo / "src" / "api.py").write_text("from .app import load_config\n\n\ndef make_client():\n    return 1\n")
    git(repo, "add", ".")
    commit(repo, "api")
    project = project_of(svc, repo)
    defined = svc.record(project, lesson("Clients", "`make_client` builds one per test", "src/api.py")).memory
    used = svc.record(project, lesson("Config", "api.py gets `load_config` from app", "src/api.py")).memory
    (repo / "src" / "api.py").write_text(
        "from .app import load_config\nfrom .clients import make_client\n\n__all__ = ['make_client']\n"
    )
    found = stale_ids(svc, project)
    assert found == {defined.id: "`make_client` no longer in src/api.py"}  # imported, named, but defined nowhere
    assert used.id not in found  # only ever imported here: an import still counts


def test_a_function_moved_to_another_file_is_fresh_and_says_where(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Config", "`load_config` reads the env first", "src/app.py")).memory
    (repo / "src" / "app.py").write_text("from .config import load_config\n\n\nclass SessionCache:\n    pass\n")
    (repo / "src" / "config.py").write_text("def load_config(path):\n    return read(path)\n")
    assert stale_ids(svc, project) == {}
    assert svc.get(project, memory.id).files == ("src/config.py",)  # every name it watched went there: followed
    (repo / "src" / "config.py").unlink()
    assert stale_ids(svc, project) == {memory.id: "the file it cites, src/config.py, was deleted"}
    (repo / "src" / "app.py").write_text("def read_settings():\n    pass\n\n\nclass SessionCache:\n    pass\n")
    split = svc.record(project, lesson("Both", "`SessionCache` and `read_settings`", "src/app.py")).memory
    (repo / "src" / "app.py").write_text("def read_settings():\n    return 1\n")
    (repo / "src" / "cache.py").write_text("class SessionCache:\n    pass\n")
    assert split.id not in stale_ids(svc, project)  # one name moved, one stayed: fresh, still citing app.py
    assert svc.get(project, split.id).files == ("src/app.py",)


def test_a_plain_word_the_cited_file_declares_is_watched(svc: MemoryService, repo: Path) -> None:
    (repo / "src" / "signer.py").write_text(
        "def sign(value):\n    return value\n\n\ndef unsign(value):\n    return value\n"
    )
    git(repo, "add", ".")
    commit(repo, "signer")
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Signing", "The sign in src/signer.py must stay compatible", "src/signer.py"))
    (repo / "src" / "signer.py").write_text("def unsign(value):\n    return value\n\n# we no longer sign here\n")
    assert stale_ids(svc, project) == {memory.memory.id: "`sign` no longer in src/signer.py"}


def test_a_file_found_at_the_same_path_under_one_new_folder_is_followed(svc: MemoryService, repo: Path) -> None:
    commit_files(
        repo,
        {"app/settings.cfg": "[server]\nport = 8000\nworkers = 4\n", "app/extra.cfg": "[extra]\nlevel = 1\n"},
        "app",
    )
    project = project_of(svc, repo)
    moved = svc.record(project, lesson("Port", "the port lives in the server section", "app/settings.cfg")).memory
    doubled = svc.record(project, lesson("Extra", "the extra level", "app/extra.cfg")).memory
    for folder in ("src/app", "lib/app"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "extra.cfg").write_text("[extra]\nlevel = 2\n")
    git(repo, "mv", "app/settings.cfg", "src/app/settings.cfg")
    git(repo, "rm", "-q", "app/extra.cfg")
    (repo / "src" / "app" / "settings.cfg").write_text("[server]\nport = 9000\n")  # rewritten past rename detection
    git(repo, "add", ".")
    commit(repo, "under src")
    assert list(stale_ids(svc, project)) == [doubled.id]  # two files fit: no guess
    assert svc.get(project, moved.id).files == ("src/app/settings.cfg",)


def test_prose_words_are_not_watched_when_the_memory_names_code(svc: MemoryService, repo: Path) -> None:
    tests = "def run(coro):\n    return coro\n\n\ndef test_basic():\n    pass\n"
    local = 'class Local:\n    """A function for each thread."""\n'
    commit_files(repo, {"tests/test_async.py": tests, "src/local.py": local}, "tests")
    project = project_of(svc, repo)
    svc.record(project, lesson("Tests", "tests/test_async.py has test_basic, run it", "tests/test_async.py"))
    plain = svc.record(
        project, lesson("Local", "Local in src/local.py is the one to subclass for custom behaviour", "src/local.py")
    )
    (repo / "tests" / "test_async.py").write_text("import asyncio\n\n\ndef test_basic():\n    asyncio.run(None)\n")
    (repo / "src" / "local.py").write_text('class Local:\n    """Storage per thread."""\n')
    assert stale_ids(svc, project) == {}  # neither "run" nor the docstring's "function for" named code
    (repo / "src" / "local.py").write_text("class Storage:\n    pass\n")
    assert stale_ids(svc, project) == {plain.memory.id: "`Local` no longer in src/local.py"}


def test_a_name_only_a_test_defines_is_not_where_a_deleted_file_went(svc: MemoryService, repo: Path) -> None:
    project = project_of(svc, repo)
    memory = svc.record(project, lesson("Config", "`load_config` reads the env first", "src/app.py")).memory
    (repo / "tests").mkdir()
    (repo / "tests" / "test_cli.py").write_text("def test_cli():\n    def load_config():\n        pass\n")
    (repo / "src" / "app.py").unlink()
    assert stale_ids(svc, project) == {memory.id: "the file it cites, src/app.py, was deleted"}
    (repo / "src" / "settings.py").write_text("def load_config(path):\n    return path\n")
    assert svc.check_freshness(project, everything=True).stale == []  # a module of the code defines it now: moved


def test_a_method_is_watched_in_its_class_and_found_through_its_bases(svc: MemoryService, repo: Path) -> None:
    cache = "class Cache:\n    def clear(self):\n        pass\n\n\nclass Pool:\n    def drain(self):\n        pass\n"
    commit_files(repo, {"src/cache.py": cache}, "cache")
    project = project_of(svc, repo)
    svc.record(project, lesson("Clear", "Cache.clear() in src/cache.py drops every entry", "src/cache.py"))
    left = svc.record(project, lesson("Drain", "`Pool.drain` in src/cache.py waits for the workers", "src/cache.py"))
    based = "from base import Store\n\n\nclass Cache(Store):\n    pass\n\n\nclass Pool:\n    pass\n\n\nclass Queue:\n"
    (repo / "src" / "cache.py").write_text(based + "    def drain(self):\n        pass\n")
    (repo / "src" / "base.py").write_text("class Store:\n    def clear(self):\n        pass\n")
    # clear went to the base class Cache inherits: still Cache's; drain went to another class: Pool's is gone
    assert stale_ids(svc, project) == {left.memory.id: "`Pool.drain` no longer in src/cache.py"}


def test_a_word_of_the_cited_path_is_watched_where_the_file_defines_it(svc: MemoryService, repo: Path) -> None:
    commit_files(repo, {"tests/test_serving.py": "def test_serving():\n    pass\n"}, "tests")
    project = project_of(svc, repo)
    memory = svc.record(
        project, lesson("Serving", "tests/test_serving.py has test_serving, run it", "tests/test_serving.py")
    )
    (repo / "tests" / "test_serving.py").write_text("def test_server_starts():\n    pass\n")
    assert stale_ids(svc, project) == {memory.memory.id: "`test_serving` no longer in tests/test_serving.py"}
