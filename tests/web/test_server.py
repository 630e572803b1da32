"""`serve`: a real uvicorn on 127.0.0.1, the printed launch address, the browser opened once it is up."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from orcmem.web import server as web_server


def test_serve_prints_the_address_opens_the_browser_and_answers(
    orcmem_home: Path, monkeypatch: pytest.MonkeyPatch, fake_keyring: Any
) -> None:
    import uvicorn

    servers: list[Any] = []
    real_init = uvicorn.Server.__init__

    def capture(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        servers.append(self)

    monkeypatch.setattr(uvicorn.Server, "__init__", capture)
    opened: list[str] = []
    monkeypatch.setattr(web_server.webbrowser, "open", lambda url: opened.append(url) or True)
    lines: list[str] = []
    thread = threading.Thread(
        target=web_server.serve, args=(orcmem_home,), kwargs={"echo": lines.append, "environ": {}}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not (servers and servers[0].started and opened):
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        url = lines[0].split(": ", 1)[1]
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        assert opened == [url]
        with httpx.Client() as client:
            page = client.get(url, follow_redirects=True)
            assert page.status_code == 200 and "No project yet" in page.text
            bare = url.split("?")[0]
            assert httpx.get(bare).status_code == 401
            port = bare.rsplit(":", 1)[1].rstrip("/")
            assert httpx.get(bare, headers={"host": f"attacker.example:{port}"}).status_code == 403
    finally:
        servers[0].should_exit = True
        thread.join(10)
    assert not thread.is_alive()
    assert (orcmem_home / "orcmem.db").exists()


def test_no_open_leaves_the_browser_alone(
    orcmem_home: Path, monkeypatch: pytest.MonkeyPatch, fake_keyring: Any
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setattr(web_server.webbrowser, "open", lambda url: pytest.fail("the browser was opened"))
    lines: list[str] = []
    web_server.serve(orcmem_home, port=0, open_browser=False, echo=lines.append, environ={})
    assert lines[0].startswith("orcmem Memory page: http://127.0.0.1:")
    assert "project=" not in lines[0]


def test_the_folder_it_runs_in_picks_the_first_project(
    orcmem_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch, fake_keyring: Any
) -> None:
    import uvicorn

    from orcmem.host.workspace import locate
    from orcmem.service.memory_service import MemoryService

    with_project = MemoryService.open(orcmem_home)
    known = with_project.project(locate(project_dir))
    with_project.close()
    assert known is not None
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    lines: list[str] = []
    web_server.serve(orcmem_home, open_browser=False, echo=lines.append, environ={}, location=locate(project_dir))
    assert f"/?project={known.id}&token=" in lines[0]
    lines.clear()  # a folder orcmem does not know: the most recently used project, chosen by the page
    web_server.serve(
        orcmem_home, open_browser=False, echo=lines.append, environ={}, location=locate(project_dir.parent)
    )
    assert "project=" not in lines[0]


def test_the_launch_address_can_open_a_project() -> None:
    assert web_server.launch_url(8000, "t0k") == "http://127.0.0.1:8000/?token=t0k"
    assert web_server.launch_url(8000, "t0k", "prj_1") == "http://127.0.0.1:8000/?project=prj_1&token=t0k"
