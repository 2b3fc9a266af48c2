"""audit.context: what the page shows of a chain, and what stays hidden until the reviewer answered."""

from prm_factory.audit.context import chain_contexts, code_tests
from prm_factory.audit.sample import sources_for
from prm_factory.storage.sql import connect
from tests.audit.conftest import CODE_PROGRAM


def _contexts(dataset):
    con = connect(dataset)
    try:
        sources = sources_for([row[0] for row in con.execute("DESCRIBE steps").fetchall()])
        ids = [row[0] for row in con.execute("SELECT chain_id FROM chains").fetchall()]
        return chain_contexts(con, ids, sources)
    finally:
        con.close()


def test_a_math_chain_carries_problem_solution_steps_and_hidden_verdicts(audit_dataset, hostile_texts):
    contexts = _contexts(audit_dataset)
    math = [c for c in contexts.values() if c["domain"] == "math"]
    assert len(math) == 12 and len(contexts) == 13
    hostile = next(c for c in math if c["steps"][0]["text"] == hostile_texts["step"])
    assert hostile["problem"] == hostile_texts["problem"]
    assert "#### " in hostile["reference_solution"]
    assert [s["index"] for s in hostile["steps"]] == [0, 1, 2]
    assert hostile["verdicts"]["1"]["verifier"]["verdict"] == "correct"
    assert hostile["verdicts"]["0"]["mc"]["hard_label"] is True
    assert hostile["outcome"]["outcome"] == "correct" and hostile["program"] is None


def test_a_code_chain_carries_its_program_and_per_test_results(audit_dataset):
    code = next(c for c in _contexts(audit_dataset).values() if c["domain"] == "code")
    assert code["program"] == CODE_PROGRAM
    assert [(t["name"], t["status"]) for t in code["tests"]] == [
        ("test_1", "passed"),
        ("test_2 <b>", "failed"),
    ]


def test_unreadable_test_evidence_gives_no_tests():
    assert code_tests("not json") == [] and code_tests('{"tests": "x"}') == []
    assert code_tests('{"tests": [{"name": "t", "passed": true}]}')[0]["status"] == "passed"
