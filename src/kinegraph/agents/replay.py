"""The `replay` provider: answers recorded in a file, keyed by sample, so published outputs can be re-run
through any graph and parser without a model.

Files (the format is chosen by suffix):
- EgoDyn `generated/<model>_answers.jsonl` (or any prediction JSONL): rows with `model_answer` and
  `qa_id` and/or `clip_id` + `question_id`.
- QuantiPhy `model_outputs/<model>.csv`: the first column is the integer question id; the answer is
  `raw_response` when the file has it (so the parser runs on the raw text), else `parsed_value`;
  `field=` picks another column.

The caller names the sample in `GenerateRequest.metadata`: `sample_id` (matched against `qa_id`, or the
QuantiPhy id; a sample id ending in `:<id>` or `/<id>` also matches that id), or `clip_id` +
`question_id`. A sample with no recorded answer fails that sample only (BackendError, api_error).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from kinegraph.agents.errors import BackendError, UnknownModelError
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.errors import DataError

_TRAILING_ID = re.compile(r"[:/#](\w+)$")


class ReplayBackend:
    """Looks up the recorded answer of the sample named in `request.metadata`."""

    provider = "replay"
    cacheable = False

    def __init__(self, path: str | Path, *, model: str | None = None, field: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise UnknownModelError(f"replay: no recorded-answers file at {self.path}")
        self.model = model or re.sub(r"_answers$", "", self.path.stem)
        if self.path.suffix.lower() == ".csv":
            self.answers = _read_csv(self.path, field)
        else:
            self.answers = _read_jsonl(self.path, field or "model_answer")

    def lookup(self, metadata: dict[str, Any]) -> str | None:
        """The recorded answer for the sample `metadata` names, or None."""
        sample_id = metadata.get("sample_id")
        candidates = []
        if sample_id is not None:
            candidates.append(str(sample_id))
            trailing = _TRAILING_ID.search(str(sample_id))
            if trailing:
                candidates.append(trailing.group(1))
        if metadata.get("clip_id") is not None and metadata.get("question_id") is not None:
            candidates.append(f"{metadata['clip_id']}/{metadata['question_id']}")
        return next((self.answers[c] for c in candidates if c in self.answers), None)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        answer = self.lookup(request.metadata)
        if answer is None:
            keys = {k: request.metadata.get(k) for k in ("sample_id", "clip_id", "question_id")}
            raise BackendError(f"replay:{self.path}: no recorded answer for {keys}")
        return GenerateResponse(text=answer, model=self.model, finish_reason="replay")


def _read_jsonl(path: Path, field: str) -> dict[str, str]:
    answers: dict[str, str] = {}
    with path.open() as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"not valid JSON ({exc.msg})", path=path, line=line_no) from None
            if not isinstance(row, dict) or field not in row:
                raise DataError("missing", path=path, line=line_no, field=field)
            answer = "" if row[field] is None else str(row[field])
            keys = [str(row["qa_id"])] if row.get("qa_id") is not None else []
            if row.get("clip_id") is not None and row.get("question_id") is not None:
                keys.append(f"{row['clip_id']}/{row['question_id']}")
            if not keys:
                raise DataError(
                    "a row needs qa_id or clip_id + question_id", path=path, line=line_no, field="qa_id"
                )
            answers.update(dict.fromkeys(keys, answer))
    return answers


def _read_csv(path: Path, field: str | None) -> dict[str, str]:
    answers: dict[str, str] = {}
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if not header:
            raise DataError("empty file", path=path)
        column = field or ("raw_response" if "raw_response" in header else "parsed_value")
        if column not in header:
            raise DataError(f"no such column (columns: {', '.join(header)})", path=path, line=1, field=column)
        index = header.index(column)
        id_name = header[0] or "<first column>"
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            try:
                sample = str(int(float(row[0])))
            except ValueError:
                raise DataError(
                    f"the first column must be the integer question id, got {row[0]!r}",
                    path=path,
                    line=reader.line_num,
                    field=id_name,
                ) from None
            answers[sample] = row[index] if index < len(row) else ""
    return answers


def create_replay(
    model: str, *, base_url: str | None = None, path: str | Path | None = None, field: str | None = None
) -> ReplayBackend:
    """Factory for `replay:PATH` (or `replay:NAME` with `path=`)."""
    if path is None:
        return ReplayBackend(model, field=field)
    return ReplayBackend(path, model=model, field=field)
