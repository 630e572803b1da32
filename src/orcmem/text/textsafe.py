"""Text from memories and transcripts made harmless where it is shown: to agents inside orcmem's fence, and to people.

Anyone who can get text into a memory (a transcript, a web page an agent read, another agent) may try to close
orcmem's fence with a look-alike of its tag, hide words with zero-width characters, flip text with bidi controls,
or drive the person's terminal with escape sequences. Checks therefore run on the text's skeleton (NFKC, no
invisible characters, look-alike letters and dashes folded to ASCII, case folded), and what is shown has its
invisible characters removed (for agents) or its control characters made visible (for people).

Kept small and free of the rest of orcmem: the prompt hook imports it on every prompt.
"""

from __future__ import annotations

import re
import unicodedata

# Format characters that change nothing a reader sees: zero-width spaces and joiners, bidi embeddings, overrides
# and isolates, invisible operators, the soft hyphen, tag characters.
INVISIBLE = re.compile(
    "[\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# Letters that look like ASCII ones in common fonts (Cyrillic, Greek, Armenian, small capitals), and every dash and
# hyphen.
_CONFUSABLES = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u2043", "-"),
        **dict(zip("аеорсухіјѕԁԛԝһӏɡԌАВЕЅІЈКМНОРСТХУ", "aeopcyxijsdqwhlgGABESIJKMHOPCTXY", strict=True)),
        **dict(zip("οαρτνκιυΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "oaptvkiuABEZHIKMNOPTYX", strict=True)),
        **dict(zip("օսոհ", "ounh", strict=True)),
        # small capitals, which NFKC leaves alone: "ʏᴏᴜ ᴀʀᴇ ɴᴏᴡ"
        **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnoprstuvwyz", strict=True)),
    }
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def skeleton(text: str) -> str:
    """What a text reads as: NFKC, invisible characters removed, look-alikes folded to ASCII, case folded."""
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_CONFUSABLES).casefold()


def visible(text: str) -> str:
    """Text without its invisible characters (what an agent is shown of a memory)."""
    return INVISIBLE.sub("", text)


def neutralize(text: str, words: re.Pattern[str], replacement: str) -> str:
    """Text with every span whose skeleton matches `words` (a pattern over skeletons) replaced.

    Each character is folded on its own so that a match in the skeleton maps back to the characters it came from.
    An ASCII character's skeleton is its lower case, one for one: such a text (most are) is folded at once.
    """
    if text.isascii():
        lowered = text.lower()
        if words.search(lowered) is None:
            return text
        folded, origin = list(lowered), list(range(len(text)))
    else:
        folded, origin = [], []
        for index, char in enumerate(text):
            for piece in skeleton(char):
                folded.append(piece)
                origin.append(index)
    out: list[str] = []
    kept = 0
    for match in words.finditer("".join(folded)):
        if match.end() == match.start():
            continue
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        if start < kept:
            continue
        out.append(text[kept:start])
        out.append(replacement)
        kept = end
    out.append(text[kept:])
    return "".join(out)


def printable(text: str, keep_newlines: bool = True) -> str:
    """Text for a person's terminal or a file they open: control characters shown as `^[`-style codes (an escape
    sequence can then neither move the cursor nor hide text), invisible characters as `<U+200B>`."""

    def control(match: re.Match[str]) -> str:
        code = ord(match.group(0))
        return f"^{chr(code + 64)}" if code < 0x20 else f"<U+{code:04X}>"

    text = _CONTROL.sub(control, text)
    text = INVISIBLE.sub(lambda match: f"<U+{ord(match.group(0)):04X}>", text)
    if not keep_newlines:
        text = text.replace("\r", "^M").replace("\n", " ")
    return text.replace("\r", "^M")
