"""The time-to-insight table (bench/insight.py) covers every lab of the catalog, and a
condition in it is really reached in Chromium by pressing play. No timing is asserted."""

from __future__ import annotations

import pytest

from bench import insight


def test_every_catalog_lab_has_an_insight_entry(live_server):
    labs = insight.catalog(live_server)
    ids = {lab["id"] for lab in labs}
    missing = ids - set(insight.INSIGHT)
    assert not missing, f"labs without a time-to-insight entry in bench/insight.py: {missing}"
    stale = set(insight.INSIGHT) - ids
    assert not stale, f"entries for labs the catalog does not have: {stale}"
    # A lab that trains when played needs a condition; one that does not, none.
    for lab in labs:
        entry = insight.INSIGHT[lab["id"]]
        if lab.get("trains") and insight.plays(lab):
            assert entry is not None, f"{lab['id']} trains: it needs a headline condition"
            predicate, description = entry
            assert predicate.strip() and description.strip()


@pytest.mark.browser
def test_a_quick_labs_condition_is_reached_by_pressing_play(live_server, browser):
    lab = next(lab for lab in insight.catalog(live_server) if lab["id"] == "apple")
    row = insight.measure(browser, live_server, lab, limit=60)
    assert row["errors"] == [], row
    assert row["first_s"] is not None, row
    assert row["insight_s"] is not None, row  # the loss really fell below its bound
    assert row["scalars"]["loss"] < 1e-3, row
