"""Which submissions to one problem look alike: a code-similarity ranking for staff
(the method of MOSS, Dolos and JPlag, for Python).

The method, step by step:

1. **Tokens.** The standard ``tokenize`` module splits the source; code it cannot
   finish (an unclosed string or bracket, a bad dedent) keeps the tokens read so far
   and a regular expression splits the rest, so a syntax error never raises.
2. **Normalization.** Comments, blank lines, indentation and docstrings (any string
   standing alone as a statement) are dropped; every string literal becomes one
   token; numbers are compared by value (``1.0`` is ``1``); grouping parentheses and
   trailing commas are dropped, so wrapping and line breaks do not count. Every
   identifier becomes one placeholder, except keywords, names right after a ``.``
   (``jnp.exp``, ``.sum``, but not ``self.x``), keyword-argument names in calls
   (``axis=``), builtins, the usual JAX-world modules and whatever the file imports:
   those are the API, which renaming leaves alone.
3. **Fingerprints.** Every run of ``KGRAM`` normalized tokens is hashed (blake2b, so
   the same code gives the same numbers in every process), except runs of bare names
   and commas (parameter lists), and winnowing (Schleimer, Wilkerson and Aiken, SIGMOD
   2003) keeps, in each window of ``WINDOW`` consecutive hashes, the smallest (the
   rightmost on ties). Any common run of ``KGRAM + WINDOW - 1`` tokens shares a
   fingerprint; none shorter than ``KGRAM`` does. Each fingerprint keeps its lines.
4. **Comparison.** Fingerprints are compared as sets, so statements in another order
   still match, but for the runs across their seams (a swap of two short statements
   costs a few percent). Code everyone is given (the starter, the statement's
   snippets: ``shared_code``) is removed, and so is what more than
   ``COMMON_FRACTION`` of the submissions contain. An inverted index (fingerprint ->
   submissions) scores only the pairs that share something. A pair's similarity is
   the shared count over the *smaller* of the two sets: a copy padded with extra code
   still scores high, where the Jaccard index (also given) falls.

Its limits. It sees text, not meaning: code rewritten with other calls or another loop
structure no longer matches, and a statement inserted between two others breaks the
runs around it. The exercises are short (5 to 30 lines), and a short exercise has few
natural solutions: learners who never met can write the same lines, or the reference
itself (bench/similarity.py simulates a class: on a 20-line problem it makes identical
pairs by chance). A high score is a reason for staff to read both submissions side by
side, never a finding: flag, never accuse; staff decide.
"""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import re
import tokenize
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

# The exercises' functions are 5 to 30 lines, about 8 to 15 normalized tokens a line:
# a 10-token k-gram is under a line (an `x = jnp.f(y, axis=-1)` line is 12), so one
# copied line can match, while shorter runs (`) , N = N (`) are everywhere. A window of
# 5 keeps about a third of the hashes (2 / (WINDOW + 1)) and guarantees that any common
# run of 14 tokens, about one line, is found.
KGRAM = 10
WINDOW = 5
# A fingerprint in more than this fraction of the submissions is the class's common
# code (the natural way to write a step, code from the course), not evidence: it is
# ignored. With fewer than COMMON_MIN_SUBMISSIONS submissions the filter is skipped, and
# a fingerprint in only two submissions is never common. Half, not less: in a class
# whose solutions are alike (bench/similarity.py), a tenth leaves some submissions a
# handful of fingerprints, and a handful shared by chance reads as a similarity of 1.
COMMON_FRACTION = 0.5
COMMON_MIN_SUBMISSIONS = 4
# Pairs sharing fewer fingerprints (about a line or two) are not reported: with a tiny
# submission, a single shared line would otherwise make a similarity of 1.
MIN_SHARED = 3
PAIR_LIMIT = 50

Span = tuple[int, int]  # first and last line, 1-based, inclusive

# Names that keep their spelling: builtins and the modules (and usual aliases) of JAX
# code; a name a file imports is added per file.
KNOWN_NAMES = frozenset(dir(builtins)) | {
    "jax", "jnp", "np", "numpy", "lax", "jr", "jtu", "optax", "flax", "nn", "nnx", "linen",
    "functools", "partial", "math", "self", "cls",
}  # fmt: skip
_ID, _STR = "<id>", "<str>"
_BLAND = {_ID, ",", "(", ")", "def", ":"}
_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_BOUNDARY = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
_FALLBACK = re.compile(
    r"""(?P<comment>\#[^\r\n]*)
    | (?P<string>(?i:[rbuf]{0,2})(?:'''[\s\S]*?(?:'''|\Z)|\"\"\"[\s\S]*?(?:\"\"\"|\Z)
                                 |'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?))
    | (?P<number>0[xXoObB][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)
    | (?P<name>[^\W\d]\w*)
    | (?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|[-+*/%&|^@=<>!]=|[-+*/%&|^~@<>=.,:;()\[\]{}])
    | (?P<other>\S)""",
    re.VERBOSE,
)
_KINDS = {"string": tokenize.STRING, "number": tokenize.NUMBER, "name": tokenize.NAME}

_Raw = tuple[int, str, int, int]  # token type, text, first line, last line


@dataclass(frozen=True)
class Fingerprint:
    """A source's winnowed k-gram hashes, each with the line spans it was selected at."""

    hashes: frozenset[int]
    tokens: int  # normalized tokens
    spans: Mapping[int, tuple[Span, ...]] = field(compare=False, hash=False, repr=False)

    def __len__(self) -> int:
        return len(self.hashes)

    def regions(self, hashes: Iterable[int]) -> tuple[Span, ...]:
        """The lines of the given fingerprints, overlapping and touching spans merged."""
        merged: list[Span] = []
        for first, last in sorted(span for h in hashes for span in self.spans.get(h, ())):
            if merged and first <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], last))
            else:
                merged.append((first, last))
        return tuple(merged)


@dataclass(frozen=True)
class Pair[Key: Hashable]:
    """Two submissions that share fingerprints; ``left`` came first in the input."""

    left: Key
    right: Key
    similarity: float  # shared / the smaller fingerprint set, 0..1
    jaccard: float  # shared / the union
    shared: int
    left_regions: tuple[Span, ...]  # matched lines of each side, for a side-by-side view
    right_regions: tuple[Span, ...]


def _fallback_tokens(lines: list[str], first_line: int) -> list[_Raw]:
    found: list[_Raw] = []
    text = "".join(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    line_of = first_line
    for match in _FALLBACK.finditer(text):
        kind = match.lastgroup or "other"
        while starts[line_of - first_line + 1] <= match.start():
            if found and found[-1][0] != tokenize.NEWLINE:
                found.append((tokenize.NEWLINE, "\n", found[-1][3], found[-1][3]))
            line_of += 1
        if kind != "comment":
            last = line_of + match.group().count("\n")
            found.append((_KINDS.get(kind, tokenize.OP), match.group(), line_of, last))
    return found


def _raw_tokens(code: str) -> list[_Raw]:
    found: list[_Raw] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            found.append((token.type, token.string, token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        resume = found[-1][3] + 1 if found else 1
        found.extend(_fallback_tokens(code.splitlines(keepends=True)[resume - 1 :], resume))
    return found


def _number(text: str) -> str:
    try:
        return str(int(text, 0))
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _normalize(code: str) -> list[tuple[str, int, int]]:
    """The tokens that count, each with its first and last line."""
    toks = [
        t
        for t in _raw_tokens(code)
        if t[0] not in _DROPPED and (t[0] != tokenize.ERRORTOKEN or t[1].strip())
    ]
    at_start = [i == 0 or toks[i - 1][0] in _BOUNDARY for i in range(len(toks))]
    imported: set[str] = set()
    skipped: set[int] = set()
    for i, (kind, text, _, _) in enumerate(toks):
        if not at_start[i]:
            continue
        if kind == tokenize.NAME and text in ("import", "from"):
            j = i
            while j < len(toks) and toks[j][0] != tokenize.NEWLINE:
                imported.add(toks[j][1])
                j += 1
        elif kind == tokenize.STRING:  # a string standing alone: a docstring, a remark
            j = i
            while j < len(toks) and toks[j][0] == tokenize.STRING:
                j += 1
            if j == len(toks) or toks[j][0] == tokenize.NEWLINE:
                skipped.update(range(i, j))
    out: list[tuple[str, int, int]] = []
    stack: list[str] = []  # open brackets: "call", "group" (dropped), "[" or "{"
    for i, (kind, text, first, last) in enumerate(toks):
        if kind in _BOUNDARY or i in skipped:
            continue
        before = toks[i - 1] if i else (tokenize.NEWLINE, "", 0, 0)
        after = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == tokenize.OP and text == "(":
            named = before[0] == tokenize.NAME and not keyword.iskeyword(before[1])
            stack.append("call" if named or before[1] in (")", "]") else "group")
            if stack[-1] == "group":
                continue
        elif kind == tokenize.OP and text in ("[", "{"):
            stack.append(text)
        elif kind == tokenize.OP and text in (")", "]", "}"):
            if (stack.pop() if stack else "") == "group":
                continue
        elif kind == tokenize.OP and text == "," and after in (")", "]", "}"):
            continue
        if kind == tokenize.NAME:
            text = _name(text, imported, toks[i - 2][1] if i > 1 else "", before[1], after, stack)
        elif kind == tokenize.STRING:
            text = _STR
        elif kind == tokenize.NUMBER:
            text = _number(text)
        out.append((text, first, last))
    return out


def _name(
    text: str, imported: set[str], before2: str, before: str, after: str, stack: list[str]
) -> str:
    if keyword.iskeyword(text) or text in KNOWN_NAMES or text in imported:
        return text
    if before == "." and before2 not in ("self", "cls"):
        return text  # an attribute or API name
    if after == "=" and before in ("(", ",") and stack and stack[-1] == "call":
        return text  # a keyword argument: the callee's name
    return _ID


def _winnow(hashes: list[int], window: int) -> list[int]:
    """Positions selected: each window's minimum, the rightmost on ties, each once."""
    if not hashes:
        return []
    selected: list[int] = []
    for start in range(max(1, len(hashes) - window + 1)):
        chunk = hashes[start : start + window]
        position = start + len(chunk) - 1 - chunk[::-1].index(min(chunk))
        if not selected or selected[-1] != position:
            selected.append(position)
    return selected


def _kgrams(tokens: list[tuple[str, int, int]], k: int) -> list[tuple[int, Span]]:
    """Each k-gram's hash and lines. Those of bare names, commas and brackets (a list of
    parameters or arguments, which any two long signatures share) are left out."""
    found = []
    for start in range(len(tokens) - k + 1):
        gram = [text for text, _, _ in tokens[start : start + k]]
        if set(gram) <= _BLAND:
            continue
        digest = hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest()
        found.append((int.from_bytes(digest, "big"), (tokens[start][1], tokens[start + k - 1][2])))
    return found


def fingerprint(code: str, *, k: int = KGRAM, window: int = WINDOW) -> Fingerprint:
    """The winnowed fingerprints of ``code``; empty for code under ``k`` tokens."""
    tokens = _normalize(code)
    grams = _kgrams(tokens, k)
    spans: dict[int, list[Span]] = {}
    for position in _winnow([h for h, _ in grams], window):
        h, span = grams[position]
        spans.setdefault(h, []).append(span)
    return Fingerprint(
        hashes=frozenset(spans),
        tokens=len(tokens),
        spans={h: tuple(s) for h, s in spans.items()},
    )


def shared_code(*snippets: str, k: int = KGRAM) -> frozenset[int]:
    """The hashes of code every learner is given (the starter, the statement's
    snippets), to pass as ``exclude``: every k-gram, not only the winnowed ones, since a
    submission's windows at the edge of the given code can select others."""
    return frozenset(h for snippet in snippets for h, _ in _kgrams(_normalize(snippet), k))


def compare(
    left: str, right: str, *, exclude: frozenset[int], k: int = KGRAM, window: int = WINDOW
) -> Pair[str]:
    """One pair, keys ``"left"`` and ``"right"``: the side-by-side view of two sources."""
    a, b = (fingerprint(code, k=k, window=window) for code in (left, right))
    return _pair("left", "right", a, b, exclude)


def _pair[Key: Hashable](
    left: Key, right: Key, a: Fingerprint, b: Fingerprint, ignored: frozenset[int]
) -> Pair[Key]:
    own_a, own_b = a.hashes - ignored, b.hashes - ignored
    shared = own_a & own_b
    smaller, union = min(len(own_a), len(own_b)), len(own_a | own_b)
    return Pair(
        left=left,
        right=right,
        similarity=len(shared) / smaller if smaller else 0.0,
        jaccard=len(shared) / union if union else 0.0,
        shared=len(shared),
        left_regions=a.regions(shared),
        right_regions=b.regions(shared),
    )


def rank_pairs[Key: Hashable](
    submissions: Mapping[Key, str],
    *,
    exclude: frozenset[int],
    common_fraction: float = COMMON_FRACTION,
    min_shared: int = MIN_SHARED,
    limit: int | None = PAIR_LIMIT,
    k: int = KGRAM,
    window: int = WINDOW,
) -> list[Pair[Key]]:
    """The ``limit`` most similar pairs (all if None) sharing at least ``min_shared``
    fingerprints: by similarity, then shared count, then Jaccard, then input order."""
    keys = list(submissions)
    prints = [fingerprint(submissions[key], k=k, window=window) for key in keys]
    holders: dict[int, list[int]] = {}
    for index, fp in enumerate(prints):
        for h in fp.hashes - exclude:
            holders.setdefault(h, []).append(index)
    few = len(keys) < COMMON_MIN_SUBMISSIONS
    most = len(keys) if few else max(common_fraction * len(keys), 2)
    ignored = exclude | {h for h, held in holders.items() if len(held) > most}
    sizes = [len(fp.hashes - ignored) for fp in prints]
    counts: Counter[tuple[int, int]] = Counter()
    for h, held in holders.items():
        if h not in ignored:
            counts.update(combinations(held, 2))  # ascending: held is built in input order
    scored = []
    for (i, j), shared in counts.items():
        if shared >= min_shared:
            smaller, union = min(sizes[i], sizes[j]), sizes[i] + sizes[j] - shared
            scored.append((-shared / smaller, -shared, -shared / union, i, j))
    scored.sort()
    return [_pair(keys[i], keys[j], prints[i], prints[j], ignored) for *_, i, j in scored[:limit]]
