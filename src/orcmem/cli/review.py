"""`orcmem review` (the inbox of learned memories that wait for a person) and `orcmem memory review-policy`."""

from __future__ import annotations

import os
import sys
import termios
import tty

import click

from orcmem.app.formatting import PROVENANCE_LABELS, age_text
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.models.errors import OrcmemError
from orcmem.models.types import Memory, MemoryType, Project
from orcmem.rules.contradictions import resolve_hint, stated_by
from orcmem.rules.review import ReviewPolicy, changed_policy
from orcmem.service.memory_service import MemoryService
from orcmem.text.wording import plural

KEYS_HELP = "a accept · e edit · r reject · A accept all of this run · s skip · q quit"
NO_TERMINAL = (
    "orcmem review asks one key per memory and needs a terminal; "
    "use --list, --accept ID, --reject ID or --accept-run RUN instead."
)


def _card(service: MemoryService, project: Project | None, memory: Memory, position: str) -> str:
    """One waiting memory as the flow shows it: what it says, how sure, where from, and why it waits."""
    now = service.clock()
    why = service.review.waits(
        project,
        source=memory.source,
        memory_type=memory.type,
        confidence=memory.confidence,
        provenance=memory.provenance,
    )
    run = service.review.run_label(memory.source_run_id)
    lines = [
        f"{position} {memory.id}  {memory.type}  {memory.title}",
        f"    confidence {memory.confidence:.2f} · {PROVENANCE_LABELS[memory.provenance]} · "
        f"learned {age_text(memory.created_at, now)} · evidence {memory.evidence_count}",
        f"    run: {run or 'unknown'}",
        f"    waits: {why or 'the policy now lets it in; accept it to use it'}",
    ]
    for link in service.history.open_conflicts_of(memory.id):
        other, title = (link.to_id, link.to_title) if link.from_id == memory.id else (link.from_id, link.from_title)
        lines.append(f'    contradicts: {other} "{title}" (stays active; accepting keeps both: {resolve_hint(link)})')
    if memory.topic_key:
        lines.append(f"    topic: {memory.topic_key}")
    if memory.files:
        lines.append("    files: " + ", ".join(memory.files))
    lines.extend("    | " + line for line in memory.body.splitlines() or [""])
    return "\n".join(lines)


def _team_conflicts(service: MemoryService, project: Project | None) -> list[str]:
    """The open conflicts teammates stated (docs/team.md, History), each with both sides and the command that
    settles it."""
    lines = []
    for link in service.review.team_conflicts(project):
        lines.append(
            f'from the team: {stated_by(link)} says {link.from_id} "{link.from_title}" conflicts with {link.to_id} '
            f'"{link.to_title}" (both stay active)'
        )
        lines.append(f"    settle it: {resolve_hint(link)}")
    return lines


def _read_key() -> str:
    """One key from the terminal, without Enter. Unlike click.getchar, a key typed before the question was asked is
    kept (switching modes does not flush the input), and Ctrl-C still interrupts."""
    fd = sys.stdin.fileno()
    before = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        return os.read(fd, 4).decode("utf-8", "replace")[:1]
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)


def _edited(memory: Memory) -> tuple[str, str, str] | None:
    """The person's new title, body and type: in $EDITOR when one is set (title, a blank line, the body), else asked
    line by line; None when nothing was changed or the editor was left without saving."""
    if os.environ.get("VISUAL") or os.environ.get("EDITOR"):
        text = click.edit(f"{memory.title}\n\n{memory.body}\n", extension=".md")
        if text is None:
            return None
        title, _, body = text.strip().partition("\n")
        return title.strip(), body.strip() or memory.body, str(memory.type)
    title = click.prompt("title", default=memory.title)
    body = click.prompt("body", default=memory.body)
    kind = click.prompt(
        "type", default=str(memory.type), type=click.Choice([t.value for t in MemoryType]), show_choices=False
    )
    return str(title), str(body), str(kind)


def _interactive(app: AppContext, service: MemoryService) -> None:
    project = app.project()
    waiting = service.review.pending(project)
    conflicts = _team_conflicts(service, project)
    for line in conflicts:
        echo(line)
    if not waiting:
        if not conflicts:
            echo("Nothing waits for review.")
        return
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    done: set[str] = set()
    for index, memory in enumerate(waiting, start=1):
        if memory.id in done:
            continue
        echo(_card(service, project, memory, f"[{index}/{len(waiting)}]"))
        while True:
            echo(f"  {KEYS_HELP} > ", err=False)
            key = _read_key()
            try:
                if key == "a":
                    service.review.accept(project, memory.id)
                    echo(f"  accepted {memory.id}")
                    counts["accepted"] += 1
                elif key == "e":
                    change = _edited(memory)
                    if change is None:
                        echo("  unchanged; choose again")
                        continue
                    title, body, kind = change
                    accepted = service.review.accept(project, memory.id, title=title, body=body, type=kind)
                    echo(f"  edited and accepted {accepted.id}")
                    counts["accepted"] += 1
                elif key == "r":
                    service.review.reject(project, memory.id)
                    echo(f"  rejected {memory.id} (erased)")
                    counts["rejected"] += 1
                elif key == "A" and memory.source_run_id and project is not None:
                    accepted_run = service.review.accept_run(project, memory.source_run_id)
                    done.update(m.id for m in waiting if m.source_run_id == memory.source_run_id)
                    echo(f"  accepted {plural(len(accepted_run), 'memory', 'memories')} of run {memory.source_run_id}")
                    counts["accepted"] += len(accepted_run)
                elif key == "s":
                    counts["skipped"] += 1
                elif key == "q":
                    _summary(service, project, counts)
                    return
                else:
                    echo(f"  unknown key {key!r}; {KEYS_HELP}")
                    continue
            except OrcmemError as exc:  # e.g. an edit over the limits: say so and ask again
                echo(f"  {exc}")
                continue
            break
    _summary(service, project, counts)


def _summary(service: MemoryService, project: Project | None, counts: dict[str, int]) -> None:
    left = service.review.count(project)
    echo(
        f"accepted {counts['accepted']}, rejected {counts['rejected']}, skipped {counts['skipped']}; "
        f"{plural(left, 'memory', 'memories')} still {'waits' if left == 1 else 'wait'} "
        f"(unreviewed ones are erased after {service.review.expire_days()} days)"
    )


@click.command()
@click.option("--list", "list_only", is_flag=True, help="List what waits and exit.")
@click.option("--accept", "accept_ids", multiple=True, metavar="ID", help="Accept this memory; repeatable.")
@click.option("--reject", "reject_ids", multiple=True, metavar="ID", help="Reject (erase) this memory; repeatable.")
@click.option("--accept-run", "accept_runs", multiple=True, metavar="RUN", help="Accept all a run left waiting.")
@json_option
@pass_app
def review(
    app: AppContext,
    list_only: bool,
    accept_ids: tuple[str, ...],
    reject_ids: tuple[str, ...],
    accept_runs: tuple[str, ...],
    as_json: bool,
) -> None:
    """Review the learned memories that wait in this project's inbox, one key each (a, e, r, A, s, q).

    A waiting memory is in no brief, recall or search until accepted; unreviewed ones are erased after the set days
    (`orcmem memory review-policy`). The options act without a terminal, for scripts.
    """
    service = app.service()
    project = app.project()
    if accept_ids or reject_ids or accept_runs:
        results: list[dict[str, str]] = []
        for memory_id in accept_ids:
            results.append({"accepted": service.review.accept(project, memory_id).id})
        for memory_id in reject_ids:
            results.append({"rejected": service.review.reject(project, memory_id).id})
        for run_id in accept_runs:
            if project is None:
                raise click.ClickException("no project here: run this inside the project's folder")
            results.extend({"accepted": m.id} for m in service.review.accept_run(project, run_id))
        if as_json:
            echo_json(results)
        else:
            for result in results:
                for verb, memory_id in result.items():
                    echo(f"{verb} {memory_id}")
        return
    if list_only or as_json:
        waiting = service.review.pending(project)
        if as_json:
            echo_json([m.to_dict() for m in waiting])
            return
        conflicts = _team_conflicts(service, project)
        for line in conflicts:
            echo(line)
        if not waiting and not conflicts:
            echo("Nothing waits for review.")
        for index, memory in enumerate(waiting, start=1):
            echo(_card(service, project, memory, f"[{index}/{len(waiting)}]"))
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise click.ClickException(NO_TERMINAL)
    _interactive(app, service)


def _echo_policy(service: MemoryService, project: Project | None, policy: ReviewPolicy, as_json: bool) -> None:
    days = service.review.expire_days()
    if as_json:
        echo_json({**policy.to_dict(), "expire_days": days, "waiting": service.review.count(project)})
        return
    held = ", ".join(sorted(str(t) for t in policy.hold_types)) or "none"
    echo(f"every learned memory waits: {'yes' if policy.all_wait else 'no'}")
    echo(f"learned memories under confidence {policy.min_confidence:.2f} wait")
    echo(f"types that always wait: {held}")
    echo("decisions and conventions taken from tool, file or web text always wait")
    echo(f"an agent's own writes (MCP) wait by these rules too: {'yes' if policy.agent_writes else 'no'}")
    echo(f"unreviewed memories are erased after {days} days (every project)")
    echo(f"waiting now: {service.review.count(project)} (orcmem review)")


@click.command(name="review-policy")
@click.option(
    "--hold", "hold", multiple=True, type=click.Choice([t.value for t in MemoryType]), help="This type waits."
)
@click.option("--release", multiple=True, type=click.Choice([t.value for t in MemoryType]), help="Stop holding it.")
@click.option("--min-confidence", type=float, help="Learned memories under this confidence wait (0 to 1).")
@click.option("--all-wait/--not-all-wait", default=None, help="Every learned memory waits, or the rules above decide.")
@click.option("--agent-writes/--no-agent-writes", default=None, help="An agent's MCP writes follow the policy too.")
@click.option("--expire-days", type=int, help="Erase unreviewed memories after this many days (every project).")
@click.option("--reset", is_flag=True, help="Back to the default policy for this project.")
@json_option
@pass_app
def review_policy(
    app: AppContext,
    hold: tuple[str, ...],
    release: tuple[str, ...],
    min_confidence: float | None,
    all_wait: bool | None,
    agent_writes: bool | None,
    expire_days: int | None,
    reset: bool,
    as_json: bool,
) -> None:
    """Show or set which learned memories of this project wait for review (default: under confidence 0.6)."""
    service = app.service()
    changing = bool(hold or release) or min_confidence is not None or all_wait is not None or agent_writes is not None
    project = app.project(create=changing or reset)
    if (changing or reset) and project is None:
        raise click.ClickException("no project here: run this inside the project's folder")
    if expire_days is not None:
        service.review.set_expire_days(expire_days)
    policy = service.review.policy(project)
    if reset and project is not None:
        policy = service.review.reset_policy(project)
    if changing and project is not None:
        policy = service.review.set_policy(
            project,
            changed_policy(
                policy,
                hold=hold,
                release=release,
                min_confidence=min_confidence,
                all_wait=all_wait,
                agent_writes=agent_writes,
            ),
        )
    _echo_policy(service, project, policy, as_json)
