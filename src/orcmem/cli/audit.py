"""`orcmem audit`: the health of this project's store, each finding with the one command that fixes it, and
`orcmem audit fix` (merge, redact again)."""

from __future__ import annotations

import click

from orcmem.agent_context.session_recall import recalled_in_sessions
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.models.constants import AUDIT_UNUSED_DAYS_DEFAULT
from orcmem.models.errors import NotFoundError
from orcmem.models.types import Project
from orcmem.rules.audit import LABELS
from orcmem.service.audit import AuditReport
from orcmem.service.memory_service import MemoryService


def _project(app: AppContext) -> Project:
    project = app.project()
    if project is None:
        raise NotFoundError("orcmem knows no project here: nothing to audit (run it inside a project's folder).")
    return project


def run_audit(service: MemoryService, project: Project, days: int) -> AuditReport:
    """Keep what the sessions on file were given (the "last recalled" times), then audit the project."""
    service.store_audit.note_recalled(recalled_in_sessions(str(service.home)))
    return service.store_audit.run(project, days=days)


@click.group(invoke_without_command=True)
@click.option(
    "--days",
    type=int,
    default=AUDIT_UNUSED_DAYS_DEFAULT,
    show_default=True,
    help="Report memories no recall gave in this many days.",
)
@json_option
@pass_app
@click.pass_context
def audit(ctx: click.Context, app: AppContext, days: int, as_json: bool) -> None:
    """Check this project's memories: secrets, duplicates, contradictions, wrong, stale, generic and unused ones."""
    if ctx.invoked_subcommand is not None:
        return
    report = run_audit(app.service(), _project(app), days)
    if as_json:
        echo_json(report.to_dict())
        return
    echo(report.health_line())
    for kind, findings in report.by_kind():
        echo()
        echo(f"{LABELS[kind][1]} ({len(findings)}):")
        for finding in findings:
            echo(f"  {finding.memory_id}  {finding.title}")
            echo(f"      {finding.detail}")
            echo(f"      fix: {finding.fix}")


@audit.group()
def fix() -> None:
    """Fix what the audit found (retract and forget are `orcmem feedback ID wrong` and `orcmem forget ID`)."""


@fix.command()
@click.argument("keep_id")
@click.argument("drop_id")
@pass_app
def merge(app: AppContext, keep_id: str, drop_id: str) -> None:
    """Fold the memory DROP_ID into KEEP_ID (its files and evidence confirm KEEP_ID), then delete DROP_ID."""
    kept = app.service().store_audit.merge(app.project(), keep_id, drop_id)
    echo(f"merged {drop_id} into {kept.id}: {kept.title} (evidence {kept.evidence_count})")


@fix.command()
@click.argument("memory_id")
@pass_app
def redact(app: AppContext, memory_id: str) -> None:
    """Run today's secret rules over a memory again, in place, erasing the old text."""
    memory, changed = app.service().store_audit.redact(app.project(), memory_id)
    echo(f"redacted {memory.id}: {memory.title}" if changed else f"{memory.id}: nothing to redact")
