"""Answer generation: litellm when a model is configured, else an offline extractive answer.

A generator takes the query and the retrieved chunks and returns a ``Generation``. The
extractive default quotes the sentences of the retrieved chunks that BM25 ranks best for
the query, and says plainly that no model wrote it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragtt.results import RetrievedChunk

__all__ = [
    "EXTRACTIVE_LABEL",
    "ExtractiveGenerator",
    "Generation",
    "Generator",
    "LiteLLMGenerator",
    "answer_content",
    "build_messages",
    "excerpt",
]

EXTRACTIVE_LABEL = "[extractive answer: no generation model configured; quoted from the retrieved chunks]"


def answer_content(answer: str) -> tuple[str, bool]:
    """``(content, extractive)``: what an answer says, without the extractive answer's label,
    and whether it is one. A preview shows the content and marks the kind (the label alone
    filled a list's preview line)."""
    if answer.startswith(EXTRACTIVE_LABEL):
        return answer.removeprefix(EXTRACTIVE_LABEL).lstrip("\n"), True
    return answer, False


# A sentence ends at . ! ? before whitespace (not inside "a.b" like e-mail addresses).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BLOCK_END = re.compile(r"\n[ \t]*\n")
# Headings are context, not answers: Markdown "# Title", reST ".. py:data:: NAME" directives,
# and reST titles (a line over a line of = - ~ ^ * + #).
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+[\w:-]+::\s*(.*)$")
_UNDERLINE = re.compile(r"^\s*([=\-~^*+#`'\"])\1{2,}\s*$")
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "many",
        "much",
        "of",
        "on",
        "or",
        "the",
        "to",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "my",
        "me",
        "we",
        "our",
        "long",
        "this",
        "that",
        "there",
        "than",
        "then",
        "these",
        "those",
        "into",
        "so",
    }
)
# Shell sessions and literal blocks are shown, not said: no sentence of an answer. (A bare
# ">" is left alone: in Markdown it opens a quotation, which is prose.)
_CODE_LINE = re.compile(r"^\s*(\$|>>>|\.\.\.)\s")
_CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "literalinclude", "highlight")
BM25_K1, BM25_B = 1.2, 0.75
# A sentence under ".. py:data:: SESSION_COOKIE_SAMESITE" is about SESSION_COOKIE_SAMESITE: a
# query term in its heading adds this share of the term's idf, not length-normalised (every
# sentence of the section gets the same, so their own words and then their order decide). A
# directive names what its section defines, so it counts fully; a prose title counts half.
DIRECTIVE_WEIGHT, TITLE_WEIGHT = 1.0, 0.5
# A second passage is quoted only if it scores at least this share of the best one.
RUNNER_UP = 0.5


@dataclass(frozen=True)
class Generation:
    answer: str
    model: str
    usage: dict[str, Any] = field(default_factory=dict)


class Generator(Protocol):
    model_id: str

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation: ...


@dataclass(frozen=True)
class _Sentence:
    chunk: int  # index into the chunks
    section: int  # heading-delimited part of the chunk; a passage never crosses a heading
    text: str
    terms: Counter[str]
    heading: frozenset[str]
    heading_weight: float
    title: str = ""  # the heading's words as written
    code: str = ""  # the code block this sentence introduces, quoted with it

    @property
    def quoted(self) -> str:
        """The sentence as an answer quotes it: with the code block it introduces."""
        return f"{self.text}\n{self.code}\n" if self.code else self.text


class ExtractiveGenerator:
    """Offline and deterministic: the sentences of the retrieved chunks that answer the query.

    The retrieved chunks are cut into sentences (headings are kept as context, not quoted on
    their own; shell sessions and literal blocks are skipped) and ranked by BM25 against the
    query's content words, with the statistics of these sentences: a rare term such as
    ``SEND_FILE_MAX_AGE_DEFAULT`` outweighs "default", and the words of a sentence's section
    heading count for it. Up to ``max_passages`` of the best sentences are quoted (a runner-up
    only if it scores at least half as well as the best; a sentence two overlapping chunks
    share, once), each from its section's start when that fits, and on up to
    ``passage_chars``, because the answer often comes right after the line that names the
    subject. Passages appear in document order, each citing its chunk as ``[rank]``.
    """

    model_id = "extractive"

    def __init__(self, max_passages: int = 2, passage_chars: int = 480) -> None:
        self.max_passages = max_passages
        self.passage_chars = passage_chars

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation:
        units = _sentences([c.text for c in chunks])
        if not units:
            return Generation(f"{EXTRACTIVE_LABEL}\nNo retrieved text to quote.", self.model_id)
        scores = _bm25(_stems(query), units)
        order = sorted(range(len(units)), key=lambda k: (-scores[k], chunks[units[k].chunk].rank, k))
        quoted: set[str] = set()  # overlapping chunks repeat sentences: each is quoted once
        passages: list[tuple[int, list[str]]] = []  # (first sentence, its sentences)
        for k in order:
            if len(passages) == self.max_passages or (passages and scores[k] < RUNNER_UP * scores[order[0]]):
                break
            if units[k].text in quoted:
                continue
            start = self._passage_start(units, k)
            texts: list[str] = []
            size, j = 0, start
            while (
                j < len(units)
                and (units[j].chunk, units[j].section) == (units[k].chunk, units[k].section)
                and (j <= k or size + 1 + len(units[j].quoted) <= self.passage_chars)
            ):
                if units[j].text not in quoted:
                    quoted.add(units[j].text)
                    texts.append(units[j].quoted)
                    size += len(units[j].quoted) + 1
                j += 1
            passages.append((start, texts))
        passages.sort(key=lambda p: (_doc_order(chunks, units[p[0]].chunk), p[0]))
        lines = [f"{' '.join(texts)} [{chunks[units[start].chunk].rank}]" for start, texts in passages]
        return Generation(EXTRACTIVE_LABEL + "\n" + "\n".join(lines), self.model_id)

    def _passage_start(self, units: list[_Sentence], k: int) -> int:
        """Where the passage of sentence ``k`` starts: at its section's first sentence when that
        fits with it in ``passage_chars`` (a definition opens its section), else at ``k``."""
        start, size = k, len(units[k].text)
        while start > 0 and (units[start - 1].chunk, units[start - 1].section) == (units[k].chunk, units[k].section):
            size += len(units[start - 1].text) + 1
            start -= 1
        return start if size <= self.passage_chars else k


def _doc_order(chunks: list[RetrievedChunk], index: int) -> tuple[int, int]:
    """Sources in the order their best chunk ranked; within a source, position in the document."""
    chunk = chunks[index]
    first_rank = min(c.rank for c in chunks if c.source == chunk.source)
    return first_rank, chunk.charspan[0]


@functools.lru_cache(maxsize=4096)  # a view re-diffs the same runs: their excerpts once
def excerpt(query: str, text: str, max_chars: int = 240) -> str:
    """The sentence of ``text`` that best matches ``query``, as the extractive answer ranks
    them (BM25; a section's heading counts for its sentences), after that heading
    ("SEND_FILE_MAX_AGE_DEFAULT: When serving files, ..."); the text's opening when no
    sentence matches. At most ``max_chars`` (cut with "…")."""
    units = _sentences([text])
    scores = _bm25(_stems(query), units) if units else []
    best = max(range(len(units)), key=lambda k: (scores[k], -k)) if units else None
    if best is None or scores[best] <= 0:
        found = " ".join(text.split())
    else:
        found = f"{units[best].title}: {units[best].text}" if units[best].title else units[best].text
    return found if len(found) <= max_chars else found[: max_chars - 1] + "…"


def _sentences(texts: list[str]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for ci, chunk_text in enumerate(texts):
        heading: frozenset[str] = frozenset()
        weight, section, code, fence, title_text = 0.0, 0, False, False, ""
        intro: int | None = None  # the sentence ending in ":" right before a code block: it keeps the code
        for block in _BLOCK_END.split(chunk_text):
            lines = [line for line in block.splitlines() if line.strip()]
            if not lines:
                continue
            fences = sum(line.lstrip().startswith("```") for line in lines)  # (a ~~~ line is a reST underline)
            if fence or fences:  # a Markdown code fence, which may span blank lines
                fence = fence != (fences % 2 == 1)
                _keep_code(out, intro, [line for line in lines if not line.lstrip().startswith("```")])
                intro = intro if fence else None
                continue
            # A directive or Markdown heading may carry its text right below it, with no blank line.
            opens = _DIRECTIVE.match(lines[0]) or _MD_HEADING.match(lines[0])
            head = lines[:1] if len(lines) > 1 and opens else lines
            title = _heading(head)
            if title is not None:
                directive = _DIRECTIVE.match(head[0]) is not None
                if directive and head[0].split("::")[0].strip(" .") in _CODE_DIRECTIVES:
                    code = True  # the block after it is code; the section it sits in goes on
                else:
                    heading, section, code = frozenset(_stem_list(title)), section + 1, False
                    weight = DIRECTIVE_WEIGHT if directive else TITLE_WEIGHT
                    title_text, intro = " ".join(title.split()), None
                if head is lines:
                    continue
                lines = lines[1:]
            if code or all(_CODE_LINE.match(line) for line in lines):
                code = False
                _keep_code(out, intro, lines)
                intro = None
                continue
            code = lines[-1].rstrip().endswith("::")  # reST: a literal block follows
            intro = None
            for raw in _SENTENCE_END.split(" ".join(" ".join(lines).split())):
                text = raw.strip().removesuffix("::")
                if len(text) < 12 or text.endswith("?"):
                    continue  # too short, or a question, not an answer
                out.append(_Sentence(ci, section, text, Counter(_stem_list(text)), heading, weight, title_text))
                intro = len(out) - 1 if raw.rstrip().endswith(":") else None
    return out


def _keep_code(out: list[_Sentence], intro: int | None, lines: list[str]) -> None:
    """A code block after the sentence that introduces it ("use the following command to
    install Flask:") goes with that sentence: quoting one without the other says nothing."""
    if intro is None:
        return
    import textwrap

    if not lines:
        return
    block = textwrap.indent(textwrap.dedent("\n".join(lines)), "    ")
    out[intro] = dataclasses.replace(out[intro], code=f"{out[intro].code}\n{block}" if out[intro].code else block)


def _heading(lines: list[str]) -> str | None:
    """The heading's words if this block is one (Markdown, reST directive or reST title), else None."""
    if len(lines) == 1 and (m := _MD_HEADING.match(lines[0]) or _DIRECTIVE.match(lines[0])):
        return m.group(1)
    if len(lines) <= 3 and _UNDERLINE.match(lines[-1]) and all(_UNDERLINE.match(line) for line in lines[:-1][:-1]):
        return " ".join(line for line in lines if not _UNDERLINE.match(line))
    return None


def _bm25(query: set[str], units: list[_Sentence]) -> list[float]:
    n = len(units)
    df = Counter(term for u in units for term in set(u.terms) | u.heading if term in query)
    idf = {t: math.log(1 + (n - m + 0.5) / (m + 0.5)) for t, m in df.items()}
    avg = sum(u.terms.total() for u in units) / n or 1.0
    scores = []
    for u in units:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * u.terms.total() / avg)
        score = 0.0
        for term, weight in idf.items():
            tf = u.terms[term]
            if tf:
                score += weight * tf * (BM25_K1 + 1) / (tf + norm)
            if term in u.heading:
                score += weight * u.heading_weight
        scores.append(score)
    return scores


def _stems(text: str) -> set[str]:
    return set(_stem_list(text))


def _stem_list(text: str) -> list[str]:
    """Content words, crudely stemmed, so "refund" meets "refunded" and "days" meets "day"."""
    from ragtt.index.retrieve import tokens

    return [stem for token in tokens(text) for stem in _token_stems(token)]


@functools.lru_cache(maxsize=1 << 16)
def _token_stems(token: str) -> tuple[str, ...]:
    """A token's content words, stemmed (once per distinct token: a diff stems the same words often)."""
    out = []
    # An identifier is itself and its words: "secret key" finds SECRET_KEY's section.
    for part in (token, *token.split("_")) if "_" in token.strip("_") else (token,):
        if not part or part in _STOPWORDS:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(part) > len(suffix) + 2 and part.endswith(suffix):
                part = part[: -len(suffix)]
                break
        out.append(part)
    return tuple(out)


def build_messages(query: str, chunks: list[RetrievedChunk]) -> list[dict[str, str]]:
    context = "\n\n".join(f"[{c.rank}] ({c.source})\n{c.text}" for c in chunks)
    return [
        {
            "role": "system",
            "content": "Answer from the numbered context only and cite it as [n]. "
            "Say so when the context does not contain the answer.",
        },
        {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {query}"},
    ]


class LiteLLMGenerator:
    """Any chat model litellm can call; extra kwargs (``temperature``, ``mock_response``...) pass through."""

    def __init__(self, model: str, **completion_kwargs: Any) -> None:
        self.model_id = model
        self.kwargs = completion_kwargs

    def generate(self, query: str, chunks: list[RetrievedChunk]) -> Generation:
        from ragtt._lazy import import_litellm

        litellm = import_litellm()

        response = litellm.completion(model=self.model_id, messages=build_messages(query, chunks), **self.kwargs)
        answer = response.choices[0].message.content or ""
        usage = getattr(response, "usage", None)
        usage_dict = {k: getattr(usage, k, None) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        return Generation(answer, self.model_id, {k: v for k, v in usage_dict.items() if v is not None})

    def __repr__(self) -> str:
        return f"LiteLLMGenerator({self.model_id!r})"
