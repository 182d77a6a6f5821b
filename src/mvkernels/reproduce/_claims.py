"""Paper claims checked by a reproduction: claim -> shown / not shown, with the numbers.

An experiment builds a list of :class:`Claim` from its own results and writes it with
:func:`write_claims` (``claims.json`` beside ``results.md``) and shows it in its report with
:func:`claims_table`. :func:`claims_index` gathers the ``claims.json`` of every experiment
folder into one table per paper for the results index page, so the verdicts on that page
come from the runs, never from hand-typed text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ._report import markdown_table

#: the verdicts a claim can get
VERDICTS = ("shown", "not shown", "not run", "not comparable")


@dataclass
class Claim:
    """One statement of a paper and what our run says about it.

    Attributes
    ----------
    claim : str
        The paper's statement (with the table / figure it comes from).
    paper : str
        The paper's number(s) behind it.
    ours : str
        Our number(s), from this run.
    verdict : str
        ``"shown"``, ``"not shown"``, ``"not run"`` (e.g. the data is not available) or
        ``"not comparable"`` (our setting cannot be compared with the paper's number).
    test : str
        The criterion applied to decide the verdict.
    """

    claim: str
    paper: str
    ours: str
    verdict: str
    test: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @classmethod
    def not_run(cls, claim: str, paper: str, why: str) -> Claim:
        """A claim this run could not test (``why``: e.g. the data is not available)."""
        return cls(claim=claim, paper=paper, ours=why, verdict="not run", test="-")


def verdict(ok: bool) -> str:
    """``"shown"`` when ``ok`` else ``"not shown"``."""
    return "shown" if ok else "not shown"


def versus(pairs: Iterable[tuple[float, float]]) -> str:
    """``"a vs b / c vs d"``: two accuracies (in %) compared at each level."""
    return " / ".join(f"{a:.2f} vs {b:.2f}" for a, b in pairs)


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell (pipes escaped)."""
    return str(text).replace("|", "\\|")


def claims_table(claims: Sequence[Claim], experiment: str | None = None) -> str:
    """Markdown table of ``claims`` (a first column naming ``experiment`` when given)."""
    head = ["claim (paper)", "paper", "ours", "verdict", "criterion"]
    rows = [
        [_cell(c.claim), _cell(c.paper), _cell(c.ours), f"**{c.verdict}**", _cell(c.test or "-")]
        for c in claims
    ]
    if experiment is not None:
        head = ["experiment", *head]
        rows = [[experiment, *r] for r in rows]
    return markdown_table(head, rows)


def write_claims(output: Path | str, paper: str, claims: Sequence[Claim]) -> Path:
    """Write ``claims.json`` (``{"paper": ..., "claims": [...]}``) into ``output``."""
    path = Path(output) / "claims.json"
    path.write_text(
        json.dumps({"paper": paper, "claims": [asdict(c) for c in claims]}, indent=2) + "\n"
    )
    return path


def claims_index(folders: Iterable[Path]) -> list[str]:
    """Markdown lines: one claims table per paper over the ``claims.json`` of ``folders``.

    Folders without ``claims.json`` are skipped; an empty list when none has one.
    """
    by_paper: dict[str, list[tuple[str, Claim]]] = {}
    for folder in folders:
        path = Path(folder) / "claims.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        for c in data.get("claims", []):
            by_paper.setdefault(data.get("paper", "?"), []).append((Path(folder).name, Claim(**c)))
    if not by_paper:
        return []
    lines = [
        "",
        "## Paper claims: shown / not shown",
        "",
        (
            "One table per paper, gathered from each experiment's `claims.json` (written by "
            "the run, with the criterion used). Details and the full tables are in each "
            "report."
        ),
    ]
    for paper, items in by_paper.items():
        head = ["experiment", "claim (paper)", "paper", "ours", "verdict", "criterion"]
        rows = [
            [
                f"[{exp}]({exp}/results.md)",
                _cell(c.claim),
                _cell(c.paper),
                _cell(c.ours),
                f"**{c.verdict}**",
                _cell(c.test or "-"),
            ]
            for exp, c in items
        ]
        lines += ["", f"### {paper}", "", markdown_table(head, rows)]
    return lines
