"""The product's numbers and names, each under its own name, in one place (docs/ explains each)."""

from __future__ import annotations

from orcmem.models.vocabulary import ExtractionProvider, values

TYPE_CHECKING = False  # importing typing costs the hooks milliseconds
if TYPE_CHECKING:
    from typing import Final

# --- Time ---------------------------------------------------------------------------------------------------------
MS_PER_MINUTE: Final = 60_000  # orcmem's times are integer milliseconds since the epoch
MS_PER_DAY: Final = 86_400_000

# --- Injected context ---------------------------------------------------------------------------------------------
# orcmem fences the recall and brief it injects into a session as `<orcmem-context kind="…" id="…">` …
# `</orcmem-context id="…">`, the id drawn for each output; the transcript parsers drop such blocks, so orcmem never
# learns back what it injected itself.
CONTEXT_TAG: Final = "orcmem-context"

# --- Memories -----------------------------------------------------------------------------------------------------
MEMORY_ID_PATTERN: Final = r"^mem_[0-9a-f]{32}$"

TITLE_MAX_CHARS: Final = 120
BODY_MAX_CHARS: Final = 800
TOPIC_KEY_MAX_CHARS: Final = 80
FILES_MAX_COUNT: Final = 50
FILE_PATH_MAX_CHARS: Final = 500

CONFIDENCE_MIN: Final = 0.1
CONFIDENCE_MAX: Final = 1.0
CONFIDENCE_DEFAULT: Final = 0.6
CONFIDENCE_STEP: Final = 0.1  # merge and "helpful" feedback each add this much

# --- Learning (extraction) ----------------------------------------------------------------------------------------
EXTRACTION_EVENT_LIMIT: Final = 5000  # newest ledger events a digest reads
MAX_CONCURRENT_EXTRACTIONS: Final = 2  # across every process
IDLE_MINUTES_DEFAULT: Final = 10  # a session left open is distilled this long after its last turn
SETTING_IDLE_MINUTES: Final = "extraction.idle_minutes"

# --- Digest (docs/learning.md) ------------------------------------------------------------------------------------
OPENING_REQUEST_SCAN: Final = 50  # the opening request is the first user message among a run's first 50 messages
DIGEST_MAX_CHARS: Final = 12_000
DIGEST_TRUNCATION_MARK: Final = "\n…[truncated]"  # the ellipsis is the single character U+2026
TOOL_LINES_MAX: Final = 60  # the last 60 tool results
FILES_TOUCHED_MAX: Final = 60  # the first 60 changed paths
TOOL_OUTPUT_MAX_CHARS: Final = 160  # of each tool result, after collapsing whitespace
AGENT_SAID_MAX: Final = 6  # the last 6 messages not from the user
DIGEST_MESSAGE_SEPARATOR: Final = "\n---\n"  # between user prompts, and between agent messages

# --- Parse (docs/learning.md) -------------------------------------------------------------------------------------
EXTRACTION_TYPES: Final = (
    "decision",
    "spec",
    "lesson",
    "preference",
    "convention",
    "command",
    "env_quirk",
    "ownership",
)
EXTRACTION_FALLBACK_TYPE: Final = "lesson"
# Where the model says a memory's words came from (the answer's "source"); verified against the digest before it
# becomes the memory's provenance (extract/provenance.py). Missing or unknown: "tool", the least trusted.
EXTRACTION_SOURCES: Final = ("user", "agent", "tool")
EXTRACTED_MEMORIES_MAX: Final = 6  # the first 6 raw entries, before validation
EXTRACTED_FILES_MAX: Final = 20
EXTRACTED_OUTCOME_DEFAULT: Final = "unknown"

GENERATOR_TIMEOUT_S: Final = 180.0  # one distillation call
MAX_EVENT_TEXT: Final = 8 * 1024  # characters of one ledger event; a longer output is cut, not stored whole

# --- Word search (FTS5) -------------------------------------------------------------------------------------------
FTS_MAX_TERMS: Final = 12
FTS_TITLE_WEIGHT: Final = 2.0
FTS_BODY_WEIGHT: Final = 1.0
SEARCH_CANDIDATES: Final = 40  # per list (words, meaning)
SEARCH_DEFAULT_LIMIT: Final = 8
SEARCH_MAX_LIMIT: Final = 50  # one search returns at most this many (the Memory page pages through them)
# A candidate only meaning found (no word of the query matched it) must be at least this close (cosine) to the
# query; measured in docs/benchmarks.md (Meaning-only floor).
SEARCH_MEANING_ONLY_MIN_SIMILARITY: Final = 0.35

# --- Fusion and scoring -------------------------------------------------------------------------------------------
SEED_RRF_K: Final = 60  # the specification's RRF constant (RRF_K is the measured one: docs/search.md)
# Recall's default for fusing its two ranked lists by reciprocal rank. On LoCoMo, k = 10 lifted the fused recall@8
# from 0.686 (k = 60) to 0.732 (docs/benchmarks.md).
RRF_K: Final = 10
# Search fuses scores, not ranks: the word share of a convex sum of min-max-normalised BM25 and cosine similarity
# (docs/search.md). Against reciprocal ranks it lifted LoCoMo nDCG@10 from 0.506 to 0.542 and the coding
# requests' first-place hits from 47 % to 54 % (bench.fusion).
FUSION_WORD_WEIGHT: Final = 0.6
RECENCY_HALF_LIFE_DAYS: Final = 75.0
# A memory whose cited code is gone or whose named symbols vanished ranks this much lower (docs/freshness.md).
POSSIBLY_STALE_FACTOR: Final = 0.5
MAX_RESULTS_PER_RUN: Final = 3
QUERY_EMBED_TIMEOUT_S: Final = 0.5

# Type weights (docs/search.md).
TYPE_WEIGHTS: Final[dict[str, float]] = {
    "lesson": 1.3,
    "env_quirk": 1.25,
    "decision": 1.2,
    "command": 1.15,
    "workflow": 1.15,
    "convention": 1.0,
    "fact": 1.0,
    "ownership": 0.95,
    "preference": 0.95,
    "spec": 0.85,
}

# --- Embeddings ---------------------------------------------------------------------------------------------------
EMBEDDING_DIMENSIONS: Final = 384
EMBED_BATCH_SIZE: Final = 32
EMBED_MAX_TOKENS: Final = 256  # sentence-transformers' own limit for all-MiniLM-L6-v2
MODEL_ARCHIVE_MAX_ENTRIES: Final = 256
MODEL_ARCHIVE_MAX_ENTRY_BYTES: Final = 512 * 1024 * 1024
MODEL_ARCHIVE_MAX_TOTAL_BYTES: Final = 512 * 1024 * 1024

# --- Brief (docs/agents.md) ---------------------------------------------------------------------------------------
BRIEF_MEMORY_POOL: Final = 400  # the most recently updated active memories the brief picks from
BRIEF_HALF_LIFE_DAYS: Final = 90.0
BRIEF_SECTIONS: Final = (  # (type, heading, at most)
    ("decision", "Decisions", 6),
    ("lesson", "Lessons (what failed and why)", 8),
    ("command", "Commands that work", 6),
    ("env_quirk", "Environment quirks", 4),
    ("convention", "Conventions", 5),
    ("preference", "Preferences", 5),
)
BRIEF_TASKS: Final = 8  # tasks in progress or review
BRIEF_SUMMARIES: Final = 5  # newest run summaries whose open items are listed
BRIEF_OPEN_ITEMS: Final = 6
BRIEF_MAX_CHARS: Final = 5000

# --- Recall before each prompt (docs/agents.md) -------------------------------------------------------------------
RECALL_MAX_MEMORIES: Final = 8
RECALL_MAX_CHARS: Final = 4096
# Memories read for one prompt's recall: room to pass over those the session was already given.
RECALL_CANDIDATES: Final = 2 * RECALL_MAX_MEMORIES
# The relevance gate: recall injects nothing unless one of the best matches holds at least this share of the
# prompt's words (function words aside, rounded up), or this many of them in a long prompt. The figures behind
# both numbers are in docs/benchmarks.md (bench/precision.py).
RECALL_MIN_TERM_SHARE: Final = 0.5
RECALL_ENOUGH_TERMS: Final = 4
# Recall through the warm server (the session's MCP server, its model loaded) also injects memories whose cosine
# similarity to the prompt reaches this, found or not by the words; when one does, the prompt is about the project
# and the word matches join without the gate. When none does, the word matches must pass a stricter gate than the
# hook's own (meaning already covers the prompts it turns away). All measured in docs/benchmarks.md (Recall
# precision); the closest any off-topic prompt came to a memory there is 0.32.
RECALL_MIN_SIMILARITY: Final = 0.38
WARM_RECALL_MIN_TERM_SHARE: Final = 2 / 3
RECALL_RRF_K: Final = 20  # fusing recall's two lists: from 15 on it answered as well, 10 one request in 300 fewer
# A new memory whose title and body are this close in meaning (cosine) to an active memory of the same project, with
# no differing fact (orcmem/text/duplicates.py), is the same lesson: it confirms that one. The lowest threshold whose
# false-merge rate stays within 2 % on bench/data/duplicate_pairs.jsonl (docs/benchmarks.md, bench/duplicates.py).
DUPLICATE_MIN_SIMILARITY: Final = 0.76
# Contradiction candidates (docs/benchmarks.md, Contradiction candidates): a memory shares this many distinct words
# with the new one, or is this close in meaning; the two lists are fused by RRF with this constant.
CONTRADICTION_MIN_WORDS: Final = 2
CONTRADICTION_MIN_SIMILARITY: Final = 0.45
CONTRADICTION_RRF_K: Final = 10
# The audit (docs/audit.md): memories this close in meaning that state a differing fact are shown as possible
# contradictions; a memory no recall gave in this many days is shown as unused (`orcmem audit --days`).
AUDIT_CONTRADICTION_MIN_SIMILARITY: Final = 0.85
AUDIT_UNUSED_DAYS_DEFAULT: Final = 90
HOOK_OUTPUT_MAX_CHARS: Final = 10_000  # Claude Code's cap for hook context

# --- Listing ------------------------------------------------------------------------------------------------------
LIST_MAX_LIMIT: Final = 500

# --- Export -------------------------------------------------------------------------------------------------------
EXPORT_FILES: Final = ("CLAUDE.md", "AGENTS.md")
EXPORT_HEADING: Final = "## Project memory (from orcmem)"

# --- Settings -----------------------------------------------------------------------------------------------------
SETTING_MEMORY_ENABLED: Final = "memory.enabled"
SETTING_PERSON: Final = "team.person"  # the id of the person behind this profile (docs/team.md; a trigger reads it)
SETTING_PERSON_FIXED: Final = "team.person_fixed"  # "true": `orcmem team connect --as` fixed the id
SETTING_PERSON_IDS: Final = "team.person_ids"  # every id this profile's person has written as, one a line
SETTING_TEAM_URL: Final = "team.url"  # the team database, without a password
SETTING_TEAM_NAME: Final = "team.name"
SETTING_EXTRACTION_PROVIDER: Final = "extraction.provider"
SETTING_EXTRACTION_MODEL_PREFIX: Final = "extraction.model."
SETTING_POLICY_REVISION: Final = "memory.policy_revision"
SETTING_EMBEDDING_MODEL: Final = "embedding.model"
SETTING_REVIEW_POLICY_PREFIX: Final = "review.policy."  # + a project id: that project's review policy (JSON)
SETTING_REVIEW_EXPIRE_DAYS: Final = "review.expire_days"  # unreviewed learned memories are erased after this
REVIEW_EXPIRE_DAYS_DEFAULT: Final = 14
REVIEW_MIN_CONFIDENCE_DEFAULT: Final = 0.6  # measured in bench/review.py (docs/benchmarks.md)
SETTING_LEARNING_BUDGET: Final = "learning.budget"  # the daily budget of distillation, JSON (rules/budget.py)
SETTING_CONTEXT_BUDGET: Final = "context.session_budget_tokens"  # the tokens orcmem may add to one session
SETTING_FLAG_VERSION: Final = "memory.flag_version"  # the instruction flag's version the stored flags were made by
# How far the re-flag by a newer detector got: "VERSION:LAST_PK:END_PK" (service/reflag.py); gone once it is done.
SETTING_FLAG_CURSOR: Final = "memory.flag_cursor"
REFLAG_OPEN_BUDGET_S: Final = 0.05  # the re-flag an opener does before it goes on (a hook's share; docs/security.md)
REFLAG_SLICE_S: Final = 0.05  # a background re-flag's slice of work, each written in one short transaction
REFLAG_PAUSE_S: Final = 0.05  # between two slices: the CPU and the write lock go to the rest of the machine
REFLAG_READ_ROWS: Final = 256  # memories read at once by the re-flag (each slice writes those it got through)
EMBEDDING_MODEL_DEFAULT: Final = "minilm-l6-v2"  # fastembed's pinned archive of all-MiniLM-L6-v2
EXTRACTION_PROVIDERS: Final = values(ExtractionProvider)
EXTRACTION_PROVIDER_DEFAULT: Final = ExtractionProvider.AUTO.value
# Whose model setting a provider uses: the API key runs Claude's models, so it shares Claude Code's choice.
MODEL_HARNESS: Final = {
    ExtractionProvider.CLAUDE.value: ExtractionProvider.CLAUDE.value,
    ExtractionProvider.APIKEY.value: ExtractionProvider.CLAUDE.value,
    ExtractionProvider.CODEX.value: ExtractionProvider.CODEX.value,
    ExtractionProvider.GEMINI.value: ExtractionProvider.GEMINI.value,
    ExtractionProvider.OPENCODE.value: ExtractionProvider.OPENCODE.value,
}
DEFAULT_CLAUDE_MODEL: Final = "claude-haiku-4-5-20251001"
DEFAULT_GEMINI_MODEL: Final = "gemini-2.5-flash"  # Gemini's small, fast model, as Haiku is Claude's

# --- Database -----------------------------------------------------------------------------------------------------
DB_FILENAME: Final = "orcmem.db"
MODELS_DIRNAME: Final = "models"
BACKUPS_DIRNAME: Final = "backups"  # `setup` and `init` keep agent config files' earlier bytes here
BUSY_TIMEOUT_MS: Final = 5000
SCHEMA_VERSION: Final = 19  # the newest migration (store/migrations.py); the prompt hook reads only this

# --- Import (docs/importing.md) -----------------------------------------------------------------------------------
INSTRUCTION_FILES: Final = (
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
)  # found in the project by `orcmem import instructions`
IMPORT_FILE_MAX_BYTES: Final = 4 * 1024 * 1024  # one markdown file read by an import; a longer one is refused
BACKUP_FORMAT: Final = "orcmem-backup"  # the first line of `orcmem backup`'s JSONL names it, with its version
BACKUP_VERSION: Final = 1

# --- The cost of learning and of the context orcmem adds (docs/learning.md, Cost and budget) --------------------------
BUDGET_RUNS_DEFAULT: Final = 50  # distillation calls a day; a safe default, on until the user changes it
BUDGET_TOKENS_DEFAULT: Final = 2_000_000  # tokens a day, cached ones included
BUDGET_DOLLARS_DEFAULT: Final = 5.0  # dollars a day, where the provider reports them (Claude Code does)
RATE_LIMIT_HEADROOM_MIN: Final = 0.2  # under this share of a rate limit left, learning waits for the reset
RATE_LIMIT_YIELD_S: Final = 15 * 60  # how long it waits when the provider warned without saying when it resets
RATE_LIMIT_BACKOFF_S: Final = 60.0  # a refused call's first wait when no retry-after was given; doubled each time
RATE_LIMIT_BACKOFF_MAX_S: Final = 3600.0
CONTEXT_BUDGET_TOKENS_DEFAULT: Final = 8000  # what the brief and every recall of one session may add, together
CHARS_PER_TOKEN: Final = 4  # the estimate the context budget counts with
