"""A die size's faces drawn as bars against fair dice (core/dice_stats.py `Fit`): one row per face or
run of faces, the bar in blocks, the fair expectation marked `│` on it, the count written out, and
the verdict in words — so nothing is said by colour alone."""

from __future__ import annotations

from rich.text import Text

from dicetable.core.dice_stats import Fit

BAR = 44  # cells of the longest bar: label, bar and count fit 78 columns


def chart(fit: Fit) -> Text:
    """`d6 — 120 dice: chi-square …`, then a bar per face with the expected count marked."""
    text = Text()
    text.append(f"{fit.name}", "bold")
    text.append(f" — {fit.dice} {'die' if fit.dice == 1 else 'dice'}: {fit.verdict()}\n")
    top = max(max(b.count for b in fit.bins), max(b.expected for b in fit.bins), 1)
    width = max(len(b.label) for b in fit.bins)
    for b in fit.bins:
        cells = round(b.count / top * BAR)
        mark = min(BAR - 1, int(b.expected / top * BAR))
        bar = "".join("│" if i == mark else "█" if i < cells else " " for i in range(BAR))
        text.append(f"  {b.label:>{width}} ")
        text.append(bar, "cyan" if fit.enough else "")
        text.append(f" {b.count:>4}\n")
    each = fit.bins[0].expected
    equal = all(abs(b.expected - each) < 1e-9 for b in fit.bins)
    text.append(f"  │ marks what fair dice give{f' ({each:.1f} each)' if equal else ''}\n", "dim")
    return text
