from cfb_helpers import episode, gold, gold_turns, play, sample

from callbench.benchmarks.complexfuncbench.definitions import GENERIC_ERROR, PredCall


def test_gold_path_succeeds_in_both_modes_for_every_fixture_sample():
    ids = [
        "Attraction-0",
        "Hotels-0",
        "Hotels-10",
        "Flights-0",
        "Car-Rental-0",
        "Car-Rental-10",
        "Attraction-10",
        "Cross-0",
    ]
    for mode in ("faithful", "improved"):
        for sid in ids:
            out = play(episode(sid, mode), gold_turns(sid))
            assert out.success, (mode, sid, out.terminal)
            assert out.correct_calls == out.gold_calls
            assert out.first_error is None


def test_optional_lookup_step_joins_the_next_step_at_once():
    ep = episode("Hotels-0")
    # Step 0 is only a location look-up, so step 1 is already in the current gold list.
    assert [g.uid for g in ep.current] == ["0.0", "1.0"]
    out = play(ep, gold_turns("Hotels-0")[1:])  # the model knows the dest_id and skips the look-up
    assert out.success and out.correct_calls == 4 and out.gold_calls == 5


def test_parallel_step_and_golden_list_advance():
    ep = episode("Hotels-0")
    turns = gold_turns("Hotels-0")
    play_turns = turns[:2]
    for turn in play_turns:
        ep.play_turn([PredCall(i, n, a) for i, (n, a) in enumerate(turn)])
    # Each matched turn appends the next step even before the current one is done (upstream lookahead).
    assert [g.uid for g in ep.current] == ["2.0", "2.1", "3.0"]
    # One call of the parallel step right, one wrong: the step still advances, the miss stays.
    (n1, a1), (n2, a2) = turns[2]
    results = ep.play_turn([PredCall(10, n1, a1), PredCall(11, n2, {**a2, "hotel_id": 1})])
    assert [r.status for r in results] == ["matched", "mismatch"]
    assert results[0].content == sample("Hotels-0").steps[2][0].response
    assert results[1].content == GENERIC_ERROR and results[1].error.kind == "value_error"
    assert sorted(g.uid for g in ep.current) == ["2.1", "3.0"]
    # The missed call can still be satisfied later, together with the next step.
    results = ep.play_turn([PredCall(12, *turns[3][0]), PredCall(13, n2, a2)])
    assert all(r.status == "matched" for r in results)
    assert ep.current == []


def test_hungarian_pairs_parallel_mistakes_with_the_most_similar_gold():
    ep = episode("Cross-0")
    lookups = gold_turns("Cross-0")[0]
    wrong = [(n, {**a, "query": a["query"] + " City"}) for n, a in lookups]
    results = ep.play_turn([PredCall(i, n, a) for i, (n, a) in enumerate(wrong)])
    assert [r.gold for r in results] == ["0.0", "0.1", "0.2", "0.3"]
    assert all(r.status == "mismatch" and r.error.kind == "value_error" for r in results)


def test_min_similarity_threshold_leaves_far_calls_unpaired():
    ep = episode("Attraction-0", "improved", min_similarity=0.99)
    name, args = gold("Attraction-0", 0)
    result = ep.play_turn([PredCall(0, name, {**args, "currency_code": "USD"})])[0]
    assert result.status == "unpaired" and result.content == GENERIC_ERROR


def test_free_lookups_are_answered_any_time_and_counted_once_when_improved():
    for mode, expected in (("faithful", 4), ("improved", 3)):
        ep = episode("Attraction-10", mode)
        lookup = gold_turns("Attraction-10")[0]
        out = play(
            ep, [lookup, gold_turns("Attraction-10")[1][:1], lookup, gold_turns("Attraction-10")[1][1:]]
        )
        assert out.success
        assert out.correct_calls == expected, mode
        assert ep.results[2].method == "free"
        assert ep.results[2].content == sample("Attraction-10").steps[0][0].response


def test_generic_error_and_early_end_in_faithful_mode():
    name, args = gold("Hotels-10", 1)
    wrong = [(name, {**args, "arrival_date": "2024-11-21"})]
    ep = episode("Hotels-10", "faithful")
    out = play(
        ep, [gold_turns("Hotels-10")[0], wrong, gold_turns("Hotels-10")[1], gold_turns("Hotels-10")[2]]
    )
    assert not out.success
    assert [e.kind for e in out.terminal] == ["value_error"]
    assert ep.ended is not None and ep.turns == 2
    assert [r.status for r in ep.results[-2:]] == ["after_end", "after_end"]
    assert out.predicted_calls == 2


def test_improved_mode_lets_the_model_correct_itself():
    name, args = gold("Hotels-10", 1)
    wrong = [(name, {**args, "arrival_date": "2024-11-21"})]
    out = play(episode("Hotels-10"), [gold_turns("Hotels-10")[0], wrong, *gold_turns("Hotels-10")[1:]])
    assert out.success and out.first_error is None
    assert out.predicted_calls == 4 and out.correct_calls == 3 and out.model_turns == 4


def test_format_errors_are_returned_and_the_model_may_correct_them():
    name, args = gold("Attraction-0", 0)
    for mode in ("faithful", "improved"):
        ep = episode("Attraction-0", mode)
        bad = ep.play_turn([PredCall(0, name, {**args, "slug": 7})])[0]
        assert bad.status == "format_error" and "should be a string" in bad.content["error"]
        assert ep.ended is None
        out = play(ep, [[(name, args)]])
        assert out.success and out.predicted_calls == 2 and out.model_turns == 2, mode


def test_faithful_fails_with_the_errors_of_the_last_tool_turn():
    turns = gold_turns("Attraction-10")
    (n1, a1), (n2, a2) = turns[1]
    last = [(n1, a1), (n2, {**a2, "date": "2024-12-15"})]
    faithful = play(episode("Attraction-10", "faithful"), [turns[0], last])
    improved = play(episode("Attraction-10"), [turns[0], last])
    assert [e.kind for e in faithful.terminal] == ["value_error"]  # GPT-style runner: last turn's errors
    assert [e.kind for e in improved.terminal] == ["stop_early"]
    assert faithful.first_error == improved.first_error == "value_error"


def test_unpaired_extra_call_format_checked_only_when_improved():
    turns = gold_turns("Attraction-0")
    extra = ("Get_Availability", {"slug": 3})
    for mode, status in (("faithful", "unpaired"), ("improved", "format_error")):
        ep = episode("Attraction-0", mode)
        results = ep.play_turn([PredCall(0, *turns[0][0]), PredCall(1, *extra)])
        assert results[1].status == status


def test_call_after_complete_path():
    turns = gold_turns("Attraction-0")
    extra = [("Get_Availability", {"slug": "x"})]
    faithful = play(episode("Attraction-0", "faithful"), [turns[0], extra])
    assert not faithful.success and faithful.first_error == "func_hallucination"
    improved = play(episode("Attraction-0"), [turns[0], extra])
    assert improved.success and improved.predicted_calls == 2 and improved.correct_calls == 1


def test_stop_early_and_max_turns():
    turns = gold_turns("Flights-0")
    early = play(episode("Flights-0"), turns[:2])
    assert not early.success and early.first_error == "stop_early" and early.completed_steps == 2
    capped = play(episode("Flights-0"), turns[:2], stop="max_rounds")
    assert capped.first_error == "max_turns"
    infra = play(episode("Flights-0"), turns[:1], stop="error")
    assert infra.infra and infra.first_error == "infra_error"


def test_skipped_optional_lookups_are_pruned_at_the_end():
    turns = gold_turns("Car-Rental-0")
    out = play(episode("Car-Rental-0"), turns[1:])
    assert out.success


def test_faithful_mode_reproduces_the_upstream_pruning_slip():
    # Two adjacent unmatched optional look-ups: upstream's in-place removal skips the second one,
    # so the sample counts as stop_early; improved mode prunes both.
    from callbench.benchmarks.complexfuncbench.outcome import finish

    verdicts = {}
    for mode in ("faithful", "improved"):
        ep = episode("Car-Rental-0", mode)
        # As if every step had been appended and all required calls matched: upstream's list then
        # holds only the two unmatched look-ups.
        ep.pointer, ep.turn_id = len(ep.steps), len(ep.steps)
        ep.current = [g for step in ep.steps for g in step if g.optional]
        ep.consumed = {g.uid for step in ep.steps for g in step if not g.optional}
        verdicts[mode] = finish(ep, "answer").first_error
    assert verdicts == {"faithful": "stop_early", "improved": None}


def test_decode_errors():
    name, args = gold("Attraction-0", 0)
    faithful = play(episode("Attraction-0", "faithful"), [[(name, None)], [(name, args)]])
    assert not faithful.success and faithful.first_error == "decode_error"
    ep = episode("Attraction-0")
    result = ep.play_turn([PredCall(0, name, None, "Expecting value")])[0]
    assert result.status == "decode_error" and "not a valid JSON object" in result.content
    assert play(ep, [[(name, args)]]).success


def test_first_error_is_the_unrepaired_one_in_improved_and_the_terminal_one_in_faithful():
    turns = gold_turns("Flights-0")
    ((name, args),) = turns[1]
    bad_format = [(name, {**args, "adults": "two"})]
    # Improved: a repaired format error is not what the failure is filed under; the early stop is.
    repaired = play(episode("Flights-0"), [turns[0], bad_format, turns[1]])
    assert not repaired.success and repaired.first_error == "stop_early"
    # An error on a gold call that never matched afterwards is.
    wrong = [(name, {**args, "cabinClass": "ECONOMY"})]
    unrepaired = play(episode("Flights-0"), [turns[0], wrong, turns[2]])
    assert unrepaired.first_error == "value_error"
    # Faithful: the error list upstream writes (here the last tool turn's errors).
    faithful = play(episode("Flights-0", "faithful"), [turns[0], bad_format, turns[1]])
    assert faithful.first_error == "stop_early"


# ---------------------------------------------------------------- faithful = upstream (item 14)


def _custom(steps, sample_id="Hotels-90"):
    """A sample over Hotels-0's functions with the given gold steps of (name, arguments)."""
    from callbench.benchmarks.complexfuncbench.data import CfbCall

    base = sample("Hotels-0")
    return base.model_copy(
        update={
            "id": sample_id,
            "index": int(sample_id.rsplit("-", 1)[1]),
            "steps": [
                [CfbCall(name=n, arguments=a, response={"data": [n, k, j]}) for j, (n, a) in enumerate(step)]
                for k, step in enumerate(steps)
            ],
        }
    )


def _custom_episode(steps, mode):
    from callbench.benchmarks.complexfuncbench.definitions import CfbSettings
    from callbench.benchmarks.complexfuncbench.embedders import CharNgramEmbedder
    from callbench.benchmarks.complexfuncbench.engine import Episode

    return Episode(_custom(steps), CfbSettings(mode=mode), CharNgramEmbedder())


SEARCH = (
    "Search_Hotels",
    {"dest_id": "-1", "search_type": "CITY", "arrival_date": "2024-11-12", "departure_date": "2024-11-15"},
)


def test_faithful_golden_list_adds_one_step_per_update_as_upstream():
    steps = [
        [("Search_Hotel_Destination", {"query": "Paris"})],
        [("Search_Hotel_Destination", {"query": "Rome"})],
        [SEARCH],
    ]
    faithful, improved = _custom_episode(steps, "faithful"), _custom_episode(steps, "improved")
    # Upstream appends one step for a look-up-only list; improved skips the whole look-up chain.
    assert [g.uid for g in faithful.current] == ["0.0", "1.0"]
    assert [g.uid for g in improved.current] == ["0.0", "1.0", "2.0"]
    out = play(faithful, [[SEARCH]])
    assert not out.success and faithful.ended is not None  # the search was not yet in the list
    assert play(improved, [[SEARCH]]).success


def test_faithful_any_hotel_name_search_lets_the_next_step_join():
    hotel = ("Search_Hotels", {**SEARCH[1], "search_type": "hotel"})
    policies = ("Get_Hotel_Policies", {"hotel_id": 1})
    tips = ("Get_Hotel_Reviews(Tips)_Sort_Option", {"hotel_id": 1})
    steps = [[hotel, policies], [tips]]
    assert [g.uid for g in _custom_episode(steps, "faithful").current] == ["0.0", "0.1", "1.0"]
    assert [g.uid for g in _custom_episode(steps, "improved").current] == ["0.0", "0.1"]


def test_faithful_format_error_in_the_last_tool_turn_is_stop_early_as_upstream():
    turns = gold_turns("Attraction-10")
    (n1, a1), (n2, a2) = turns[1]
    last = [(n1, a1), (n2, {**a2, "date": 20241215})]  # a format error: upstream's error list stays empty
    faithful = play(episode("Attraction-10", "faithful"), [turns[0], last])
    assert [e.kind for e in faithful.terminal] == ["stop_early"] and faithful.first_error == "stop_early"


def test_faithful_keeps_an_unmatched_location_to_lat_long_open_at_the_end():
    # Upstream's final pruning names five look-ups, not Location_to_Lat_Long: skipping it is stop_early.
    turns = gold_turns("Car-Rental-10")
    assert play(episode("Car-Rental-10", "faithful"), turns[1:]).first_error == "stop_early"
    assert play(episode("Car-Rental-10"), turns[1:]).success
    assert play(episode("Car-Rental-10", "faithful"), turns).success


def test_faithful_call_on_an_empty_gold_list_is_func_hallucination_before_decoding():
    turns = gold_turns("Attraction-0")
    name, _args = turns[0][0]
    out = play(episode("Attraction-0", "faithful"), [turns[0], [(name, None)]])
    assert out.first_error == "func_hallucination"


# ---------------------------------------------------------------- improved first error (item 15)


def test_improved_does_not_blame_a_wrong_optional_lookup():
    turns = gold_turns("Hotels-0")
    wrong_lookup = [("Search_Hotel_Destination", {"query": "Pariss"})]
    with_lookup = play(episode("Hotels-0"), [wrong_lookup, turns[1]])
    without = play(episode("Hotels-0"), [turns[1]])
    assert without.first_error == "stop_early"
    assert with_lookup.first_error == "stop_early"
    # An error on a required call the model never repaired is still what the failure is filed under.
    ((name, args),) = turns[1]
    wrong_search = play(episode("Hotels-0"), [turns[0], [(name, {**args, "arrival_date": "2024-11-13"})]])
    assert wrong_search.first_error == "value_error"
