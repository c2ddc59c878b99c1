"""bench/dispatch.py: what the planner's gaps are measured against."""

import json

from bench import dispatch

BEST_KNOWN = json.loads((dispatch.DATA / "BKS.json").read_text())


def test_gaps_are_taken_to_the_listed_best_known_distance():
    c101 = dispatch.read_instance(dispatch.DATA / "solomon" / "C101.txt", BEST_KNOWN)

    assert c101.best_known == BEST_KNOWN["C101_distance"]["best_known_cost"]
    assert c101.listed_best_known is None


def test_a_listed_figure_below_the_proven_optimum_gives_way_to_the_optimum():
    r109 = dispatch.read_instance(dispatch.DATA / "solomon" / "R109.txt", BEST_KNOWN)

    assert r109.best_known == 1146.9
    assert r109.listed_best_known == 1101.37
    assert r109.best_known_vehicles == 13


def test_a_proven_bound_only_ever_replaces_a_figure_below_it():
    for name, bound in dispatch.PROVEN_BOUNDS.items():
        assert BEST_KNOWN[f"{name}_distance"]["best_known_cost"] < bound
