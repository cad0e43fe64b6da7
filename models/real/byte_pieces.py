"""What a byte-level BPE token shows: the character(s) it helps form, never a broken "�".

Byte-level BPE (GPT-2's scheme, SmolLM2's and Qwen3's tokenizers) works on UTF-8 bytes, so
one Chinese character (3 bytes) or emoji (4) is often cut over several tokens; decoding
such a token alone gives "�". `label_pieces` labels a run of tokens together: a token that
holds part of a character shows that whole character, with which piece it is; one that ends
a character and starts the next shows both; bytes that are not (yet) a character show as
hex: `pending` while generation may still complete them, `bytes` once they cannot be.

    table = vocab_bytes(tokenizer)                       # each id's raw bytes, once
    labels = label_pieces([table[i] for i in ids])       # one Piece a token
    label_next([table[i] for i in ids], table[cand])     # a candidate next token in context
    text_of([table[i] for i in ids])                     # the text, stray bytes as "<E5>"

Pure Python (no torch): the caller applies its own display of whitespace.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

WHOLE, SPLIT, PENDING, BYTES = "whole", "split", "pending", "bytes"


@cache
def _byte_of_char() -> dict[str, int]:
    """GPT-2's byte alphabet inverted: the printable stand-in character -> the byte."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    stand_in, n = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            stand_in.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(keep, stand_in, strict=True)}


def vocab_bytes(tok) -> list[bytes]:
    """The raw UTF-8 bytes of every id of a `tokenizers.Tokenizer` (index = id).

    Special tokens (<|im_start|>) are their own text. A byte-level vocabulary entry is
    mapped back through GPT-2's alphabet; any other tokenizer falls back to decoding the id
    alone. An id with no entry has no bytes."""
    from tokenizers import decoders

    inv = _byte_of_char()
    added = {i: t.content for i, t in tok.get_added_tokens_decoder().items()}
    byte_level = isinstance(tok.decoder, decoders.ByteLevel)
    n = max([tok.get_vocab_size(with_added_tokens=True) - 1, *added]) + 1
    out = []
    for i in range(n):
        s = added.get(i)
        if s is not None:
            out.append(s.encode())
            continue
        s = tok.id_to_token(i)
        if s is None:
            out.append(b"")
        elif byte_level and all(c in inv for c in s):
            out.append(bytes(inv[c] for c in s))
        else:
            out.append(tok.decode([i], skip_special_tokens=False).encode())
    return out


@dataclass(frozen=True)
class Part:
    """A character this token holds only part of: it is piece `k` of the `n` tokens the
    character is cut over, holding bytes `first`..`last` (1-based) of its `size`."""

    char: str
    k: int
    n: int
    first: int
    last: int
    size: int
    hex: str  # the whole character's bytes, "E5 9B BD"


@dataclass(frozen=True)
class Piece:
    """One token as shown: `text` (the characters it forms or helps form; "<E5>" for
    bytes that are not a character), its own bytes in hex, and the partial characters."""

    text: str
    hex: str
    state: str  # whole | split | pending | bytes
    parts: tuple[Part, ...] = field(default=())

    @property
    def plain(self) -> bool:
        """Whole ASCII characters only: shown as decoded, nothing to explain."""
        return self.state == WHOLE and all(int(x, 16) < 0x80 for x in self.hex.split())

    def as_json(self) -> dict:
        out: dict = {"hex": self.hex, "state": self.state}
        if self.parts:
            out["parts"] = [
                {"char": p.char, "k": p.k, "n": p.n, "first": p.first, "last": p.last,
                 "size": p.size, "hex": p.hex}
                for p in self.parts
            ]  # fmt: skip
        return out


def _hex(b: bytes) -> str:
    return " ".join(f"{x:02X}" for x in b)


def _spans(buf: bytes, ended: bool) -> list[tuple[int, int, str | None, str]]:
    """(start, end, char or None, kind) over buf: a character (kind whole), an unfinished
    valid start of one at the very end (pending, or bytes once `ended`), or one byte that
    starts no character (bytes)."""
    out = []
    p, n = 0, len(buf)
    while p < n:
        lead = buf[p]
        size = (
            1 if lead < 0x80
            else 2 if 0xC2 <= lead <= 0xDF
            else 3 if 0xE0 <= lead <= 0xEF
            else 4 if 0xF0 <= lead <= 0xF4
            else 0  # a continuation byte, or a byte UTF-8 never uses
        )  # fmt: skip
        if size:
            chunk = buf[p : p + size]
            if len(chunk) == size:
                try:
                    out.append((p, p + size, chunk.decode("utf-8"), WHOLE))
                    p += size
                    continue
                except UnicodeDecodeError:
                    pass
            else:  # cut off by the end: a valid beginning waits for the next token
                try:
                    codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
                    out.append((p, n, None, BYTES if ended else PENDING))
                    break
                except UnicodeDecodeError:
                    pass
        out.append((p, p + 1, None, BYTES))
        p += 1
    return out


def label_pieces(pieces: Sequence[bytes], ended: bool = True) -> list[Piece]:
    """Label tokens (their bytes, in order) by the characters they form together.

    ended=False: the text may still go on (generation streaming), so bytes at the very end
    that begin a character are `pending`, not `bytes`."""
    starts, total = [], 0
    for b in pieces:
        starts.append(total)
        total += len(b)
    buf = b"".join(pieces)
    spans = _spans(buf, ended)
    # which tokens each span touches
    owners = []
    t = 0
    for s, e, _, _ in spans:
        while t + 1 < len(pieces) and starts[t + 1] <= s:
            t += 1
        who, u = [], t
        while u < len(pieces) and starts[u] < e:
            if len(pieces[u]):
                who.append(u)
            u += 1
        owners.append(who)
    out = []
    j = 0  # first span that may touch token i
    for i, b in enumerate(pieces):
        a, z = starts[i], starts[i] + len(b)
        while j < len(spans) and spans[j][1] <= a:
            j += 1
        text, parts, state = [], [], WHOLE
        m = j
        while m < len(spans) and spans[m][0] < z:
            s, e, ch, kind = spans[m]
            if ch is not None:
                text.append(ch)
                if len(owners[m]) > 1:
                    lo, hi = max(s, a), min(e, z)
                    whole = buf[s:e]
                    parts.append(
                        Part(
                            ch,
                            owners[m].index(i) + 1,
                            len(owners[m]),
                            lo - s + 1,
                            hi - s,
                            e - s,
                            _hex(whole),
                        )  # fmt: skip
                    )
            else:
                text.append("".join(f"<{x:02X}>" for x in buf[max(s, a) : min(e, z)]))
                state = PENDING if kind == PENDING else (state if state == PENDING else BYTES)
            m += 1
        if state == WHOLE and parts:
            state = SPLIT
        out.append(Piece("".join(text), _hex(b), state, tuple(parts)))
    return out


def _hex_error(err: UnicodeDecodeError) -> tuple[str, int]:
    bad = err.object[err.start : err.end]
    return "".join(f"<{x:02X}>" for x in bad), err.end


codecs.register_error("shaomai-hex", _hex_error)


def text_of(pieces: Sequence[bytes]) -> str:
    """The tokens' text, bytes that form no character written as "<E5>" (never "\ufffd")."""
    return b"".join(pieces).decode("utf-8", errors="shaomai-hex")


def label_next(context: Sequence[bytes], piece: bytes) -> Piece:
    """A candidate next token after `context`, labelled as if it came next (it may finish
    a character the context left open, or begin one: `pending`). Only the last
    few bytes of context matter: UTF-8 resynchronises at every character's first byte."""
    tail, size = [], 0
    for b in reversed(context):
        if size >= 4:
            break
        tail.append(b)
        size += len(b)
    return label_pieces([*reversed(tail), piece], ended=False)[-1]
