"""Transcripts written by earlier versions keep their verdicts: `dicetable verify` on the files in
tests/fixtures/old_transcripts/ (written by protocol version 2 as of 9f8bbde, before net/ was split into rooms) prints what
verdicts.tsv says. A change that alters a verdict on purpose updates verdicts.tsv in the same commit
and says so in its note: the verdicts name people since issue 34 (a dice room: its rolls and who
made them); since issue 32 a valid verdict says who confirmed the end, and these files, written before end
receipts, say `end not confirmed (written before receipts)`."""

from __future__ import annotations

from pathlib import Path

import pytest

from net_helpers import dicetable

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "old_transcripts"
VERDICTS = [line.split("\t") for line in (FIXTURES / "verdicts.tsv").read_text().splitlines() if line]


@pytest.mark.parametrize(("files", "verdict"), VERDICTS, ids=[files for files, _ in VERDICTS])
def test_an_old_transcript_keeps_its_verdict(files, verdict):
    run = dicetable("verify", *(str(FIXTURES / name) for name in files.split()))
    lines = [line.removeprefix(f"{FIXTURES}/") for line in run.stdout.strip().splitlines()]
    assert "|".join(lines) == verdict, run.stderr
    assert run.returncode == (1 if "invalid:" in verdict else 0)
