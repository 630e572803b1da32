"""The Audit panel on the Overview page: the health line, the findings with their buttons, and the fixes through
the service with the page's key."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from orcmem.models.errors import NotFoundError
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from tests.helpers import user_memory
from tests.web.support import form

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _planted(service: MemoryService, project: Project) -> dict[str, str]:
    words = ("Tests need Postgres 16", "json_table needs Postgres 16.")
    ids = {
        "kept": service.record(project, user_memory(*words)).memory.id,
        "copy": service.record(project, user_memory(*words)).memory.id,
        "secret": service.record(project, user_memory("Deploy token", "Deploy with the token in env.")).memory.id,
    }
    service.store.memories.update_fields(ids["secret"], {"body": f"Deploy with {SECRET} in env."})
    return ids


def test_the_panel_shows_the_health_line_and_the_fixes(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    ids = _planted(service, project)
    text = client.get(f"/overview?project={project.id}").text
    assert '<p class="lead" id="audit-health">3 memories: 1 secret, 1 duplicate</p>' in text
    assert f'action="/memories/{ids["copy"]}/merge"' in text and f'value="{ids["kept"]}"' in text
    assert f'action="/memories/{ids["secret"]}/redact"' in text
    assert SECRET[4:20] not in text  # the finding never shows the secret


@pytest.mark.parametrize("action", ["merge", "redact"])
def test_every_fix_needs_the_token(client: TestClient, service: MemoryService, project: Project, action: str) -> None:
    ids = _planted(service, project)
    target = ids["copy"] if action == "merge" else ids["secret"]
    response = client.post(f"/memories/{target}/{action}", data={"project": project.id, "into": ids["kept"]})
    assert response.status_code == 403
    assert len(service.memories_by_id(list(ids.values()))) == 3
    assert SECRET in service.get(project, ids["secret"]).body


def test_the_buttons_fix_it(client: TestClient, service: MemoryService, project: Project) -> None:
    ids = _planted(service, project)
    merged = client.post(
        f"/memories/{ids['copy']}/merge",
        data=form(project=project.id, into=ids["kept"], next=f"/overview?project={project.id}"),
        follow_redirects=False,
    )
    assert merged.status_code == 303 and merged.headers["location"].endswith("#audit")
    with pytest.raises(NotFoundError):
        service.get(project, ids["copy"])
    answer = client.post(
        f"/memories/{ids['secret']}/redact", data=form(project=project.id), headers={"accept": "application/json"}
    ).json()
    assert answer["ok"] and SECRET not in service.get(project, ids["secret"]).body
    text = client.get(f"/overview?project={project.id}").text
    assert '<p class="lead" id="audit-health">2 memories: healthy</p>' in text
