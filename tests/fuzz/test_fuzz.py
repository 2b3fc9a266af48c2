"""The fuzz suite's bounded run (issue 45): every surface in tests/fuzz/surfaces.py under Hypothesis, a few
dozen to a few hundred cases each; bench/bench_fuzz.py runs the same properties for thousands."""

from __future__ import annotations

from hypothesis import given, settings

from tests.fuzz import surfaces


@settings(max_examples=100)
@given(surfaces.chain_files())
def test_a_chains_file_of_any_shape_is_read_or_rejected_by_line(case) -> None:
    surfaces.check_chain_file(*case)


@settings(max_examples=60)
@given(surfaces.problem_files())
def test_a_problems_file_of_any_shape_is_read_or_rejected_by_line(data) -> None:
    surfaces.check_problem_file(data)


@settings(max_examples=200)
@given(surfaces.plugin_outputs())
def test_a_plugins_output_is_used_whole_or_refused_in_one_line(case) -> None:
    surfaces.check_plugin_output(*case)


@settings(max_examples=60)
@given(surfaces.http_requests())
def test_the_audit_page_answers_every_request_with_a_documented_status(request) -> None:
    surfaces.check_http_request(request)


@settings(max_examples=12)
@given(surfaces.api_calls())
def test_the_python_api_refuses_bad_arguments_with_its_own_errors(case) -> None:
    surfaces.check_api_call(*case)


@settings(max_examples=10)
@given(surfaces.cli_calls())
def test_the_cli_exits_0_1_or_2_without_a_traceback(args) -> None:
    surfaces.check_cli_call(args)


@settings(max_examples=40)
@given(surfaces.reward_requests())
def test_the_reward_server_answers_every_request_with_a_documented_status(request) -> None:
    surfaces.check_reward_request(request)
