from backend.timeline import Timeline


def test_scalars_are_kept_whole_and_resent_steps_replace():
    tl = Timeline(1000)
    for s in range(5):
        tl.add_scalars(s, {"loss": float(s)})
    tl.add_scalars(4, {"loss": 40.0})
    steps, values = tl.scalars_after(1)
    assert steps == [2, 3, 4] and values[-1] == {"loss": 40.0}


def test_frames_thin_under_budget_but_keep_recent_and_first():
    tl = Timeline(budget_bytes=100 * 10)  # room for 10 frames of 100 bytes
    for s in range(200):
        tl.add_frame(s, bytes(100))
    assert tl.frame_bytes <= 1000
    assert tl.frame_steps[0] == 0  # the first frame survives every thinning
    assert tl.frame_steps[-1] == 199
    recent = tl.frame_steps[-4:]
    assert recent == [196, 197, 198, 199]  # the newest frames are whole
    gaps = [b - a for a, b in zip(tl.frame_steps, tl.frame_steps[1:], strict=False)]
    assert gaps == sorted(gaps, reverse=True)  # older history is sparser


def test_frame_at_returns_the_frame_at_or_before():
    tl = Timeline(10_000)
    for s in (0, 5, 10):
        tl.add_frame(s, bytes([s]))
    assert tl.frame_at(7) == bytes([5])
    assert tl.frame_at(10) == bytes([10])
    assert tl.frame_at(100) == bytes([10])
    assert Timeline(10).frame_at(3) is None
