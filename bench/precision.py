"""Precision of recall before a prompt: how often on-topic prompts get memories, and off-topic ones get nothing.

Run alone with `python -m bench.precision`. The off-topic prompts are fixed lists below, written as people ask,
not picked to miss the memories' words. The gate's constants are measured next to their neighbours, so the
choice can be checked (and redone) from the same table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import locomo
from bench.common import (
    PROBLEMS,
    Latency,
    embedded_service,
    latency,
    profile_with_memories,
    queries,
    synthetic_memories,
)
from orcmem.agent_context.recall import recall_match
from orcmem.models.constants import (
    FTS_MAX_TERMS,
    RECALL_ENOUGH_TERMS,
    RECALL_MAX_MEMORIES,
    RECALL_MIN_SIMILARITY,
    RECALL_MIN_TERM_SHARE,
)
from orcmem.models.types import NewMemory
from orcmem.service.memory_service import MemoryService
from orcmem.store.recall import RecallRow, past_gate, word_candidates

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
OFF_TOPIC_TARGET = 0.95  # the share of off-topic prompts that must get nothing

# Prompts that have nothing to do with a software project's memory: cooking, travel, sports, general knowledge.
# Written as people ask them, not picked to avoid the memories' words (some share a word or a number with them).
GENERAL_PROMPTS: tuple[str, ...] = (
    # cooking
    "How long should I boil an egg for a runny yolk?",
    "What can I use instead of buttermilk in pancakes?",
    "How do I make a sourdough starter from scratch?",
    "What temperature should I roast a whole chicken at?",
    "Why did my bread come out dense and flat?",
    "Give me a simple recipe for tomato soup.",
    "How do I keep guacamole from turning brown?",
    "What's the difference between baking soda and baking powder?",
    "How much rice should I cook per person?",
    "Can I freeze cooked pasta?",
    "How do I sharpen a kitchen knife with a whetstone?",
    "What wine goes well with grilled salmon?",
    "How do you caramelize onions properly?",
    "Suggest a vegetarian dinner for six people.",
    "Why is my risotto gluey?",
    "How long does homemade chili keep in the fridge?",
    "What spices go into a garam masala?",
    "How do I make fluffy scrambled eggs?",
    "Is it safe to eat raw cookie dough?",
    "How do I season a cast iron skillet?",
    "What is the best way to store fresh herbs?",
    "How many cups are in a quart?",
    "Can you convert 180 degrees Celsius to Fahrenheit?",
    "What's a good substitute for eggs in a cake?",
    "How do I poach a pear in red wine?",
    "Why does my homemade ice cream get icy?",
    "How do you make a roux for gumbo?",
    "What is the ratio of water to oats for porridge?",
    "How should I marinate tofu so it has flavour?",
    "Plan a three-course menu for a birthday dinner.",
    # travel
    "What is the best time of year to visit Japan?",
    "Do I need a visa to travel from Canada to Brazil?",
    "How early should I get to the airport for an international flight?",
    "What should I pack for a week of hiking in Scotland?",
    "Which neighbourhood in Lisbon is best to stay in?",
    "How do I get from Rome to Florence by train?",
    "Is tap water safe to drink in Mexico City?",
    "What are the must-see sights in Istanbul?",
    "How much should I tip a taxi driver in New York?",
    "Can I bring a power bank in my checked luggage?",
    "What's the cheapest way to travel around Europe for a month?",
    "How do I deal with jet lag after a long flight?",
    "Recommend a road trip route along the California coast.",
    "What currency do they use in Iceland?",
    "How do I renew my passport?",
    "Are there ferries from Athens to Santorini in winter?",
    "What vaccinations do I need before going to Kenya?",
    "Where can I see the northern lights in Norway?",
    "What is the weather like in Bali in August?",
    "How do I rent a car in Italy with a US licence?",
    "Which museums in Paris are free on Sundays?",
    "What is a good itinerary for three days in Prague?",
    "How do I get a seat upgrade on a long-haul flight?",
    "Is travel insurance worth it for a short trip?",
    "What are some quiet beaches in Portugal?",
    "How do I use public transport in Tokyo?",
    "What should I know before camping in a national park?",
    "Can I travel to Morocco with pets?",
    "What's the best way to see the Grand Canyon in one day?",
    "Where should I stay for a ski holiday in the Alps?",
    # sports
    "Who won the last FIFA World Cup?",
    "How is the offside rule applied in football?",
    "What is a good training plan for my first marathon?",
    "How many players are on a rugby union team?",
    "Explain the scoring system in tennis.",
    "What muscles does swimming butterfly work?",
    "How do I improve my golf swing?",
    "Which team has won the most NBA championships?",
    "How long is a cricket test match?",
    "What are the rules of curling?",
    "How do I choose the right running shoes?",
    "Who holds the world record for the 100 metres sprint?",
    "What is a hat-trick in hockey?",
    "How often should I do strength training each week?",
    "What's the difference between a sprint and an Olympic triathlon?",
    "How do I stop getting cramps when cycling?",
    "When is the next Tour de France?",
    "How do tiebreaks work in volleyball?",
    "What does a quarterback do in American football?",
    "Give me a warm-up routine before playing squash.",
    "How do Formula 1 teams decide pit stop strategy?",
    "What are the weight classes in boxing?",
    "How do I teach a child to ride a bike?",
    "Which tennis players have won the calendar Grand Slam?",
    "How do I get better at rock climbing overhangs?",
    "What is the history of the Olympic Games?",
    "How many laps is a mile on a standard track?",
    "Why do baseball pitchers ice their arms?",
    "What yoga poses help with lower back pain?",
    "How do I read a chess opening book?",
    # general knowledge and everyday questions
    "What is the capital of Australia?",
    "Why is the sky blue?",
    "Who painted the Mona Lisa?",
    "How far is the Moon from the Earth?",
    "What causes the seasons?",
    "Who wrote Pride and Prejudice?",
    "How do vaccines train the immune system?",
    "What is the tallest mountain in Africa?",
    "When did the Berlin Wall fall?",
    "How do bees make honey?",
    "What is the largest ocean on the planet?",
    "Why do cats purr?",
    "What is photosynthesis?",
    "How many bones are in the human body?",
    "Who was the first person to walk on the Moon?",
    "What language is spoken in Brazil?",
    "How do tides work?",
    "What is the meaning of the word serendipity?",
    "How old is the universe?",
    "Which planet has the most moons?",
    "What are the symptoms of the flu?",
    "How do I write a good cover letter?",
    "What is compound interest?",
    "Recommend a few classic novels to read this summer.",
    "How do I get red wine out of a carpet?",
    "What is the best way to learn a new language as an adult?",
    "How often should I water a snake plant?",
    "What's a polite way to decline a wedding invitation?",
    "How do solar panels generate electricity?",
    "What were the main causes of the First World War?",
    # longer requests
    "I'm hosting eight people on Saturday and two of them are vegan. Can you suggest a main course, a side and a "
    "dessert that everyone can eat, with a shopping list?",
    "My sourdough loaf keeps spreading flat in the oven even though the starter bubbles nicely. What am I doing "
    "wrong with the shaping or the proofing time?",
    "We have a long weekend in early October and want to drive somewhere within four hours of Chicago for hiking "
    "and good food. Where would you go?",
    "Can you help me plan a two-week trip to Japan in April, with a few days in Tokyo, Kyoto and Osaka, and tips for "
    "using the rail pass?",
    "I'm training for a half marathon in twelve weeks and currently run about 20 km a week. How should I build up "
    "the distance without getting injured?",
    "Explain the difference between a Roth IRA and a traditional IRA, and which one makes more sense if I expect "
    "my income to rise over the next ten years.",
    "My tomato plants have yellow leaves at the bottom and some brown spots on the fruit. Is it a disease, too much "
    "water, or something in the soil?",
    "Write a short, warm toast for my sister's wedding that mentions how she met her husband on a train in Italy.",
    "Our flight to Lisbon was cancelled and the airline offered a voucher. What are my rights under EU rules, and "
    "should I accept it or ask for a refund?",
    "I want to get back into swimming after years away. What would a gentle three-times-a-week plan look like for "
    "the first month?",
    "Compare the climate, cost of living and job market of Denver and Austin for a family with two young kids.",
    "What is the best way to clean an old cast iron pan that has rust spots, and how do I season it afterwards so "
    "it stays non-stick?",
    "Summarise the plot of Moby-Dick in a few paragraphs and explain why the book is considered a classic.",
    "My dog barks at every delivery person and gets very anxious when left alone. What training steps can we try at "
    "home before seeing a behaviourist?",
    "Which football clubs have won the Champions League more than five times, and who was the top scorer in each "
    "of their final wins?",
)

# Programming questions, off-topic for LoCoMo's conversations about the speakers' lives.
PROGRAMMING_PROMPTS: tuple[str, ...] = (
    "Why does my pytest fixture not run?",
    "How do I revert a git commit that was already pushed?",
    "What is the difference between a list and a tuple in Python?",
    'How do I fix "ModuleNotFoundError: No module named requests"?',
    "Why is my React component rendering twice?",
    "How do I write a SQL query that joins three tables?",
    "What does the async keyword do in JavaScript?",
    "How can I speed up a slow Docker build?",
    "Why does mypy complain about Optional types?",
    "How do I set up a virtualenv for a Django project?",
    "How do I squash the last three commits?",
    "What is a race condition and how do I avoid it?",
    "How do I parse JSON in Go?",
    "Why does my Rust code fail with a borrow checker error?",
    "How do I configure ESLint for TypeScript?",
    "What is the time complexity of quicksort?",
    "How do I mock an HTTP request in a unit test?",
    "Why is my Kubernetes pod stuck in CrashLoopBackOff?",
    "How do I add an index to a Postgres table without locking it?",
    "What is dependency injection?",
    "How do I read a CSV file with pandas?",
    "Why does npm install take so long?",
    "How do I debug a segmentation fault in C?",
    "What is the difference between TCP and UDP?",
    "How do I center a div with CSS flexbox?",
    "Why does my regex not match newlines?",
    "How do I profile a Python script to find the slow function?",
    "What does git rebase --onto do?",
    "How do I handle exceptions in a Java stream?",
    "How do I deploy a Flask app to production?",
    "Why is my webpack bundle so large?",
    "What is the difference between a process and a thread?",
    "How do I write a Dockerfile for a Node.js service?",
    "Why do floating point numbers not add up exactly?",
    "How do I use environment variables in a GitHub Actions workflow?",
    "What is a memory leak and how do I find one in Chrome DevTools?",
    "How do I convert a string to an integer in C++?",
    'Why does my bash script fail with "permission denied"?',
    "How do I make an HTTP POST request with curl?",
    "What is the CAP theorem?",
    "How do I paginate results in a REST API?",
    "Why does my unit test pass locally but fail on CI?",
    "How do I rename a column in a pandas DataFrame?",
    "What is the difference between == and === in JavaScript?",
    "How do I set up a cron job?",
    "Why is my SQLite database locked?",
    "How do I generate a UUID in Python?",
    "What does the static keyword mean in Java?",
    "How do I resolve a merge conflict in VS Code?",
    "How do I write a recursive function to reverse a linked list?",
    "Why is my Redis cache returning stale values?",
    "How do I create a REST endpoint with FastAPI?",
    "What is the difference between let, const and var?",
    "How do I run a single test method with pytest?",
    "What does a 502 Bad Gateway error from nginx mean?",
    "How do I use a context manager in Python?",
    "Why does my Terraform plan want to recreate resources?",
    "How do I enable type checking in VS Code?",
    "What is a closure in JavaScript?",
    "How do I log to a file with the logging module?",
    "Why is my Go program deadlocking on a channel?",
    "How do I configure a reverse proxy for a websocket?",
    "What is the difference between an abstract class and an interface?",
    "How do I upgrade all pip packages at once?",
    "Why does my CSS grid not fill the container?",
    "How do I write a GraphQL resolver?",
    "How do I measure code coverage with coverage.py?",
    "What is the purpose of a Makefile?",
    "Why is my Jest test timing out?",
    "How do I make a Python class iterable?",
    "How do I stream a large file download in Node?",
    "What are database migrations and why do I need them?",
    "How do I cherry-pick a commit from another branch?",
    "Why does my Kotlin coroutine never resume?",
    "How do I use a decorator to cache function results?",
    "What is the difference between SQL and NoSQL databases?",
    "How do I handle CORS errors in my API?",
    "How do I read command line arguments with argparse?",
    "Why does my Swift app crash on launch?",
    "How do I create a Python package with pyproject.toml?",
    "What is big O notation?",
    "How do I set a breakpoint in gdb?",
    "Why is my Celery worker not picking up tasks?",
    "How do I sort a dictionary by value in Python?",
    "What does the volatile keyword do in C?",
    "How do I write an integration test for a database layer?",
    "Why does my Spring Boot app fail to start with a bean error?",
    "How do I optimise a slow SQL query with EXPLAIN?",
    "What is the event loop in Node.js?",
    "How do I build a CLI with click?",
    "Why is my Docker container exiting immediately?",
    "How do I convert a Jupyter notebook to a script?",
    "What is tail call optimisation?",
    "How do I implement a binary search tree in Java?",
    "Why does my Vim config not load plugins?",
    "How do I set up pre-commit hooks for ruff?",
    "What is the difference between a shallow and deep copy?",
    "How do I serialise a dataclass to JSON?",
    "Why is my Android build failing with a Gradle error?",
    "How do I use threading locks in Python?",
    'What does "undefined is not a function" mean?',
    "How do I write a Kafka consumer in Java?",
    "How do I throttle API requests in JavaScript?",
    "Why are my Postgres connections being exhausted?",
    "How do I use generics in TypeScript?",
    "What is a monorepo and when should I use one?",
    "How do I format code automatically with Black?",
    "Why does my HTML form submit twice?",
    "How do I schedule a task with asyncio?",
    "What is the difference between git fetch and git pull?",
    # longer requests
    "My Flask app works with the development server but returns 502 errors behind gunicorn and nginx. Where should "
    "I start looking, and which settings usually cause this?",
    "Write a Python function that reads a large CSV file in chunks, filters rows where the status column is failed, "
    "and writes them to a new file.",
    "We have a monolith in Django and want to split the payments part into its own service. What are the risks and "
    "how would you plan the migration?",
    "I keep getting merge conflicts in package-lock.json when two branches add dependencies. Is there a clean way "
    "to resolve them or avoid them altogether?",
    "Our GitHub Actions workflow takes 25 minutes, mostly installing dependencies and building Docker images. How "
    "can we cache things to make it faster?",
    "Explain how Python's garbage collector deals with reference cycles, and when I should call gc.collect manually.",
    "Review this approach: we store user sessions in Redis with a 30 minute TTL and refresh it on every request. Is "
    "that safe under heavy load?",
    "How do I set up TypeScript path aliases so that both the compiler and Jest understand imports like @app/utils?",
    "My Postgres query with three joins and a GROUP BY takes 8 seconds on a table of two million rows. What "
    "indexes should I try first?",
    "Our React app re-renders the whole list when one item changes. How do memo, useCallback and keys help, and "
    "which should I use here?",
    "Set up a Makefile with targets for linting, running the tests with coverage, and building a wheel for a small "
    "Python library.",
    "I need a bash script that backs up a directory to S3 every night, keeps the last seven copies, and emails me "
    "if anything fails.",
    "Why would a Kubernetes deployment keep the old pods running after I apply a new image tag, and how do I force "
    "a rollout?",
    "Compare FastAPI and Flask for a small internal API with authentication, background jobs and OpenAPI docs.",
    "How do I write a unit test for a function that calls datetime.now and an external HTTP API without flaky "
    "timing issues?",
)

# Prompts written about one stored memory, the way people ask an agent: each names two of its facets (the tool and
# its symptom, the code, the area) among the everyday words of a request.
ABOUT_TEMPLATES: tuple[str, ...] = (
    "{tool} {problem} again in {area}, what did we learn last time?",
    "Can you look at {code}? I think it is why {tool} {problem}.",
    "Fix {area}: {tool} {problem} on my machine.",
    "I am about to change {code}, is there anything I should know?",
    "What do we usually do when {tool} {problem}?",
    "Please refactor {code} and keep {area} working.",
    # longer requests, as agents usually get them
    "{tool} {problem} again while I was working on {area}. Can you figure out what is going on, fix it, and add a "
    "regression test so it does not come back?",
    "Before we ship the next release, please review {code}: last week {tool} {problem} and I want to be sure the "
    "same thing cannot happen in {area}.",
    "I'm picking up the {area} work today. The first thing I noticed is that {tool} {problem} when I run everything "
    "locally; what do we know about that?",
)


# The body bench.common.synthetic_memories writes, to read a memory's facets back.
_SHAPE = re.compile(
    r"^When (?P<tool>.+?) (?P<problem>" + "|".join(map(re.escape, PROBLEMS)) + r") while working on "
    r"(?P<area>.+?) \((?P<other>[^)]+)\), (?P<fix>.+?)\. Seen"
)


def _facets(memory: NewMemory) -> dict[str, str] | None:
    """The tool, symptom, area and code a synthetic memory is about (None if its text is not the usual shape)."""
    found = _SHAPE.match(memory.body)
    if found is None or " in " not in memory.title:
        return None
    return {**found.groupdict(), "code": memory.title.rsplit(" in ", 1)[1]}


def prompts_about_memories(count: int, memories: Sequence[NewMemory], seed: int = 5) -> list[tuple[str, int]]:
    """`count` prompts, each about one of `memories`, with that memory's index."""
    rng = random.Random(seed)
    prompts: list[tuple[str, int]] = []
    while len(prompts) < count:
        index = rng.randrange(len(memories))
        facets = _facets(memories[index])
        if facets is not None:
            prompts.append((rng.choice(ABOUT_TEMPLATES).format(**facets), index))
    return prompts


# --- measuring ---------------------------------------------------------------------------------------------------
MEMORIES = 10_000
ON_TOPIC_PROMPTS = 200  # bench.common.queries, the prompts the hook benchmark times
ABOUT_PROMPTS = 300
HOOK_SAMPLES = 30
# The gate's two numbers and their neighbours, measured side by side; share 0 is no gate at all.
VARIANTS: tuple[tuple[str, float, int], ...] = (
    ("no gate (before)", 0.0, FTS_MAX_TERMS),
    ("a third of the words", 1 / 3, FTS_MAX_TERMS),
    ("half of the words", 0.5, FTS_MAX_TERMS),
    ("half, or 3 in a long prompt", 0.5, 3),
    ("half, or 4 in a long prompt", 0.5, 4),
    ("half, or 5 in a long prompt", 0.5, 5),
    ("two thirds, or 4 in a long prompt", 2 / 3, 4),
)
# Warm recall (the MCP server's memory_recall) adds memories this close in meaning; orcmem's threshold and its
# neighbours, measured side by side.
MEANING_THRESHOLDS: tuple[float, ...] = (0.3, 0.35, 0.38, 0.4, 0.45, 0.5)
# What recall through the warm server must reach (issue 15): coding on-topic prompts that get memories, requests
# about a stored memory that get it, and off-topic prompts that get nothing (coding, LoCoMo).
WARM_TARGETS = {"on": 0.97, "answered": 0.88, "code_off": 0.99, "locomo_off": 0.97}

Recall = Callable[[str, str], list[RecallRow]]  # (project root, prompt) -> the rows recall would inject
Key = tuple[str, str]  # a memory's (title, body), what a recalled row shows of it


@dataclass(frozen=True)
class Share:
    """How many prompts got memories back, and how many of those held a memory that answers them."""

    prompts: int
    injected: int
    relevant: int | None = None  # None where no prompt names its answer

    @property
    def injected_share(self) -> float:
        """The share of prompts that got something."""
        return self.injected / self.prompts

    @property
    def nothing_share(self) -> float:
        """The share of prompts that got nothing."""
        return 1 - self.injected_share

    @property
    def relevant_share(self) -> float | None:
        """The share of prompts whose recalled memories held an answer."""
        return None if self.relevant is None else self.relevant / self.prompts


@dataclass(frozen=True)
class Shares:
    """Every prompt set under one way of recalling (LoCoMo's are None without its data)."""

    code_on: Share
    code_about: Share
    code_off: Share
    locomo_on: Share | None
    locomo_off: Share | None

    def off_topic_line(self, how: str = "") -> str:
        """The report's line on the off-topic target: the share that got nothing, coding first, then LoCoMo."""
        off = [self.code_off.nothing_share] + ([self.locomo_off.nothing_share] if self.locomo_off else [])
        met = "met" if min(off) >= OFF_TOPIC_TARGET else "**missed**"
        return (
            f"- Off-topic prompts that get nothing{how}, at least {OFF_TOPIC_TARGET:.0%}: {met} "
            f"({', '.join(_pct(share) for share in off)})."
        )

    def row(self, name: str) -> str:
        """This way of recalling as a row of the report's tables."""
        lo_on = "–"
        if self.locomo_on:
            lo_on = f"{_pct(self.locomo_on.injected_share)} / {_pct(self.locomo_on.relevant_share)}"
        lo_off = _pct(self.locomo_off.nothing_share) if self.locomo_off else "–"
        return (
            f"| {name} | {_pct(self.code_on.injected_share)} | {_pct(self.code_about.injected_share)} / "
            f"{_pct(self.code_about.relevant_share)} | {_pct(self.code_off.nothing_share)} | {lo_on} | {lo_off} |"
        )


@dataclass(frozen=True)
class GateFigures:
    """Every prompt set under one setting of the gate."""

    label: str
    share: float
    enough: int
    shares: Shares

    @property
    def is_orcmem(self) -> bool:
        """Whether these are the constants orcmem ships."""
        return self.share == RECALL_MIN_TERM_SHARE and self.enough == RECALL_ENOUGH_TERMS


@dataclass(frozen=True)
class WarmFigures:
    """Every prompt set through warm recall (the word gate, plus meaning at one similarity threshold)."""

    min_similarity: float
    shares: Shares

    @property
    def is_orcmem(self) -> bool:
        """Whether this is the threshold orcmem ships."""
        return self.min_similarity == RECALL_MIN_SIMILARITY


@dataclass
class PrecisionResult:
    """The recall hook's precision at 10,000 coding memories and on LoCoMo, and its wall time."""

    memories: int
    locomo_questions: int
    gates: list[GateFigures] = field(default_factory=list)
    warm: list[WarmFigures] = field(default_factory=list)
    closest_off_topic: dict[str, float] = field(default_factory=dict)  # corpus -> highest similarity of any
    python_bare: Latency | None = None
    hook_on_topic: Latency | None = None
    hook_off_topic: Latency | None = None

    def shipped(self) -> GateFigures:
        """The figures for orcmem's own constants."""
        return next(g for g in self.gates if g.is_orcmem)


@dataclass(frozen=True)
class Asked:
    """One prompt, the project it is asked in, and the memories that answer it (empty when none is named)."""

    root: str
    text: str
    answers: frozenset[Key] = frozenset()


def _recaller(db: Path, share: float, enough: int) -> Recall:
    """What the prompt hook does before the framing: the match expression, then the gated read."""

    def recall(root: str, prompt: str) -> list[RecallRow]:
        match = recall_match(prompt)
        if match is None:
            return []
        return past_gate(word_candidates(db, root, match, RECALL_MAX_MEMORIES, share=share, enough=enough)) or []

    return recall


def _warm_recaller(svc: MemoryService, min_similarity: float) -> Recall:
    """What `memory_recall` on the MCP server does before the framing: gated words, fused with close meanings."""

    def recall(root: str, prompt: str) -> list[RecallRow]:
        return svc.context.recall_rows(root, prompt, meaning=True, min_similarity=min_similarity)

    return recall


def _shares(code: _Corpus, recall: Recall, conversations: _Corpus | None, talk: Recall | None) -> Shares:
    """Ask every prompt set: the coding ones through `recall`, LoCoMo's through `talk`."""
    on, about, off = (_share(recall, *code.sets[name]) for name in ("on", "about", "off"))
    locomo_on = locomo_off = None
    if conversations is not None and talk is not None:
        locomo_on, locomo_off = (_share(talk, *conversations.sets[name]) for name in ("on", "off"))
    return Shares(on, about, off, locomo_on, locomo_off)


def _share(recall: Recall, asked: Sequence[Asked], judged: bool) -> Share:
    injected = relevant = 0
    for item in asked:
        rows = recall(item.root, item.text)
        injected += bool(rows)
        relevant += any((title, body) in item.answers for _type, title, body, *_rest in rows)
    return Share(len(asked), injected, relevant if judged else None)


@dataclass
class _Corpus:
    """One profile and the prompt sets asked of it."""

    db: Path
    sets: dict[str, tuple[list[Asked], bool]]  # name -> (prompts, whether they name their answers)


def _coding_corpus(work: Path, count: int) -> _Corpus:
    home, project = work / "home-code", work / "project-code"
    profile_with_memories(home, project, count)
    memories = synthetic_memories(count)
    root = str(project)
    about = [
        Asked(root, text, frozenset({(memories[i].title, memories[i].body)}))
        for text, i in prompts_about_memories(ABOUT_PROMPTS, memories)
    ]
    return _Corpus(
        home / "orcmem.db",
        {
            "on": ([Asked(root, q) for q in queries(ON_TOPIC_PROMPTS)], False),
            "about": (about, True),
            "off": ([Asked(root, q) for q in GENERAL_PROMPTS], False),
        },
    )


def _locomo_corpus(work: Path, path: Path) -> _Corpus:
    home = work / "home-locomo"
    svc = MemoryService.open(home, vectors=False)
    svc.settings.set_enabled(True)
    questions = locomo.load(path, svc, work / "locomo")
    asked = []
    for question in questions:
        answers = svc.store.memories.get_many(sorted(question.evidence), files=False)
        asked.append(
            Asked(question.project.canonical_root, question.text, frozenset((m.title, m.body) for m in answers))
        )
    roots = sorted({q.project.canonical_root for q in questions})
    svc.close()
    off = [Asked(root, prompt) for root in roots for prompt in PROGRAMMING_PROMPTS]
    return _Corpus(home / "orcmem.db", {"on": (asked, True), "off": (off, False)})


def _closest(svc: MemoryService, asked: Sequence[Asked]) -> float:
    """The highest cosine similarity between any of these prompts and a memory visible where it is asked."""
    assert svc.embedder is not None
    model = svc.embedder.model_id
    best = -1.0
    for item in asked:
        project = svc.store.projects.by_root(item.root)
        found = svc.store.vectors.scan(svc.embedder.embed_query(item.text, timeout=30), model)
        hits = svc.store.vectors.pick(found, project.id if project else None, 1) if found is not None else []
        best = max([best] + [1.0 - hit.distance for hit in hits])
    return best


def _warm_figures(code: _Corpus, conversations: _Corpus | None, closest: dict[str, float]) -> list[WarmFigures]:
    """Warm recall at each threshold, on both profiles once every memory is embedded; fills `closest`."""
    code_svc = embedded_service(code.db.parent)
    talk_svc = embedded_service(conversations.db.parent) if conversations is not None else None
    try:
        closest["coding"] = _closest(code_svc, code.sets["off"][0])
        if conversations is not None and talk_svc is not None:
            closest["LoCoMo"] = _closest(talk_svc, conversations.sets["off"][0])
        return [
            WarmFigures(
                threshold,
                _shares(
                    code,
                    _warm_recaller(code_svc, threshold),
                    conversations,
                    _warm_recaller(talk_svc, threshold) if talk_svc is not None else None,
                ),
            )
            for threshold in MEANING_THRESHOLDS
        ]
    finally:
        code_svc.close()
        if talk_svc is not None:
            talk_svc.close()


def _wall(command: list[str], stdin: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, check=False, timeout=60)
    return time.perf_counter() - started


def hook_times(home: Path, project: Path, prompts: Sequence[str]) -> Latency:
    """`orcmem hook prompt` as Claude Code runs it (a new process, the JSON on stdin), start to exit."""
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    times = []
    for text in prompts:
        payload = {"session_id": "bench", "cwd": str(project), "prompt": text, "hook_event_name": "UserPromptSubmit"}
        times.append(_wall([orcmem, "hook", "prompt"], json.dumps(payload), env))
    return latency(times)


def run(
    locomo_path: Path | None = DEFAULT_LOCOMO, work: Path | None = None, samples: int = HOOK_SAMPLES
) -> PrecisionResult:
    """Ask every prompt set under each setting of the gate; time the hook at 10,000 memories."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-precision-"))
    code = _coding_corpus(work, MEMORIES)
    conversations = _locomo_corpus(work, locomo_path) if locomo_path is not None and locomo_path.is_file() else None
    result = PrecisionResult(MEMORIES, len(conversations.sets["on"][0]) if conversations else 0)
    for label, share, enough in VARIANTS:
        talk = _recaller(conversations.db, share, enough) if conversations is not None else None
        shares = _shares(code, _recaller(code.db, share, enough), conversations, talk)
        result.gates.append(GateFigures(label, share, enough, shares))
    result.warm = _warm_figures(code, conversations, result.closest_off_topic)
    env = dict(os.environ)
    result.python_bare = latency([_wall([sys.executable, "-c", "pass"], "", env) for _ in range(samples)])
    result.hook_on_topic = hook_times(work / "home-code", work / "project-code", queries(samples))
    result.hook_off_topic = hook_times(work / "home-code", work / "project-code", GENERAL_PROMPTS[:samples])
    shutil.rmtree(work, ignore_errors=True)
    return result


# --- the report ----------------------------------------------------------------------------------------------------
def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def render(result: PrecisionResult) -> list[str]:
    """The recall precision section of docs/benchmarks.md."""
    shipped = result.shipped()
    lines = [
        "## Recall precision",
        "",
        "What the prompt hook injects when it reads the word matches itself (no server running; `recall_match`,",
        "`word_candidates` and `past_gate`, asked in-process), then, below, through the warm server. Coding: the "
        f"{result.memories:,} synthetic memories of the latency",
        f"benchmark; *on-topic* are its {ON_TOPIC_PROMPTS} prompts, *about a memory* are {ABOUT_PROMPTS} requests "
        "written about one stored memory (naming",
        "two of its facets among everyday words, a third of them two or three sentences long; *answered* means that",
        f"memory was injected), *off-topic* are {len(GENERAL_PROMPTS)} fixed cooking, travel, sports and "
        "general-knowledge questions",
        f"(`bench/precision.py`). LoCoMo: the {result.locomo_questions} questions of the retrieval benchmark in "
        "their own conversation (*answered*: an",
        f"evidence turn was injected), and {len(PROGRAMMING_PROMPTS)} fixed programming questions asked in each of "
        "the five conversations.",
        "",
        "| gate | coding on-topic: injected | about a memory: injected / answered | coding off-topic: nothing "
        "| LoCoMo questions: injected / answered | LoCoMo off-topic: nothing |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for g in result.gates:
        lines.append(g.shares.row(f"**{g.label} (orcmem)**" if g.is_orcmem else g.label))
    lines += [
        "",
        shipped.shares.off_topic_line(),
        "- The gate: recall injects its best matches (unchanged: BM25, at most 8 and 4,096 characters) only when",
        f"  one of them holds at least {RECALL_MIN_TERM_SHARE:.0%} of the prompt's words (function words aside, "
        f"rounded up), or {RECALL_ENOUGH_TERMS} of them in a",
        "  long prompt. Without it, any prompt sharing one word with any memory got up to eight memories.",
    ]
    lines += _render_warm(result, shipped)
    if result.hook_on_topic and result.hook_off_topic and result.python_bare:
        lines += [
            "",
            f"`orcmem hook prompt` with the gate, {result.memories:,} memories, a new process per prompt "
            f"({result.hook_on_topic.samples} prompts each), milliseconds, p50 / p95:",
            "",
            "| prompts | wall time |",
            "|---|---:|",
            f"| `python -c pass` (the floor) | {result.python_bare.cell()} |",
            f"| on-topic | {result.hook_on_topic.cell()} |",
            f"| off-topic | {result.hook_off_topic.cell()} |",
        ]
    return lines + [""]


def _render_warm(result: PrecisionResult, words: GateFigures) -> list[str]:
    """The table for warm recall: the word gate alone, then with meaning at each threshold."""
    if not result.warm:
        return []
    lines = [
        "",
        "The prompt hook through the warm server (the default: the session's `orcmem mcp` answers it, model loaded;",
        "`MemoryService.recall_rows`, every memory embedded). It adds the memories whose cosine similarity to the",
        "prompt reaches a threshold; when one does, the prompt is about the project and the word matches join",
        f"without the gate; when none does, the word matches must hold two thirds of the prompt's words (or "
        f"{RECALL_ENOUGH_TERMS}).",
        "Both lists are fused by reciprocal rank (k = 20), 16 candidates each. Rows: the threshold.",
        "",
        "| recall | coding on-topic: injected | about a memory: injected / answered | coding off-topic: nothing "
        "| LoCoMo questions: injected / answered | LoCoMo off-topic: nothing |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    lines.append(words.shares.row("words alone (no server running: the hook reads them itself)"))
    for w in result.warm:
        name = f"words + meaning ≥ {w.min_similarity}"
        lines.append(w.shares.row(f"**{name} (orcmem)**" if w.is_orcmem else name))
    shipped = next((w for w in result.warm if w.is_orcmem), None)
    if shipped is not None:
        got = shipped.shares
        figures = {
            "on": got.code_on.injected_share,
            "answered": got.code_about.relevant_share or 0.0,
            "code_off": got.code_off.nothing_share,
            "locomo_off": got.locomo_off.nothing_share if got.locomo_off else 1.0,
        }
        named = {
            "on": "coding on-topic prompts that get memories",
            "answered": "requests about a stored memory that get it",
            "code_off": "coding off-topic prompts that get nothing",
            "locomo_off": "LoCoMo off-topic prompts that get nothing",
        }
        lines += [""] + [
            f"- {named[key]}, at least {WARM_TARGETS[key]:.0%}: "
            f"{'met' if figures[key] >= WARM_TARGETS[key] else '**missed**'} ({figures[key]:.1%})."
            for key in WARM_TARGETS
        ]
        lines += [
            "- Before this rule (the hook's own gate on the word matches, meaning at 0.4, 8 candidates each, k = 10),",
            "  measured on the same sets: 99.0 %, 81.0 % answered, 99.3 %, 95.5 % (LoCoMo off-topic). Letting meaning",
            "  open the gate lifted *answered* to 86.7 %, the stricter gate without meaning LoCoMo's off-topic to",
            "  98.9 %, 16 word candidates and k = 20 *answered* to 88.0 %; k from 15 to 30 measured the same.",
        ]
    if result.closest_off_topic:
        closest = ", ".join(f"{value:.2f} ({name})" for name, value in result.closest_off_topic.items())
        lines += [
            f"- The closest any off-topic prompt came to a memory (cosine similarity): {closest}.",
            f"- orcmem's threshold, {RECALL_MIN_SIMILARITY}, keeps a margin above that rather than sitting at the "
            "edge where off-topic noise begins.",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the precision benchmark alone and print its section."""
    parser = argparse.ArgumentParser(prog="python -m bench.precision", description=__doc__)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="LoCoMo file (shared/data/locomo)")
    args = parser.parse_args(argv)
    print("\n".join(render(run(args.locomo))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
