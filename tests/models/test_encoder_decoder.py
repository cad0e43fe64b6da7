"""The `transformer` lab's models: the encoder-decoder and its counts, the text's numbers
(label smoothing, the warm-up schedule, LayerNorm of 今天, the 63-million-parameter models),
beam search, the padded batch's norms and the number-word task."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from models.data.translation import (
    BOS,
    EOS,
    PAD,
    NumberTranslation,
    TranslationConfig,
    chinese,
    english,
)
from models.label_smoothing import smoothed_ce, smoothed_targets
from models.padded_norms import compare_norms
from models.transformer.beam import beam_search, greedy, length_penalty
from models.transformer.encoder_decoder import (
    EncoderDecoder,
    EncoderDecoderConfig,
    noam_lr,
    scale_reference,
    toy_config,
)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("qk_norm", [False, True])
def test_param_count_equals_the_built_model(placement, qk_norm):
    cfg = toy_config(
        46, 5, 8, n_layers=2, d_model=32, n_heads=4, norm_placement=placement, qk_norm=qk_norm
    )
    model = EncoderDecoder(cfg)
    assert cfg.param_count() == sum(p.numel() for p in model.parameters())
    # one table: source, target and the output projection
    assert model.decoder.embed.weight is model.encoder.embed.weight
    assert model.decoder.unembed.weight is model.encoder.embed.weight


def test_the_texts_two_models_counted_from_their_configs():
    hand, qk = scale_reference(False), scale_reference(True)
    assert hand.param_count() == 63_121_544
    assert qk.param_count() == 63_126_152
    assert hand.attention_modules() == 18
    assert qk.param_count() - hand.param_count() == 18 * 256  # LayerNorm(64) on q and on k
    # Both PPLs are e^(label-smoothed validation loss).
    assert round(math.exp(2.8955), 1) == 18.1
    assert round(math.exp(2.8777), 1) == 17.8


def test_config_refuses_what_is_not_an_encoder_decoder():
    base = toy_config(46, 5, 8)
    with pytest.raises(ValueError, match="encoder"):
        EncoderDecoderConfig(encoder=base.encoder.replace(causal=True), decoder=base.decoder)
    with pytest.raises(ValueError, match="cross_attention"):
        EncoderDecoderConfig(
            encoder=base.encoder, decoder=base.decoder.replace(cross_attention=False)
        )


def test_padding_changes_nothing_the_encoder_or_the_cross_attention_reads():
    torch.manual_seed(0)
    model = EncoderDecoder(toy_config(46, 6, 8, d_model=32)).eval()
    src = torch.tensor([[5, 6, 7]])
    padded = torch.tensor([[5, 6, 7, PAD, PAD, PAD]])
    tgt = torch.tensor([[BOS, 40, 41]])
    a, b = model(src, tgt), model(padded, tgt)
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_cross_attention_maps_are_per_head_decoder_rows_by_source_columns():
    from models.hooks import capture

    torch.manual_seed(0)
    model = EncoderDecoder(toy_config(46, 6, 8, d_model=32, n_heads=4)).eval()
    names = [
        "encoder.blocks.1.attn.hook_pattern",
        "decoder.blocks.0.attn.hook_pattern",
        "decoder.blocks.1.cross_attn.hook_pattern",
    ]
    with capture(model, names) as store:
        model(torch.tensor([[5, 6, 7, 8]]), torch.tensor([[BOS, 40, 41]]))
    assert store[names[0]].shape == (1, 4, 4, 4)
    assert torch.all(store[names[1]][0].triu(1) == 0)  # masked self-attention
    cross = store[names[2]]
    assert cross.shape == (1, 4, 3, 4)  # [B, H, T_dec, S_enc]: not square
    torch.testing.assert_close(cross.sum(-1), torch.ones(1, 4, 3))


def test_label_smoothing_both_conventions_and_torchs():
    t = torch.tensor([0])
    others = smoothed_targets(t, 4, 0.1, "others")[0]
    uniform = smoothed_targets(t, 4, 0.1, "uniform")[0]
    torch.testing.assert_close(
        others, torch.tensor([0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3], dtype=torch.float64)
    )
    assert round(float(others[1]), 3) == 0.033
    torch.testing.assert_close(
        uniform, torch.tensor([0.925, 0.025, 0.025, 0.025], dtype=torch.float64)
    )
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, 4, generator=gen)
    target = torch.randint(0, 4, (6, 5), generator=gen)
    target[0, 3:] = PAD  # (PAD is class 0 here: ignored positions)
    ours = smoothed_ce(logits, target, 0.1, "uniform", ignore_index=PAD)
    theirs = torch.nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=PAD)(
        logits.flatten(0, 1), target.flatten()
    )
    torch.testing.assert_close(ours, theirs)
    # the other convention is a different loss, and ε = 0 is plain cross-entropy for both
    assert (
        abs(
            float(smoothed_ce(logits, target, 0.1, "others"))
            - float(smoothed_ce(logits, target, 0.1))
        )
        > 1e-4
    )
    for conv in ("uniform", "others"):
        torch.testing.assert_close(
            smoothed_ce(logits, target, 0.0, conv),
            F.cross_entropy(logits.flatten(0, 1), target.flatten()),
        )


def test_warmup_schedule_rises_then_falls_as_the_text_has_it():
    d, w = 512, 4000
    peak = noam_lr(w, d, w)
    assert peak == pytest.approx(512**-0.5 * 4000**-0.5)
    assert noam_lr(w // 2, d, w) == pytest.approx(peak / 2)  # linear warm-up
    assert noam_lr(4 * w, d, w) == pytest.approx(peak / 2)  # then 1/√step
    steps = torch.arange(1, 20_001)
    curve = noam_lr(steps, d, w)
    assert int(curve.argmax()) + 1 == w


def test_layernorm_of_today_and_batchnorm_polluted_by_padding():
    out = compare_norms()
    today = out["layernorm"][0, 0]
    torch.testing.assert_close(today, torch.tensor([-1.2247, 0.0, 1.2247]), atol=1e-4, rtol=0)
    torch.testing.assert_close(
        out["today_layernorm_alone"], today
    )  # per token: the batch is irrelevant
    # BatchNorm's statistics include the 3 PAD rows: they differ from the real tokens' ...
    assert (out["bn_mean_padded"] - out["bn_mean_real"]).abs().max() > 0.01
    # ... and so does 今天's normalised value, depending on what sits in the batch.
    bn_pad, bn_real, bn_alone = (
        out["batchnorm_padded"][0, 0],
        out["batchnorm_real"][0, 0],
        out["today_batchnorm_alone"],
    )
    assert (bn_pad - bn_real).abs().max() > 0.05
    assert (bn_real - bn_alone).abs().max() > 0.05
    assert out["tokens"][0] == ["今天", "天气", "真", "好", "PAD", "PAD", "PAD"]
    assert out["tokens"][1] == ["人工", "智能", "正在", "改变", "我们", "的", "世界"]


def test_number_words_by_rules():
    assert english(321) == ["three", "hundred", "twenty", "one"]
    assert "".join(chinese(321)) == "三百二十一"
    cases = {
        0: "零",
        10: "十",
        15: "十五",
        110: "一百一十",
        105: "一百零五",
        1005: "一千零五",
        1010: "一千零一十",
        1500: "一千五百",
        2024: "二千零二十四",
    }
    for n, zh in cases.items():
        assert "".join(chinese(n)) == zh, n
    assert english(1005) == ["one", "thousand", "five"]
    task = NumberTranslation(TranslationConfig(direction="en-zh", max_number=999))
    assert set(task.held_ids.tolist()).isdisjoint(task.train_ids.tolist())
    assert len(task.held_ids) == 100
    src, tgt_in, tgt_out = task.sample(8, torch.Generator().manual_seed(0))
    assert torch.all(tgt_in[:, 0] == BOS)
    assert torch.all((tgt_out == EOS).sum(1) == 1)
    with pytest.raises(KeyError):
        task.encode("three hundred and one")


def test_beam_search_scores_with_the_length_penalty_and_width_one_is_greedy():
    torch.manual_seed(1)
    model = EncoderDecoder(toy_config(46, 5, 8, d_model=32)).eval()
    src = torch.tensor([[5, 6, 7]])
    g_ids, g_logps = greedy(model, src, 8, BOS, EOS)
    one = beam_search(model, src, 8, BOS, EOS, width=1, alpha=0.0)
    assert list(one[0].ids) == g_ids
    assert one[0].logprob == pytest.approx(sum(g_logps), abs=1e-4)
    beams = beam_search(model, src, 8, BOS, EOS, width=4, alpha=0.6)
    assert len(beams) == 4
    assert [h.score for h in beams] == sorted((h.score for h in beams), reverse=True)
    for h in beams:
        assert h.score == pytest.approx(h.logprob / length_penalty(len(h.ids), 0.6))
    assert beams[0].logprob >= one[0].logprob - 1e-6 or beams[0].score >= one[
        0
    ].logprob / length_penalty(len(g_ids), 0.6)
    assert length_penalty(1, 0.6) == pytest.approx(1.0)
    # pad and bos are never targets: with them banned, neither search writes them
    ids, _ = greedy(model, src, 8, BOS, EOS, (PAD, BOS))
    hyps = beam_search(model, src, 8, BOS, EOS, 4, 0.6, (PAD, BOS))
    assert not {PAD, BOS} & {*ids, *(i for h in hyps for i in h.ids)}
