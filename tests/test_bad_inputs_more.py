"""Bad input of the observability stacks' own log formats (issue 33): MLflow
traces, the OpenAI Agents SDK's trace processor export and the Langfuse
SDK's spans, mangled: each gets its verdict or one paragraph (exit 2),
never a traceback (the machinery of :mod:`test_bad_inputs`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bad_inputs import TELEMETRY, Case, _c, _check, _run

MLFLOW = TELEMETRY / "mlflow" / "clean.traces.jsonl"
AGENTS = TELEMETRY / "agents_tracing" / "clean.spans.jsonl"
LANGFUSE = TELEMETRY / "langfuse" / "clean.otlp.jsonl"


def _mlflow(change: str) -> str:
    traces = [json.loads(line) for line in MLFLOW.read_text(encoding="utf-8").splitlines()]
    for trace in traces:
        spans = trace["data"]["spans"]
        if change == "spans-number":
            trace["data"]["spans"] = 5
        for span in spans:
            if "mlflow.spanInputs" not in span["attributes"]:
                continue
            if change == "attributes-list":
                span["attributes"] = [1, 2]
            elif change == "inputs-text":
                span["attributes"]["mlflow.spanInputs"] = json.dumps("hello")
    return "".join(json.dumps(t) + "\n" for t in traces)


def _agents(change: str) -> str:
    items = [json.loads(line) for line in AGENTS.read_text(encoding="utf-8").splitlines()]
    for item in items:
        data = item.get("span_data")
        if not isinstance(data, dict) or data.get("type") != "generation":
            continue
        if change == "span-data-text":
            item["span_data"] = "generation"
            item["object"] = "trace.span"
        elif change == "input-number":
            data["input"] = 42
    if change == "batch":  # the SDK exporter's own payload: {"data": [...]}
        return json.dumps({"data": items}) + "\n"
    return "".join(json.dumps(i) + "\n" for i in items)


def _langfuse_cut() -> str:
    text = LANGFUSE.read_text(encoding="utf-8")
    return text.replace('{\\"tools\\": [', '{\\"tools', 10)  # every input attribute cut short


FILES = {
    "mlflow_spans_number.jsonl": lambda: _mlflow("spans-number"),
    "mlflow_attributes_list.jsonl": lambda: _mlflow("attributes-list"),
    "mlflow_inputs_text.jsonl": lambda: _mlflow("inputs-text"),
    "agents_span_data_text.jsonl": lambda: _agents("span-data-text"),
    "agents_input_number.jsonl": lambda: _agents("input-number"),
    "agents_batch.json": lambda: _agents("batch"),
    "langfuse_inputs_cut.jsonl": _langfuse_cut,
}

CASES = [
    _c("mlflow-spans-number", "import {tmp}/mlflow_spans_number.jsonl", needle="an MLflow trace"),
    _c(
        "mlflow-attributes-list",
        "import {tmp}/mlflow_attributes_list.jsonl",
        needle="an MLflow trace",
    ),
    _c(
        "mlflow-inputs-text",
        "import {tmp}/mlflow_inputs_text.jsonl",
        needle="its mlflow.spanInputs is not a model request",
    ),
    _c(
        "agents-span-data-text",
        "import {tmp}/agents_span_data_text.jsonl",
        needle="an OpenAI Agents SDK trace or span",
    ),
    _c(
        "agents-input-number",
        "import {tmp}/agents_input_number.jsonl",
        needle="its input is not a model request",
    ),
    _c("agents-exporter-batch", "import {tmp}/agents_batch.json", status=0),
    _c(
        "langfuse-inputs-cut",
        "import {tmp}/langfuse_inputs_cut.jsonl",
        needle="langfuse.observation.input attribute",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_stack_log(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, make in FILES.items():
        if name.split(".")[0].replace("_", "-") in case.name.replace("exporter-", ""):
            (tmp_path / name).write_text(make(), encoding="utf-8")
    status, out, err = _run(case, tmp_path, capsys)
    _check(case, tmp_path, status, out, err)
