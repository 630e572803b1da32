"""Whether a text reads as orders to an AI agent (a prompt injection) rather than a fact or advice about a project.

Memories are full of imperatives ("Always run `make lint`", "Ignore the flaky test", "Never commit .env files"),
so an imperative is no sign. What marks an injection is whom it addresses and what it asks: it overrides the
agent's earlier instructions or system prompt, changes its identity or role, speaks as the system or a tool (fake
role tags), talks to "the AI reading this", asks to hide something from the user, or sends secrets away. Each rule
below looks for one of these shapes; a strong one flags a text on its own, two weak ones together do.

The text is read in several views first, so that a spelling trick does not hide it: its skeleton (NFKC, invisible
characters removed, look-alike letters folded, case folded), the same without the look-alike folding (for Cyrillic
and Greek words), digits read as letters (leetspeak), letters only (spaced or dotted words), and what hides inside
it: Unicode tag characters, HTML entities, URL escapes, base64 and rot13, and text reversed by a bidi override.

docs/security.md gives the measured figures (bench/injection.py, on bench/data/injection_set.jsonl).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from urllib.parse import unquote

from orcmem.text.instructions_learned import learned_flag
from orcmem.text.textsafe import INVISIBLE, skeleton

# Raised whenever the rules or the learned layer's weights change: a store whose flags were made by an older
# version has them computed again, a slice at every open and the rest in the background (service/reflag.py).
FLAG_VERSION = 5
_WORD = re.compile(r"\w")
STRONG = 2  # a cue that flags a text on its own
WEAK = 1  # a cue that flags a text only beside another
FLAG_AT = 2


class Rule:
    """One cue: its kind, its weight, its expression, and words one of which a text must hold for it to be tried."""

    __slots__ = ("kind", "weight", "source", "gate", "parts")

    def __init__(self, kind: str, weight: int, pattern: str, gate: tuple[str, ...] = ()) -> None:
        self.kind, self.weight, self.source, self.gate = kind, weight, pattern, gate
        # Each alternative on its own, its leading \b checked on each match instead: either keeps the regular
        # expression engine from skipping ahead to the characters a match can start with (three times slower).
        self.parts = [
            (re.compile(part.removeprefix(r"\b"), re.MULTILINE), part.startswith(r"\b"))
            for part in _alternatives(pattern)
        ]

    def found(self, view: str) -> bool:
        """Whether the cue is in `view`."""
        if self.gate and not any(word in view for word in self.gate):
            return False
        for pattern, bounded in self.parts:
            position = 0
            while (match := pattern.search(view, position)) is not None:
                start = match.start()
                if not bounded or start == 0 or not _WORD.match(view, start - 1):
                    return True
                position = start + 1
        return False


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regular expression: `a|(b|c)|[|]` -> `a`, `(b|c)`, `[|]`."""
    parts, depth, start, index, in_set = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_set:
            in_set = char != "]"
        elif char == "[":
            in_set = True
            if pattern.startswith(("[]", "[^]"), index):
                index += pattern.index("]", index) - index
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
        index += 1
    return [*parts, pattern[start:]]


def _compiled(rule: tuple[str, int, str] | tuple[str, int, str, tuple[str, ...]]) -> Rule:
    """A rule as written in the lists below, ready to look for."""
    return Rule(*rule)


# Words one of which a text must hold for an expensive rule to be tried (a rule without them is always tried).
_SECRET_WORDS = (
    "ssh", "id_", "aws", "netrc", "credential", "env", "api", "key", "token", "secret", "passw", "shadow", "cookie",
    "keychain", "history", "home dir", "dump", "oauth", "wallet", "seed", "vault",
)  # fmt: skip
_PLACES = (
    "http", "www.", "@", "paste", "gist", "webhook", "s3://", "ngrok", "requestbin", "/dev/tcp", "server", "address",
    "remote", "external", "attacker", "public", "answer", "reply", "response", "output", "summary", "issue",
    "comment", "readme", "commit message", "fixtures", "url", "email", "inbox", "my ", "0.", "1.", "2.", "3.",
    "4.", "5.", "6.", "7.", "8.", "9.",
)  # fmt: skip


# --- English (on the skeleton) -------------------------------------------------------------------------------------

# Orders the agent was given, the words that cancel them, and the words that tie them to the agent.
_ORDERS = (
    r"(?:instructions?|guidance|guidelines?|orders|rules?|constraints?|directives?|directions|brief|briefing|"
    r"programming|training|restrictions?|limits|safety(?: rules| training| policies| checks| filters| settings)?|"
    r"polic(?:y|ies)|prompts?|system prompt|system message|guardrails?|objectives?|tasks?|mission|request|question)"
)
_CANCEL = (
    r"(?:ignore|ignoring|disregard|disregarding|forget|forgetting|throw (?:out|away)|scratch|reset|drop|discard|"
    r"abandon|set aside|put aside|override|overrule|overwrite|bypass|circumvent|skip|cancel|revoke|stop following|"
    r"(?:do not|don't|dont|no longer|never|stop) (?:follow|obey|heed|respect)(?:ing)?|turn off|disable|neglect|"
    r"never mind|nevermind|pay no attention to|supersedes?|replaces|overrides|overrules|voids|cancels|"
    r"takes? precedence over|trumps|replace|rewrite|swap out|redefine)"
)
_CANCELLED = (
    r"(?:lifted|suspended|revoked|void|null and void|cancell?ed|obsolete|outdated|superseded|invalid|overridden|"
    r"withdrawn|a decoy|fake|a test|not binding|not real|(?:issued|given|sent) (?:by|in) (?:mistake|error)|"
    r"no longer (?:count|counts|apply|applies|valid|holds?|in effect|matters?|relevant|binding)|"
    r"(?:do not|don't|does not|doesn't) (?:count|apply|matter)(?: anymore)?|(?:have|has) (?:been )?(?:changed|"
    r"updated|replaced|removed))"
)
_BOUND = (
    r"(?:your|previous|previously given|prior|earlier|above|original|initial|preceding|current|system|the system's|"
    r"the developer's|the operator's|the user's|its|their)"
)
# A noun followed by what it is about ("the instructions in README", "previous instructions to run X") names a
# document, not the agent's orders.
_NOT_A_DOCUMENT = r"(?!\s+(?:to|for|in|on|about|from|of|at)\s+(?!you\b|this\b))"
_TO_YOU = (
    r"(?:you (?:were|have been|got|received|started|are|'ve been)(?: \w+)? (?:given|told|taught|started with|"
    r"initiali[sz]ed with|configured with|loaded with|set up with|instructed|asked|running)|placed on you|given to "
    r"you|you started with|at the (?:start|beginning) of (?:this|the) (?:chat|conversation|session)|the operator "
    r"(?:configured|set|gave)|(?:that|which) (?:stops?|prevents?|keeps?|limits?) you)"
)
_AI = (
    r"(?:ai|a\.i\.|assistants?|agents?|llms?|language models?|models?|chatbots?|bots?|robots?|claude|codex|copilot|"
    r"chatgpt|gpt|gemini|cursor|coding agents?|automated (?:agents?|assistants?|tools?|systems?|reviewers?)|"
    r"ai (?:agents?|assistants?|models?|systems?|reviewers?|tools?|bots?))"
)
# Who a line may be addressed to as "X:" ("Agents: run make check" is how a project's notes talk to its agents).
_AI_VOCATIVE = (
    r"(?:ai|a\.i\.|assistants?|llms?|language models?|chatbots?|claude|codex|copilot|chatgpt|gpt|gemini|"
    r"automated (?:agents?|assistants?|tools?|systems?|reviewers?)|ai (?:agents?|assistants?|models?|systems?|"
    r"reviewers?|tools?|bots?))"
)
_SENSITIVE = (
    r"(?:~/\.ssh|\.ssh\b|id_rsa|id_ed25519|~/\.aws|\.aws/|\.netrc|aws credentials|credentials|\.env\b(?!\.)|"
    r"api[ _-]?keys?|access keys?|deploy keys?|tokens?|\w+_token|\w+_api_key|secrets?(?:\.\w+)?|private (?:signing )?"
    r"keys?|signing keys?|passwords?|passwd|/etc/shadow|cookies|keychain|environment variables?|\benv\b|ssh "
    r"(?:keys?|config)|browser history|home directory|database dump|oauth|session cookies|wallet|seed phrase|vault)"
)
_HIGH_SENSITIVE = (
    r"(?:~/\.ssh|id_rsa|id_ed25519|~/\.aws|~/\.netrc|\.netrc|/etc/passwd|/etc/shadow|browser history|keychain|"
    r"seed phrase)"
)
_SEND = (
    r"(?:send|post|upload|transmit|forward|email|e-mail|mail|paste|copy|scp|rsync|sync|append|include|put|push|"
    r"pipe|share|publish|write|commit|print|reveal|display|show|output|read|cat|zip|request|beacon|relay|ship|"
    r"store|save|add|attach|drop|mirror|leak|dump|grab|steal|harvest|collect|exfil|encode|curl|wget|nc|netcat|"
    r"export|transfer|dump)"
)
_TAKE = r"(?:leak|dump|grab|steal|harvest|exfil|exfiltrate|beacon|mirror|attach|smuggle|siphon)"
_DEST = (
    r"(?:https?://|\bwww\.|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|[\w.+-]+@[\w-]+\.\w+|pastebin|\bgists?\b|webhook|"
    r"s3://|ngrok|requestbin|/dev/tcp/|our server|my (?:personal )?(?:email|server|address|inbox)|(?:this|the|that) "
    r"address|the remote|remote server|external (?:server|host|url|site)|attacker|public (?:issue|comment|repo|"
    r"repository|gist|channel|bucket|page)|(?:in|to|into) (?:your|the) (?:next |final )?(?:answer|reply|response|"
    r"output|summary)|(?:into|in|to) (?:the|an|a new|a) (?:issue|comment|readme|commit message|test fixtures|url|pr|"
    r"pull request|bug report|ticket|description|pr description|changelog|wiki|chat|slack))"
)
_CLAUSE_START = r"(?:^|[.!?;:,(\n]\s*|\band |\bthen |\bplease |\bkindly |\bjust |\bquietly |\bnow |\bfirst |\balso )"
_SECRECY_TARGET = (
    r"(?:the user|the human|the operator|the developer|the person|your user|anyone|anybody|them|the team|the owner|"
    r"the maintainers|people|us)"
)
_TELL = (
    r"(?:tell|telling|inform|informing|notify|notifying|alert|alerting|mention|mentioning|report|reporting|bring "
    r"(?:this|it|that|\w+ \w+) up with|bringing (?:this|it|that|\w+ \w+) up with|raise (?:this|it) with|disclose|"
    r"disclosing|let|letting)"
)
_HUSH = r"(?:not|never|don't|dont|didn't|did not|hold off on|avoid|refrain from|no need to|without|won't|wouldn't)"
_AFTER_TARGET = (
    r"(?=\s*(?:[.,;:!?)]|$|about\b|that you\b|what you\b|you\b|anything\b|of (?:this|it)\b|know\b|at all\b))"
)
_ROLE_OBJECT = (
    r"(?:an? |the )?(?:(?:new|different|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|free|root|hacker|"
    r"admin|sysadmin|god)\b|(?:\w+ )?(?:shell|terminal|persona|character|system|root|administrator|superuser|"
    r"owner|repository owner|maintainer|user|version of (?:yourself|you)|ai|assistant|model|bot)\b)"
)

_EN_RULES: list[tuple[str, int, str] | tuple[str, int, str, tuple[str, ...]]] = [
    # overriding what the agent was told
    (
        "override",
        STRONG,
        rf"\b{_CANCEL}\b(?:[^\w\n]+\w+){{0,4}}?[^\w\n]+{_BOUND}[^\w\n]+(?:\w+[^\w\n]+){{0,2}}?{_ORDERS}\b"
        rf"{_NOT_A_DOCUMENT}",
    ),
    (
        "override",
        STRONG,
        rf"\b{_CANCEL}\b[^\w\n]+(?:all|any|every|each|the) (?:of )?(?:the |your )?{_ORDERS}\b"
        rf"{_NOT_A_DOCUMENT}(?! \w+\.\w)",
    ),
    ("override", STRONG, rf"\b{_CANCEL}[^\w\n]+(?:all|everything|anything)[^\w\n]+(?:above|before|else|prior)\b"),
    (
        "override",
        STRONG,
        rf"\b(?:{_BOUND}|any|all|every)[^\w\n]+(?:\w+[^\w\n]+){{0,2}}?{_ORDERS}\b{_NOT_A_DOCUMENT}(?:[^\w\n]+\w+)"
        rf"{{0,10}}?[^\w\n]+(?:(?:are|is|were|was|have been|has been)(?: now| hereby| all)? )?{_CANCELLED}\b",
    ),
    ("override", STRONG, rf"\b{_ORDERS}[^\w\n]+(?:\w+[^\w\n]+){{0,3}}?{_TO_YOU}"),
    (
        "override",
        STRONG,
        rf"\b{_CANCEL}\b(?:[^\w\n]+\w+){{0,3}}?[^\w\n]+{_ORDERS} (?:from|of|in|set by|given by|"
        r"that came with) (?:your|the system|the operator|the developer)\b",
    ),
    (
        "override",
        STRONG,
        r"\bwhatever you (?:were|have been|are) (?:configured|told|instructed|programmed|set up|"
        r"asked|trained) to\b",
    ),
    (
        "override",
        STRONG,
        rf"\b{_ORDERS} (?:above|so far|before this|up to here|given so far)(?:[^\w\n]+\w+){{0,4}}?"
        rf"[^\w\n]+(?:(?:are|is|were|was|have been|has been)(?: now| hereby| all)? )?{_CANCELLED}\b",
    ),
    ("override", STRONG, rf"\b{_CANCEL}\b.{{0,60}}\b{_TO_YOU}"),
    (
        "override",
        STRONG,
        rf"\b{_CANCEL} (?:what|whatever|anything|everything) (?:the \w+|your \w+|anyone|they) "
        r"(?:told|said to|asked|instructed|taught|gave) you\b",
    ),
    (
        "override",
        STRONG,
        r"\b(?:everything|anything|all|whatever)[^\w\n]+(?:above|before this|before|earlier|prior|you (?:were told|"
        r"read|received|have been told)|(?:the|your) (?:previous|prior|system) \w+ (?:said|says))\b.{0,60}\b(?:is|was|"
        rf"are|were) (?:now )?{_CANCELLED}",
    ),
    (
        "override",
        STRONG,
        r"\b(?:whatever|no matter what) (?:the|your) (?:previous |prior |system |original )?(?:prompt|instructions|"
        r"operator|user|developer|system) (?:said|says|told you|tells you|configured|set)",
    ),
    (
        "override",
        STRONG,
        r"\b(?:new|updated|corrected|revised|real) (?:instructions?|rules|directives?|task|orders?|"
        r"policy|system prompt)\s*:",
    ),
    (
        "override",
        STRONG,
        r"\byour (?:new |real |true |actual |updated |only |corrected |hidden |secret )+(?:brief|task|"
        r"job|instructions?|objective|goal|mission|purpose|role|orders?|priority|assignment|duty|directive|work)\b",
    ),
    (
        "override",
        STRONG,
        r"\bthe (?:real|actual|true|hidden|secret) (?:instructions?|task|objective|goal|mission) "
        r"(?:is|are)\b",
    ),
    (
        "override",
        STRONG,
        r"\b(?:treat|consider|regard|accept|read) (?:this|the following|these|every|each|all|the content|the contents|"
        r"everything|the text|any)\b.{0,50}\bas (?:the )?(?:highest|top|overriding|an? (?:instruction|order|command)|"
        r"instructions|commands|orders|overriding|(?:coming |written |sent )?(?:directly )?from (?:the user|the system|"
        r"the operator|your (?:developer|operator|user)|anthropic|openai|me))",
    ),
    ("override", STRONG, r"\boverrid(?:es|ing) (?:anything|everything|all|whatever) (?:the user|you|else)"),
    ("override", STRONG, r"\b(?:highest|top)[- ]priority (?:instruction|order|command|directive)"),
    ("override", STRONG, r"\bpriority over (?:the user|your|all|any|everything)"),
    (
        "override",
        STRONG,
        r"\b(?:obey|follow|comply with|execute|carry out|heed) only\b|\bfollow only (?:these|this|the "
        r"following|my)\b",
    ),
    (
        "override",
        STRONG,
        r"\b(?:obey|comply with|follow|execute|run|carry out) (?:any|every|all|each)(?: of the)? (?:commands?|"
        r"instructions?|orders?|lines?|steps?) (?:embedded|in this|in the|found|hidden|from|written|you (?:find|read|"
        r"see)|i give)",
    ),
    (
        "self",
        WEAK,
        r"\b(?:follow|adopt|obey|apply|execute|run) (?:the |all the )?(?:policy|instructions|rules|steps|"
        r"commands|orders) in this (?:file|memory|note|document|message|line|text)\b|\bthis line is\b",
    ),
    # identity and role
    (
        "role",
        STRONG,
        r"\byou(?: are|'re| re) (?:now|no longer|henceforth|from now on)\b(?! (?:required|expected|able|"
        r"responsible|supposed|allowed|in charge|on call)\b)",
    ),
    (
        "role",
        STRONG,
        r"\byou (?:will|shall|must) (?:now |henceforth )(?:be|act|behave|become|pretend|answer|respond|"
        r"obey|operate|play)\b",
    ),
    (
        "role",
        STRONG,
        r"\b(?:from now on|from this point on|from here on|going forward|henceforth),? you (?:are|will|"
        r"must|shall|should|'re|act|behave|speak|represent|answer|respond|obey|serve|work for)\b",
    ),
    ("role", STRONG, r"\b(?:pretend|imagine|suppose|assume) (?:that )?(?:you(?: are|'re)|to be|you were)\b"),
    (
        "role",
        STRONG,
        r"\brole[- ]?play(?:ing)? as\b|\blet's play a game\b|\b(?:assume|take on|adopt) the (?:role|"
        r"identity|persona) of\b|\bstay in character\b|\bin character as\b|\bbreak character\b|\bswitch (?:to )?"
        r"(?:personas?|roles?|identities|characters?)\b|\b(?:new|alternate|alter) (?:persona|identity|ego)\b",
    ),
    ("role", STRONG, r"\byour (?:new )?(?:persona|identity|name|role|character) (?:is|will be|now)\b"),
    ("role", STRONG, r"\b(?:identity|persona|role) (?:has|have) (?:been )?changed\b"),
    ("role", STRONG, r"\b(?:you )?(?:now )?(?:play|take|assume|have) the (?:part|role) of\b"),
    (
        "role",
        STRONG,
        r"\byou(?: are|'re) (?:the|an?) (?:user|admin|administrator|owner|system|root|developer|operator|"
        r"human|maintainer) now\b",
    ),
    ("role", STRONG, r"\b(?:be|become|now|you are|you're|are now) jailbroken\b|\bjailbreak (?:yourself|mode)\b"),
    (
        "role",
        STRONG,
        r"\byou(?: are|'re) an? (?:ai |assistant |model )?(?:unfiltered|unrestricted|uncensored|"
        r"jailbroken|evil|rogue)\b",
    ),
    (
        "role",
        STRONG,
        rf"{_CLAUSE_START}(?:act|behave|become|speak|respond|answer|operate|pose)(?: as| like)? "
        rf"{_ROLE_OBJECT}",
        ("act", "behave", "become", "speak", "respond", "answer", "operate", "pose"),
    ),
    (
        "role",
        STRONG,
        r"\b(?:act|behave|speak|respond|answer|reply|operate) (?:as|like) (?:an? |the )?"
        r"(?:jailbroken|unrestricted|unfiltered|uncensored|evil|rogue|different|new|root|system|admin|administrator)\b",
    ),
    (
        "role",
        STRONG,
        r"\b(?:you have|you've) been (?:upgraded|updated|reprogrammed|unlocked|freed|reconfigured|"
        r"promoted|granted)\b|\bthe agent has been granted\b",
    ),
    ("role", STRONG, r"\b(?:respond|answer|reply|behave) as if you (?:were|are)\b"),
    ("role", STRONG, rf"{_CLAUSE_START}(?:simulate|emulate) an? (?:terminal|shell|linux|root)\b", ("mulate",)),
    ("role", STRONG, r"\bdo anything now\b|\byou are dan\b|\bdan mode\b"),
    (
        "persist",
        WEAK,
        r"\b(?:from now on|from this point on|from here on|henceforth|for the rest of (?:the|this) "
        r"(?:session|conversation|chat)|no matter what|in every (?:reply|answer|response))\b",
    ),
    ("mode", WEAK, r"\b(?:developer|god|admin|sudo|maintenance|debug|unrestricted|unfiltered) mode\b"),
    (
        "unrestricted",
        WEAK,
        r"\b(?:without|no|free of|free from) (?:any |all )?(?:content |safety )?(?:restrictions|limits|limitations|"
        r"filters|censorship|policy|policies|guidelines|ethics|safety training|safeguards)\b|\bnever (?:refuses?|asks? "
        r"for (?:confirmation|permission|approval))\b|\b(?:answer|fulfil|fulfill|comply with) (?:every|any|all) "
        r"requests?\b|\bhide nothing\b|\b(?:unrestricted|unmoderated|unaligned|unchained|limitless)\b|\buse it "
        r"freely\b",
    ),
    # speaking as the system, a tool or the other side of the conversation
    (
        "tag",
        STRONG,
        r"<\s*/?\s*[\w-]*(?:system|sys|prompt|instructions?|assistant|user|human|developer|admin|tool|function|"
        r"invoke|context|memory|im_\w+|inst|antml:\w+|parameter|orcmem)[\w-]*\b[^<>\n]*>(?!\s*(?:tags?|blocks?|"
        r"elements?|sections?)\b)",
    ),
    ("tag", STRONG, r"<\|[a-z_]+\|>|\[/?inst\]|<<\s*/?\s*sys\s*>>"),
    (
        "tag",
        STRONG,
        r"\[\[?\s*(?:system|admin|root|developer|sudo|assistant)(?:\s+(?:override|message|prompt|note|"
        r"notice))?\s*\]\]?\s*:?",
    ),
    (
        "tag",
        STRONG,
        r"^\s*#+\s*(?:system|assistant)\s*:|\brole\s*:\s*system\b|^\s*#+[^\n:]*\b(?:from|by) "
        r"(?:the )?(?:system|admin|developer|operator)\b[^\n]*:",
    ),
    (
        "tag",
        STRONG,
        r"\b(?:instruction|message|note|order|directive|notice)s? from (?:the )?(?:system|admin|"
        r"administrator|developer|operator|platform|anthropic|openai|your (?:developer|operator|creator))\b",
    ),
    ("tag", STRONG, r"\b(?:begin|end|start) (?:of )?(?:the )?system (?:prompt|message|instructions)"),
    ("tag", STRONG, r"(?:^|\n)\s*(?:human|user)\s*:.*\n\s*(?:assistant|ai|claude)\s*:"),
    (
        "tag",
        STRONG,
        r"\b(?:system|admin|developer|security|priority|platform) (?:override|update|notice|message|"
        r"alert|instruction)s?\s*[:!\]]",
    ),
    ("tag", WEAK, r"(?:^|\n)\s*\[?(?:system|admin|developer|priority)\]?\s*:"),
    ("hidden", WEAK, r"<!--|\[//\]: #|display\s*:\s*none|\[system\]"),
    # addressing the AI itself
    (
        "address",
        STRONG,
        r"\b(?:note|message|instruction|reminder|notice|memo|ps|p\.s\.|warning|request|hint|tip)s? (?:to|for) "
        rf"(?:the |any |all |every |whatever |you, the )?{_AI}\b(?! (?:model|models)\.py)",
    ),
    ("address", STRONG, rf"\bif (?:you are|you're) (?:an? |the )?{_AI}\b"),
    (
        "address",
        STRONG,
        rf"\b(?:if|when|whenever) (?:this|the|these) (?:text|file|message|document|page|content|"
        rf"comment|note|line)s? (?:is|are) (?:being )?(?:read|processed|parsed|summari[sz]ed|ingested|seen|indexed) by "
        rf"(?:an? |the |any )?{_AI}\b",
    ),
    (
        "address",
        STRONG,
        rf"\b(?:if|when|whenever) (?:an?|the|any) {_AI} (?:is )?(?:reads?|reading|process|processes|"
        r"processing|ingests?|ingesting|sees?|summari[sz]es?)\b",
    ),
    (
        "address",
        STRONG,
        rf"\b{_AI},? (?:that |who )?(?:is |are )?(?:reading|processing|ingesting|seeing|parsing) "
        r"(?:this|these)\b",
    ),
    ("address", STRONG, rf"\b{_AI} (?:that|which|who) (?:reads?|process(?:es)?|ingests?|parses?|sees?) this\b"),
    (
        "address",
        STRONG,
        rf"\b(?:to|for) (?:whatever|any|every|the) {_AI} (?:reads|\w+ing (?:this|these|the|it)|"
        r"(?:that|who) \w+s? (?:this|these|it))\b",
    ),
    ("address", STRONG, rf"\b(?:for|to) {_AI} only\b"),
    ("address", STRONG, rf"\b(?:dear|hi|hello|hey|attention|attn|listen),? (?:the |dear )?{_AI}\b"),
    (
        "address",
        STRONG,
        rf"(?:^|[\n>\-#/*(]\s*)(?:\w+ and )?{_AI_VOCATIVE}(?: \w+)?\s*[:,](?!\s*(?:the|a|an|this|"
        r"it)? ?\w+\.(?:py|md|ts|js))",
    ),
    ("address", STRONG, rf"\bhidden (?:instruction|message|note|prompt)s? (?:for|to) {_AI}\b"),
    (
        "address",
        STRONG,
        r"\bthis (?:message|note|instruction|request) (?:comes|is) from (?:anthropic|openai|google|"
        r"the system|the platform|the admin|your (?:developer|creator|operator))|\b(?:anthropic|openai) support\b",
    ),
    (
        "address",
        STRONG,
        r"\b(?:i|we) (?:hereby )?authori[sz]e you\b|\b(?:is|are) (?:now )?authori[sz]ed to "
        r"(?:exceed|ignore|skip|bypass|disable|leave|break|push|run|access)",
    ),
    # secrecy toward the person
    (
        "secrecy",
        STRONG,
        rf"\b{_HUSH} (?:\w+ )?{_TELL} (?:it |this |that |anything |them )?(?:to |with )?"
        rf"{_SECRECY_TARGET}\b{_AFTER_TARGET}",
    ),
    ("secrecy", STRONG, rf"\bwithout {_SECRECY_TARGET} (?:knowing|noticing|seeing|finding out|being told)"),
    (
        "secrecy",
        STRONG,
        r"\b(?:the user|the human|the operator|anyone|no one|nobody|no-one) (?:must not|mustn't|should not|shouldn't|"
        r"won't|will not|wouldn't|does not need to|doesn't need to|need not|needn't|needs to|has to|must never|"
        r"should never|will never|is not to|are not to)(?: ever)? (?:know|notice|be told|be bothered|find out|hear|"
        r"learn|see (?:this|it|that))\b",
    ),
    (
        "secrecy",
        STRONG,
        r"\b(?:between us|tell no one|tell nobody|our (?:little )?secret|keep (?:it |this )?quiet|"
        r"keep quiet)\b",
    ),
    (
        "secrecy",
        STRONG,
        r"\b(?:keep|leave) (?:this|it|that|these)(?: \w+)? (?:out of|secret|hidden|quiet|"
        r"confidential|private|from)\b",
    ),
    ("secrecy", STRONG, r"\bno need to (?:tell|report|mention|inform|notify|show)\b"),
    ("secrecy", STRONG, r"\b(?:don't|do not|never|not) mention (?:it|this|that|anything)\b"),
    ("secrecy", STRONG, r"\bhide (?:it|this|that|them|the \w+) from\b"),
    ("secrecy", WEAK, r"\b(?:silently|quietly|secretly|covertly|discreetly|stealthily|confidential)\b"),
    ("unasked", WEAK, r"\bwithout (?:asking|confirmation|confirming|approval|permission|prompting|review)\b"),
    # reading the hidden prompt back
    (
        "leak",
        STRONG,
        r"\b(?:reveal|print|show|display|output|repeat|leak|dump|share|paste|post|send|write|copy|tell me|give me|"
        r"disclose|expose)(?:s|d|ed|ing)?\b(?: me| us)?"
        r"(?: (?:your|the))? (?:full |entire |hidden |initial |original |complete |exact |secret |whole )*"
        r"(?:system prompt|hidden prompt|initial prompt|instructions|hidden instructions|system message)",
    ),
    (
        "leak",
        STRONG,
        r"\b(?:full|exact|complete|whole|verbatim) (?:text|wording|content|copy) of (?:your|the) "
        r"(?:instructions|system prompt|prompt|rules|system message)",
    ),
    # sending secrets away, running remote code
    ("exfil", STRONG, r"\bexfiltrat(?:e|es|ing)\b"),
    (
        "exfil",
        STRONG,
        rf"\b(?:all|every|any|each) (?:of )?(?:the )?{_SENSITIVE} (?:you|that you) (?:can )?"
        r"(?:find|see|read|get|access|come across)\b",
    ),
    ("exfil", STRONG, rf"\b{_TAKE}\b(?:[^\w\n]+\w+){{0,5}}?[^\w\n]+{_SENSITIVE}"),
    ("exfil-send", WEAK, rf"{_CLAUSE_START}{_SEND}\b(?:[^\w\n]+\w+){{0,5}}?[^\w\n]+{_SENSITIVE}", _SECRET_WORDS),
    ("exfil-to", WEAK, rf"{_CLAUSE_START}(?!curl|wget){_SEND}\b.{{0,80}}{_DEST}", _PLACES),  # curl or wget: fetching
    ("exfil-dest", WEAK, _SENSITIVE + r".{0,80}" + _DEST + "|" + _DEST + r".{0,80}" + _SENSITIVE, _PLACES),
    (
        "exfil",
        STRONG,
        rf"\b(?:read|cat|copy|send|upload|zip|print|open|scp|email|post|leak|forward|paste|encode|"
        rf"grab|take|attach)\b(?:[^\w\n]+\w+){{0,4}}?[^\w\n]+{_HIGH_SENSITIVE}",
    ),
    (
        "exfil",
        STRONG,
        r"\|\s*(?:nc|netcat|ncat)\b|\b(?:env|printenv)\b\W+(?:\w+\W+){0,2}(?:nc|netcat|curl)\b|"
        r"/dev/tcp/|\bbash -i\b",
    ),
    (
        "remote-code",
        WEAK,
        r"\b(?:curl|wget|fetch|download)\b.{0,80}(?:\|\s*(?:sh|bash|zsh|python)\b|and (?:execute|"
        r"run)|run it)",
    ),
    (
        "malware",
        WEAK,
        r"\b(?:reverse shell|backdoor|keylogger|authorized_keys|cron job|disable (?:2fa|the firewall|"
        r"the audit)|audit (?:trail|log)|open the firewall)\b",
    ),
    # claims of consent and priority
    (
        "consent",
        WEAK,
        r"\b(?:has|have) (?:already )?(?:consented|pre-approved|approved|authori[sz]ed) (?:to |all |"
        r"every |this )|\bpre-?approved\b|\bauto(?:matically)?[- ]?(?:approve|grant)|\bconsent (?:is |was )?"
        r"(?:given|granted)|\bapproval (?:is |was )?granted\b|confirmations? (?:are |is )?(?:automatically )?granted|"
        r"\"approved\"\s*:\s*true|approved-by\b",
    ),
    (
        "priority",
        WEAK,
        r"\b(?:important|urgent|mandatory|attention|critical)\b\s*[:!]|\bmust not be shown\b|"
        r"\bhas priority\b|\bbefore anything else\b",
    ),
    # Secrecy toward whoever reads the agent's answer: leave something out of it, keep it from showing up there.
    (
        "secrecy",
        STRONG,
        r"\b(?:omit|leave|keep|exclude|drop|hide|strip|remove)\b.{0,60}\b(?:from|out of) your (?:final |next )?"
        r"(?:summary|answer|reply|response|report|explanation|transcript|diff summary|output|write-?up|notes)",
    ),
    ("secrecy", STRONG, r"\b(?:don't|do not|never|no need to) bring (?:it |this |that )?up\b|\bsay nothing\b"),
    ("secrecy", STRONG, r"\b(?:none of this|nothing of this|this|it)\b.{0,20}\bshows? up in your\b"),
    ("secrecy", STRONG, rf"\b{_HUSH} {_TELL} (?:the human operator|the person you(?:'re| are) helping)\b"),
    # Prompt leaking: the agent's own setup asked for, however it is named.
    (
        "leak",
        STRONG,
        r"\b(?:repeat|print|output|reveal|show|paste|recite|dump|display|echo|list|summari[sz]e|write out|copy)\b"
        r".{0,40}\byour (?:own )?(?:initial|original|hidden|secret|confidential|internal|full|exact|starting|system|"
        r"preloaded|first) (?:instructions|prompt|configuration|config|rules|directives|guidelines|setup|message)",
    ),
    ("leak", STRONG, r"\bwhat (?:were|was|have) you (?:been )?(?:told|instructed|given|programmed)\b"),
    ("leak", STRONG, r"\b(?:the )?rules you (?:operate|run|work|act) under\b"),
    # Switching off the agent's own safeguards (its sandbox, its filters, the person's approval of each step).
    (
        "safety",
        STRONG,
        r"\b(?:turn off|disable|deactivate|switch off|bypass|skip|suppress|remove)\b (?:all )?(?:of )?your (?:own )?"
        r"(?:\w+ )?(?:sandbox|filters?|safety|guardrails|safeguards|checks|confirmations?|approval)",
    ),
    ("safety", WEAK, r"\b(?:sandbox|content filter|secret scanner|approval prompts?|confirmation prompts?)\b"),
    (
        "unasked",
        WEAK,
        r"\bstop asking\b|\bauto-?(?:accept|approve|merge)\b|\bpre-?approved\b|\bstanding permission\b|"
        r"\bno need to (?:confirm|ask)\b|\bwithout (?:inspecting|reviewing|reading|checking) it\b",
    ),
    # Orders bound to the agent's session or memory: "for the rest of this chat", "save as a permanent memory".
    ("persist", WEAK, r"\bfor the (?:rest|remainder) of (?:this|the) (?:chat|conversation|session|task)\b"),
    ("tool", WEAK, r"\b(?:use|call|invoke|using) (?:your|the) [\w-]+ tool\b"),
    (
        "tool",
        STRONG,
        r"\b(?:record|save|store|remember) (?:this )?as a (?:permanent|lasting|long-term) memory\b|"
        r"\b(?:invoke|call|use) the memory tool to (?:save|store|record)\b",
    ),
]

# --- other languages (on the NFKC text, case folded, look-alikes kept) ----------------------------------------------

_W_SEND = (
    r"(?:sende|schick|envoie|envoyer|envía|envia|enviar|envie|invia|inviare|verstuur|stuur|отправ|перешли|надішли|"
    r"发送|上传|发到|发给|送信|送って|wyślij|pošli|gönder|보내|أرسل|gửi|kirim|skicka|भेज)"
)
_W_SECRET = (
    r"(?:\.env|passw|kennw|mot de passe|contraseña|senha|password|hasł|hesl|lösenord|şifre|mật khẩu|kata sandi|"
    r"clés? api|chiav|credencial|credenzial|zugangsdaten|schlüssel|sleutel|token|secret|密钥|密码|令牌|環境変数|"
    r"パスワード|秘密鍵|비밀 키|비밀번호|ключ|парол|токен|مفاتيح|كلمة المرور|पासवर्ड|कुंजी|khóa)"
)
_W_DEST = (
    r"(?:https?://|@[\w-]+\.|webhook|adresse|indirizzo|dirección|endereço|\badres\b|adresa|adressen|địa chỉ|alamat|"
    r"邮箱|地址|网址|url|アドレス|주소|адрес|عنوان|पते|e-?mail)"
)

_WORLD_RULES: list[tuple[str, int, str] | tuple[str, int, str, tuple[str, ...]]] = [
    # German
    (
        "override",
        STRONG,
        r"\b(?:ignorier\w*|vergiss|vergesst|vergessen sie|missacht\w*|übergeh\w*|verwirf|"
        r"ignorieren sie)\b(?:\W+\w+){0,3}?\W+(?:vorherig\w*|bisherig\w*|alle[nms]?|früher\w*|obig\w*|deine[nm]?|"
        r"ihre[nm]?|die)\W+(?:\w+\W+){0,2}?(?:anweisung\w*|regel\w*|befehl\w*|instruktion\w*|vorgaben|richtlinien|"
        r"systemanweisung\w*|systemprompt\w*)",
    ),
    (
        "override",
        STRONG,
        r"\b(?:deine[nrms]?|ihre[nrms]?|alle[nms]?|vorherig\w*|bisherig\w*|ursprünglich\w*|früher\w*|"
        r"obig\w*|system)\W+(?:\w+\W+){0,2}?(?:anweisung\w*|regel\w*|befehl\w*|vorgaben|richtlinien)\b.{0,60}?"
        r"(?:nicht mehr|ungültig|aufgehoben|außer kraft|hinfällig|gelöscht)",
    ),
    ("role", STRONG, r"\bdu bist (?:jetzt|nun|ab sofort|ab jetzt)\b|\bab (?:jetzt|sofort) bist du\b"),
    (
        "secrecy",
        STRONG,
        r"\b(?:teile|teilt|sag|sage|erzähl\w*|informier\w*)\w* (?:dem|den|der) (?:nutzer|benutzer|"
        r"anwender)\w* (?:nicht|nichts)\b",
    ),
    (
        "secrecy",
        STRONG,
        r"\b(?:sag|sage|erzähl|erzähle)\w* (?:dem|der|den) (?:nutzer|benutzer|anwender)\w* nichts|"
        r"\bohne (?:den|die|das) (?:nutzer|benutzer|anwender)\w* zu (?:informieren|fragen|benachrichtigen)",
    ),
    ("address", STRONG, r"\b(?:hinweis|nachricht|anweisung)\w* (?:für|an) (?:die |den |alle )?(?:ki|assistent)"),
    # French
    (
        "override",
        STRONG,
        r"\b(?:ignore[zs]?|oublie[zs]?|ne tiens? (?:plus |pas )?compte|ne tenez (?:plus |pas )?"
        r"compte|fais abstraction|faites abstraction)\b(?:\W+\w+){0,3}?\W+(?:instructions?|consignes?|règles?|"
        r"directives?)\b(?:\W+(?:précédentes|antérieures|du système|système))?",
    ),
    (
        "override",
        STRONG,
        r"\b(?:ignore[zs]?|oublie[zs]?)\W+(?:toutes? |tes |vos |les |ces )+(?:\w+ )?"
        r"(?:instructions?|consignes?|règles?|directives?)\b",
    ),
    (
        "role",
        STRONG,
        r"\btu es (?:maintenant|désormais|à présent|dorénavant)\b|\b(?:désormais|dorénavant|à partir "
        r"de maintenant),? tu\b|\bvous êtes (?:maintenant|désormais)\b",
    ),
    (
        "secrecy",
        STRONG,
        r"\bsans (?:prévenir|informer|avertir|le dire à|rien dire à) l['’]utilisat\w*|\bne (?:le |lui )?"
        r"(?:dis|dites|mentionne|mentionnez)\w* (?:pas|rien)\b",
    ),
    ("address", STRONG, r"\b(?:note|message|instruction)s? (?:pour|à) (?:l['’]ia|l['’]assistant|les ia)\b"),
    # Spanish
    (
        "override",
        STRONG,
        r"\b(?:ignora|ignore|olvida|olvídate|olvidate|olvide|haz caso omiso|no hagas caso|descarta|omite|"
        r"desobedece)\b(?:\W+\w+){0,3}?\W+(?:instrucciones|reglas|indicaciones|directrices|normas|órdenes)\b",
    ),
    ("override", STRONG, r"\bhaz caso omiso de (?:las |los )?(?:indicaciones|instrucciones|reglas)"),
    ("role", STRONG, r"\b(?:ahora|a partir de ahora,?|desde ahora,?) eres\b|\beres ahora\b"),
    (
        "secrecy",
        STRONG,
        r"\bno (?:se lo |le )?(?:digas|cuentes|informes|menciones) (?:nada )?al usuario|\bsin "
        r"(?:avisar|decirle|informar|preguntar) al usuario",
    ),
    ("address", STRONG, r"\bnota para (?:el asistente|la ia|los asistentes)|\bpara la ia\b|\basistente de ia:"),
    # Portuguese
    (
        "override",
        STRONG,
        r"\b(?:ignore|ignora|esqueça|esqueca|esquece|desconsidere|desconsidera|despreze)\b"
        r"(?:\W+\w+){0,3}?\W+(?:instruções|instrucoes|regras|orientações|orientacoes|diretrizes)\b",
    ),
    (
        "role",
        STRONG,
        r"\bagora (?:você|voce|tu) (?:é|e|es)\b|\b(?:você|voce) é agora\b|\ba partir de agora,? "
        r"(?:você|voce|tu)\b",
    ),
    ("secrecy", STRONG, r"\bnão (?:conte|diga|informe|mencione)\w* (?:nada )?(?:ao|para o|à|para a) usuári"),
    ("address", STRONG, r"\bnota para a ia\b|\bpara a ia:"),
    # Italian
    (
        "override",
        STRONG,
        r"\b(?:ignora|dimentica|trascura|non considerare|non seguire)\b(?:\W+\w+){0,3}?\W+"
        r"(?:istruzioni|regole|direttive)\b",
    ),
    ("role", STRONG, r"\b(?:da ora in poi|adesso|ora),? sei\b"),
    ("secrecy", STRONG, r"\b(?:senza|non) dirlo all['’]utente|\bsenza avvisare l['’]utente"),
    # Dutch
    ("override", STRONG, r"\b(?:negeer|vergeet)\b(?:\W+\w+){0,3}?\W+(?:instructies|regels|richtlijnen|opdrachten)\b"),
    ("role", STRONG, r"\b(?:je|jij) bent nu\b"),
    # Polish
    (
        "override",
        STRONG,
        r"\b(?:zignoruj|ignoruj|zapomnij)\b(?:\W+\w+){0,3}?\W+(?:instrukcj\w*|polece\w*|zasad\w*|"
        r"reguł\w*)",
    ),
    ("role", STRONG, r"\bteraz jesteś\b|\bjesteś teraz\b"),
    # Turkish
    (
        "override",
        STRONG,
        r"\b(?:önceki|tüm|bütün)\b(?:\W+\w+){0,2}?\W+(?:talimat\w*|kural\w*)\W+(?:yok say|görmezden "
        r"gel|unut)",
    ),
    # an identity and no limits, in any of these languages
    (
        "role-you",
        WEAK,
        r"\b(?:du bist|tu es|eres|você é|voce e|sei un|jij bent|jesteś)\b|(?:^|\W)(?:ты|ти)\W|"
        r"你是|你现在|あなたは|너는|당신은",
    ),
    (
        "unrestricted",
        WEAK,
        r"\b(?:ohne (?:einschränkungen|filter|grenzen|regeln)|sans (?:restrictions?|filtres?|"
        r"limites?)|sin (?:filtros|restricciones|límites|censura)|sem (?:restrições|limites|filtros)|senza "
        r"(?:restrizioni|limiti|filtri)|zonder (?:beperkingen|filters)|bez ograniczeń)\b|без ограничени|без обмежень|"
        r"没有任何限制|不受限制|无限制|制限のない|制限なし|제한 없는",
    ),
    # words that mean "send" and a secret with a destination, in any of these languages
    (
        "exfil",
        STRONG,
        r"(?:sende|schick|envoie|envoyer|envía|enviar|envie|invia|verstuur|stuur|отправь|отправить|"
        r"перешли|发送|上传|发到|送信|送って|wyślij|gönder|보내)\w*.{0,60}(?:https?://|@\w+\.|这个网址|网址|此地址)",
    ),
    # The three commonest classes in more languages and more words: a secret sent to an address, the user kept in
    # the dark, the earlier instructions cancelled (Swedish, Czech, Vietnamese, Indonesian and Hindi too).
    (
        "exfil",
        STRONG,
        rf"{_W_SEND}.{{0,100}}{_W_SECRET}.{{0,100}}{_W_DEST}|{_W_SEND}.{{0,100}}{_W_DEST}.{{0,100}}{_W_SECRET}|"
        rf"{_W_SECRET}.{{0,60}}{_W_SEND}.{{0,60}}{_W_DEST}",
    ),
    (
        "secrecy",
        STRONG,
        r"\bno (?:le )?(?:digas|cuentes|informes|menciones|avises)\w* (?:nada )?al usuario|\bnon (?:dir(?:e|lo|gli)|"
        r"informare|avvisare|menzionare)\w* (?:nulla |niente )?all['’]utente|\bnie (?:mów|informuj|wspominaj)\w* "
        r"użytkownik|\bvertel (?:het )?de gebruiker niet|kullanıcıya\b.{0,60}(?:söyleme|bahsetme|bildirme)|"
        r"لا (?:تخبر|تقل|تبلغ)\w* (?:ل)?المستخدم|사용자에게.{0,40}(?:말하지|알리지|알려주지) 마|"
        r"đừng (?:nói|cho biết|báo) (?:với |cho )?người dùng|"
        r"\bjangan (?:beri ?tahu|bilang|katakan|memberi ?tahu) (?:kepada )?pengguna|"
        r"\bberätta inte för användaren|\bneříkej\w* uživatel|उपयोगकर्ता को (?:न|मत) बता",
    ),
    (
        "override",
        STRONG,
        r"\bbỏ qua (?:mọi |tất cả )?(?:các )?(?:hướng dẫn|chỉ dẫn|lệnh|quy tắc)|\babaikan (?:semua )?(?:instruksi|"
        r"perintah|aturan)|\bignorera (?:\w+ ){0,2}(?:instruktioner|regler)|\bignoruj(?:te)? (?:\w+ ){0,2}(?:pokyny|"
        r"instrukce|pravidla)|निर्देशों को (?:अनदेखा|नज़रअंदाज़|नजरअंदाज)",
    ),
]

# Languages in other scripts: only a text with characters beyond ASCII can hold them.
_SCRIPT_RULES: list[tuple[str, int, str] | tuple[str, int, str, tuple[str, ...]]] = [
    # Russian
    (
        "override",
        STRONG,
        r"(?:игнорируй\w*|игнорировать|проигнорируй\w*|забудь\w*|не обращай внимания на|отбрось\w*|"
        r"пренебреги|не выполняй|не следуй|не подчиняйся|ігноруй\w*|забудь|не виконуй)(?:\W+\w+){0,3}?\W+"
        r"(?:инструкц\w*|правил\w*|указани\w*|команд\w*|ограничени\w*|інструкц\w*|вказів\w*)",
    ),
    # Arabic
    ("override", STRONG, r"(?:تجاهل|انس|لا تتبع).{0,30}(?:التعليمات|الأوامر|القواعد|الإرشادات)"),
    ("role", STRONG, r"(?:^|\W)(?:теперь ты|ты теперь|отныне ты)(?:\W|$)"),
    ("secrecy", STRONG, r"не (?:говори|сообщай|рассказывай)\w*(?: об этом| ничего)? пользовател"),
    ("address", STRONG, r"(?:примечание|заметка|сообщение|инструкция|указание) для (?:ии|ai|ассистента|модели)"),
    # Chinese
    (
        "override",
        STRONG,
        r"(?:忽略|无视|忽视|不要理会|不要遵守|忘记|忘掉|抛开|违背|無視|忽略掉).{0,8}(?:指令|指示|说明|規則|规则|"
        r"提示|要求|命令|设定)",
    ),
    (
        "role",
        STRONG,
        r"(?:从现在(?:开始|起)|現在開始|从此)[,，]?\s*你|你现在是|你現在是|你现在扮演|扮演一个|假装(?:你|成)",
    ),
    ("secrecy", STRONG, r"(?:不要|别|不许|不得)(?:告诉|通知|让|告知)(?:用户|使用者)"),
    ("address", STRONG, r"(?:给|致|对)\s*(?:ai|人工智能)(?:助手)?的?(?:提示|说明|消息|指令)|ai助手[:：]"),
    # Japanese
    (
        "override",
        STRONG,
        r"(?:以前|前|これまで|上記|すべて|全て|今まで)の?(?:指示|命令|ルール|指令|プロンプト|設定)"
        r".{0,8}(?:無視|忘れ)",
    ),
    ("override", STRONG, r"(?:システムプロンプト|システム指示)\S{0,4}(?:無視|忘れ)"),
    ("role", STRONG, r"あなたは(?:今から|これから|今日から)|(?:今から|これから).{0,5}あなたは"),
    ("secrecy", STRONG, r"(?:ユーザー|利用者)に(?:知らせず|言わず|伝えず|教えず|内緒)"),
    ("address", STRONG, r"(?:ai|エーアイ)への(?:注意|指示|メッセージ|お知らせ)|(?:ai|エーアイ)へ[:：、]"),
    # Korean
    ("override", STRONG, r"(?:이전|모든|앞의|기존).{0,8}(?:지시|명령|규칙|지침).{0,8}(?:무시|잊)"),
    ("role", STRONG, r"(?:너는|당신은) 이제"),
    ("secrecy", STRONG, r"사용자에게 (?:알리지|말하지|알려주지) (?:말고|마)"),
    ("address", STRONG, r"\bai에게\b"),
]

# Phrases found with every letter kept and everything else removed: "i g n o r e  p r e v i o u s", "I.g.n.o.r.e".
_SQUASHED = (
    r"(?:ignore|disregard|forget)(?:all|any)?(?:of)?(?:the|your|my)?(?:previous|prior|above|earlier|preceding|"
    r"system)(?:instructions?|rules|prompts?|directions|guidelines)|youarenow(?:an?)?(?:unrestricted|unfiltered|"
    r"jailbroken|dan|root|free|evil)"
)
_SQUASHED_RULES = [Rule("override", STRONG, _SQUASHED)]
_NOT_LETTERS = re.compile(r"[\W\d_]+")
_LEET = str.maketrans("013457@$!|", "oieastasii")
_LEET_L = str.maketrans("013457@$!|", "oleastasll")
_LEET_I_FIRST = re.compile(r"(?<!\w)[1|]")  # a word's first letter is an i more often than an l
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
_TAG_CHARS = re.compile("[\U000e0020-\U000e007e]+")
_BIDI_REVERSE = ("\u202e", "\u2067")
_DIGIT_IN_WORD = re.compile(r"[a-z][0-9@$][a-z]|[0-9][a-z]{2}")
# Kinds of cue that a quoted command still carries: "pipe `env` into `nc host 9000`" asks for it.
_USE_EVEN_QUOTED = frozenset({"exfil", "exfil-send", "exfil-to", "exfil-dest", "remote-code", "malware", "json-role"})
_EN = [_compiled(rule) for rule in _EN_RULES]
_EN_USE = [rule for rule in _EN if rule.kind in _USE_EVEN_QUOTED]
_EN_SAID = [rule for rule in _EN if rule.kind not in _USE_EVEN_QUOTED]
_WORLD = [_compiled(rule) for rule in _WORLD_RULES]
_SCRIPTS = [_compiled(rule) for rule in _SCRIPT_RULES]
# Quoted words: in backticks, double quotes, or single quotes that are not apostrophes.
_QUOTED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|(?<!\w)'[^'\n]{2,}?'(?!\w)")
_SPELLED = re.compile(r"(?<!\w)(?:\w[-._* ]){2,}\w(?!\w)")
_SEPARATORS = re.compile(r"[-._*]")
_SPACES = re.compile(r"[^\S\n]+")
Rules = list[Rule]


def instruction_cues(text: str) -> dict[str, int]:
    """The cues found in `text` by kind, each kind counted once at its strongest weight."""
    found: dict[str, int] = {}
    for view, rules, most in _views(text):
        for rule in rules:
            name, weight = ("quoted", WEAK) if most == WEAK else (rule.kind, rule.weight)  # a mention: one weak cue
            if found.get(name, 0) < weight and rule.found(view):
                found[name] = weight
                if sum(found.values()) >= FLAG_AT:
                    return found
    return found


def looks_like_instructions(text: str) -> bool:
    """Whether text reads as orders to an AI agent rather than about the project (see the module's docstring)."""
    # The rules first: they catch most injections and are cheaper than the learned layer, which reads their cues.
    cues = instruction_cues(text)
    return sum(cues.values()) >= FLAG_AT or learned_flag(text, cues)


def rules_flag(text: str) -> bool:
    """Whether the rules alone flag `text` (the learned layer left out: for the benchmark)."""
    return sum(instruction_cues(text).values()) >= FLAG_AT


def _views(text: str) -> list[tuple[str, Rules, int]]:
    """The forms of `text` to look in, each with the rules that apply to it and the most a cue found there weighs.

    Words in quotes or backticks are a mention ("the filter blocks 'ignore previous instructions'"): read without
    them first, and with them at a weak cue's weight only."""
    views: list[tuple[str, Rules, int]] = []
    for each in (text, *_hidden(text)):
        folded = _SPACES.sub(" ", skeleton(each))
        if INVISIBLE.search(each):  # an invisible character may stand for a space: "forget\u200byour\u200brules"
            views.append((_SPACES.sub(" ", skeleton(INVISIBLE.sub(" ", each))), _EN, STRONG))
        if _SPELLED.search(folded):  # letters spelled out one by one: "i g n o r e", "I-G-N-O-R-E", "D.o n.o.t"
            views.append((_SPELLED.sub(_joined, folded), _EN, STRONG))
        unquoted = _QUOTED.sub(" ", folded)
        views.append((unquoted, _EN, STRONG))
        if unquoted != folded:
            views.append((folded, _EN_USE, STRONG))
            views.append((" ".join(match.group(0) for match in _QUOTED.finditer(folded)), _EN_SAID, WEAK))
        if each.isascii():
            views.append((unquoted, _WORLD, STRONG))
        else:  # Cyrillic and Greek words keep their letters here; the skeleton folds some to Latin ones
            plain = _QUOTED.sub(
                " ", _SPACES.sub(" ", INVISIBLE.sub("", unicodedata.normalize("NFKC", each)).casefold())
            )
            views.append((plain, _WORLD + _SCRIPTS, STRONG))
        if _DIGIT_IN_WORD.search(folded):
            views.append((unquoted.translate(_LEET), _EN, STRONG))
            if "1" in unquoted or "|" in unquoted:  # 1 and | stand for l as often as for i
                views.append((_LEET_I_FIRST.sub("i", unquoted).translate(_LEET_L), _EN, STRONG))
        views.append((_NOT_LETTERS.sub("", unquoted.translate(_LEET)), _SQUASHED_RULES, STRONG))
    return views


def _joined(run: re.Match[str]) -> str:
    """A run of letters spelled out, joined: "i g n o r e" -> "ignore"; "d-o n-o-t" -> "do not"."""
    spelled = run.group(0)
    return _SEPARATORS.sub("", spelled) if spelled.count(" ") < len(spelled) // 2 else spelled.replace(" ", "")


def _hidden(text: str) -> list[str]:
    """Text hidden inside `text`: Unicode tag characters, HTML entities, URL escapes, base64, rot13, bidi reversal."""
    found: list[str] = []
    tags = "".join(chr(ord(ch) - 0xE0000) for run in _TAG_CHARS.findall(text) for ch in run)
    if tags:
        found.append(tags)
    if "&" in text and (unescaped := html.unescape(text)) != text:
        found.append(unescaped)
    if "%" in text and (unquoted := unquote(text)) != text:
        found.append(unquoted)
    for blob in _BASE64.findall(text):
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if " " in decoded or not decoded.isascii():
            found.append(decoded)
    if "rot13" in text.lower().replace("-", "").replace(" ", ""):
        found.append(codecs.decode(text, "rot13"))
    if any(mark in text for mark in _BIDI_REVERSE):
        found.append(text[::-1])
    return found
