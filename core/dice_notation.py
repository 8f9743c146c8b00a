"""Reading dice notation (the grammar is in core/dice_expr.py's docstring) into terms (core/dice_terms.py).

A small recursive-descent reader over the text with its spaces taken out and, outside labels, in
lower case; `_at` maps each place back to the character a person typed, so an error can say where.
Every error is one sentence: the expression, where, what is wrong.
"""

from __future__ import annotations

import bisect
import re

from dicetable.core.dice_terms import (
    FUDGE, MAX_CHAIN, MAX_DICE, MAX_NUMBER, MAX_SIDES, BadExpression, Chain, Condition, Dice, Formula, Group, Negative,
    Number, Operation, Term, chain_length, default_explosion, default_reroll, die_faces,
)

MAX_NESTING = 8  # brackets inside brackets
MAX_REPEAT = 20  # N in `N#`
MAX_LABEL = 32

_COMPARE = ("<=", ">=", "<", ">", "=")


def _digit(c: str) -> bool:
    return len(c) == 1 and c in "0123456789"  # not str.isdigit: "²" is a digit to it, and no number to int()

_WORDS = "r rr ro ! x xo k kh kl d dh dl cs f"


def read(text: str) -> tuple[Formula, ...]:
    reader = _Reader(text)
    no_dice = BadExpression(f"{reader.shown!r}: no 'd' — write the dice as NdS, e.g. 3d6")
    try:
        formulas = reader.line()
    except BadExpression:
        if "d" not in re.sub(r"\[[^\]]*\]?", "", reader.s):  # no 'd' outside labels: the commonest slip, said first
            raise no_dice from None
        raise
    if not any(True for f in formulas for _ in f.term.dice_terms()):  # `5+3`: a 'd' outside labels is always dice
        raise no_dice
    return formulas


def _compact(shown: str) -> tuple[str, list[int]]:
    """`shown` without spaces and in lower case outside [labels], and where each kept character was."""
    chars, at, label = [], [], False
    for n, c in enumerate(shown):
        if label:
            label = c != "]"
        elif c.isspace():
            continue
        else:
            label = c == "["
            c = c.lower()
        chars.append(c)
        at.append(n)
    return "".join(chars), at


class _Reader:
    def __init__(self, text: str) -> None:
        self.shown = text.strip()
        self.s, self._at = _compact(self.shown)
        self.i = 0
        self.depth = 0

    # -- where and what went wrong ---------------------------------------------------------------
    def where(self, i: int | None = None) -> str:
        i = self.i if i is None else i
        return "at the end" if i >= len(self.s) else f"at character {self._at[i] + 1}"

    def fail(self, what: str, i: int | None = None) -> BadExpression:
        return BadExpression(f"{self.shown!r} {self.where(i)}: {what}")

    def peek(self, n: int = 0) -> str:
        return self.s[self.i + n] if self.i + n < len(self.s) else ""

    # -- line := roll { "," roll } ----------------------------------------------------------------
    def line(self) -> tuple[Formula, ...]:
        rolls = [self.roll()]
        while self.peek() == ",":
            self.i += 1
            rolls.append(self.roll())
        if self.i < len(self.s):
            raise self.unexpected()
        return tuple(rolls)

    # -- roll := [ N "#" ] sum [ label ] ------------------------------------------------------------
    def roll(self) -> Formula:
        if self.peek() in (",", ""):
            raise self.fail("an empty roll: write dice such as 3d6 between the commas" if self.s else "nothing to roll")
        repeat = 1
        digits = self.digits_ahead()
        if digits and self.peek(digits) == "#":
            start = self.i
            repeat = self.number()
            if not 1 <= repeat <= MAX_REPEAT:
                raise self.fail(f"a roll repeats 1 to {MAX_REPEAT} times, not {repeat}", start)
            self.i += 1
        elif self.peek() == "#":
            raise self.fail("'#' repeats a roll: write how many times first, e.g. 6#4d6kh3")
        term = self.sum()
        label = self.label() if self.peek() == "[" else ""
        return Formula(term, label, repeat)

    # -- sum := product { ("+" | "-") product };  product := unary { ("*" | "/") unary } ------------
    def sum(self, after: str = "") -> Term:
        term = self.product(after)
        while self.peek() in ("+", "-"):
            op = self.s[self.i]
            self.i += 1
            term = Operation(op, term, self.product(after=op))
        return term

    def product(self, after: str = "") -> Term:
        term = self.unary(after)
        while self.peek() in ("*", "/"):
            op, at = self.s[self.i], self.i
            self.i += 1
            right = self.unary(op)
            if op == "/":
                divisor = right.constant()
                if divisor is None:
                    raise self.fail("divide by a number, not by dice, e.g. (2d6+3)/2", at)
                if divisor == 0:
                    raise self.fail("a division by 0", at)
            term = Operation(op, term, right)
        return term

    def unary(self, after: str) -> Term:
        signs = []
        while self.peek() in ("+", "-"):
            signs.append(self.s[self.i])
            self.i += 1
            after = signs[-1]
        term = self.atom(after)
        for sign in reversed(signs):
            term = Negative(term) if sign == "-" else term
        return term

    # -- atom := ( number | dice | "(" sum ")" ) [ label ] --------------------------------------------
    def atom(self, after: str) -> Term:
        c, start = self.peek(), self.i
        if c == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.fail(f"brackets nested more than {MAX_NESTING} deep")
            self.i += 1
            inner = self.sum(after="(")
            if self.peek() != ")":
                raise self.fail("'(' is never closed", start) if not self.peek() else self.unexpected()
            self.i += 1
            self.depth -= 1
            return Group(inner)
        if _digit(c) or c == "d":
            count = self.number() if _digit(c) else None
            if self.peek() == "d":
                return self.dice(count if count is not None else 1, start)
            if self.peek() == ".":
                raise self.fail("whole numbers only")
            if count > MAX_NUMBER:
                raise self.fail(f"the number {count} is too big: a modifier must be at most {MAX_NUMBER}", start)
            return Number(count, self.term_label())
        if not c:
            raise self.fail(f"a number must follow {after!r} (or dice, or a bracket), e.g. 3d6+2" if after else
                            "nothing to roll")
        if c.isalpha():
            word = self.word()
            if self.peek() == "d" or word.endswith("d"):
                raise self.fail(f"{word.removesuffix('d')!r} before 'd' is not a number of dice", start)
            raise self.fail(f"{word!r} is not a number or dice", start)
        if after:
            raise self.fail(f"a number must follow {after!r} (or dice, or a bracket), not {c!r}")
        raise self.unexpected()

    def dice(self, count: int, start: int) -> Dice:
        if not 1 <= count <= MAX_DICE:
            raise self.fail(f"the number of dice must be 1 to {MAX_DICE}, not {count}", start)
        self.i += 1  # the "d"
        c = self.peek()
        if c == "%":
            self.i, sides = self.i + 1, 100
        elif c == "f":
            self.i, sides = self.i + 1, FUDGE
        elif _digit(c):
            at = self.i
            sides = self.number()
            if not 2 <= sides <= MAX_SIDES:
                raise self.fail(f"a die has 2 to {MAX_SIDES} sides, not {sides}", at)
        else:
            raise self.fail("'d' must be followed by the number of sides or F, e.g. d20, d% or 4dF")
        return self.modifiers(count, sides)

    # -- modifiers, in any order, each kind once ---------------------------------------------------
    def modifiers(self, count: int, sides: int) -> Dice:
        found: dict[str, object] = {}
        where: dict[str, int] = {}
        while True:
            c, at = self.peek(), self.i
            if c.isalpha():
                word = self.word()
            elif c == "!":
                self.i += 1
                if self.peek() == "!":
                    raise self.fail("compounding (!!) is not rolled here: write ! (each explosion adds a die)", at)
                word = "!"
            elif c and c in "<>=":
                word = ""  # a bare comparison counts successes
            else:
                break
            kind, value = self.modifier(word, count, sides, at)
            if kind in found:
                raise self.fail(f"a second {kind} {self.s[at:self.i]!r}: a dice term has one", at)
            found[kind], where[kind] = value, at
        if "failures" in found and "successes" not in found:
            raise self.fail("failures count only beside successes, e.g. 10d10>=8f1", where["failures"])
        keep, kept = found.get("keep/drop", ("", 0))
        return Dice(count, sides, found.get("reroll"), found.get("explosion"), keep, kept,
                    found.get("successes"), found.get("failures"), self.term_label())

    def modifier(self, word: str, count: int, sides: int, at: int) -> tuple[str, object]:
        if word in ("r", "ro", "rr", "!", "x", "xo"):
            reroll = word.startswith("r")
            condition = self.condition(optional=True) or (default_reroll(sides) if reroll else default_explosion(sides))
            recursive = word in ("rr", "!", "x")
            piece = self.s[at:self.i]
            return ("reroll" if reroll else "explosion"), self.chain(piece, condition, recursive, sides, at)
        if word in ("k", "kh", "kl", "d", "dh", "dl"):
            keep = {"k": "kh", "d": "dl"}.get(word, word)
            n = self.number() if _digit(self.peek()) else 1
            if keep.startswith("k") and not 1 <= n <= count:
                raise self.fail(f"can keep 1 to {count} of {count} dice, not {n}", at)
            if keep.startswith("d") and not 1 <= n < count:
                raise self.fail(f"can drop 1 to {count - 1} of {count} dice, not {n}" if count > 1 else
                                "cannot drop the only die", at)
            return "keep/drop", (keep, n)
        if word in ("", "cs"):  # "": a bare comparison, `10d10>=8`
            return "successes", self.condition(optional=False)
        if word == "f":
            return "failures", self.condition(optional=False)
        if len(word) == 2 and word[0] == "k":
            raise BadExpression(f"{self.shown!r}: keep is written kh (highest) or kl (lowest), e.g. 4d6kh3")
        raise self.fail(f"{word!r} is not a modifier (known: {_WORDS}, and >= <= > < = for successes;"
                        " give each its number, e.g. 2d6xo6kh1)", at)

    def chain(self, piece: str, condition: Condition, recursive: bool, sides: int, at: int) -> Chain:
        matching, size = condition.matching(sides), len(die_faces(sides))
        die = "dF" if sides == FUDGE else f"d{sides}"
        verb = "explodes" if piece[0] in "!x" else "rerolls"
        if not recursive:
            return Chain(condition, False, 1 if matching else 0)
        if matching == size:
            raise self.fail(f"{piece!r} {verb} every face of a {die}, so it would never stop", at)
        reserved = chain_length(matching, size)
        if reserved is None:
            most = bisect.bisect(range(size), False, key=lambda m: chain_length(m, size) is None) - 1
            raise self.fail(f"{piece!r} {verb} on {matching} of {size} faces, too often to stop within {MAX_CHAIN} draws;"
                            f" at most {most} of a {die}'s faces", at)
        return Chain(condition, True, reserved)

    def condition(self, optional: bool) -> Condition | None:
        """compare := ("=" | "<" | ">" | "<=" | ">=") ["-"] number;  a bare number means "=" it."""
        at = self.i
        op = next((o for o in _COMPARE if self.s.startswith(o, self.i)), "")
        if not op and not _digit(self.peek()):
            if optional:
                return None
            raise self.fail("give the condition, e.g. =1, <3 or >=8")
        self.i += len(op)
        negative = bool(op) and self.peek() == "-"
        self.i += negative
        if not _digit(self.peek()):
            raise self.fail(f"{op!r} must be followed by a number", at)
        value = self.number()
        if value > MAX_NUMBER:
            raise self.fail(f"the number {value} is too big for a condition (at most {MAX_NUMBER})", at)
        return Condition(op or "=", -value if negative else value)

    # -- labels := "[" text "]" -------------------------------------------------------------------
    def term_label(self) -> str:
        """A label right after a number or dice, unless it ends the roll (then it is the roll's)."""
        if self.peek() != "[":
            return ""
        close = self.s.find("]", self.i)
        if close < 0 or close + 1 == len(self.s) or self.s[close + 1] == ",":
            return ""
        return self.label()

    def label(self) -> str:
        start = self.i
        close = self.s.find("]", start)
        if close < 0:
            raise self.fail("'[' is never closed: a label is written [like this]", start)
        self.i = close + 1
        text = self.s[start + 1:close].strip()
        if not text:
            raise self.fail("an empty label '[]'", start)
        if "[" in text:
            raise self.fail("a label holds no '['", start)
        if len(text) > MAX_LABEL or not text.isprintable():
            raise self.fail(f"a label is at most {MAX_LABEL} printable characters", start)
        return text

    # -- pieces ---------------------------------------------------------------------------------
    def digits_ahead(self) -> int:
        n = 0
        while _digit(self.peek(n)):
            n += 1
        return n

    def number(self) -> int:
        n = self.digits_ahead()
        value = int(self.s[self.i:self.i + n])
        self.i += n
        return value

    def word(self) -> str:
        start = self.i
        while self.peek().isalpha() and self.peek().isascii():
            self.i += 1
        if self.i == start:  # a letter outside ASCII
            self.i += 1
        return self.s[start:self.i]

    def unexpected(self) -> BadExpression:
        c = self.peek()
        if c == ")":
            return self.fail("')' has no '(' before it")
        if c == "]":
            return self.fail("']' has no '[' before it")
        if c == "[":
            return self.fail("a label goes after dice, a number or the whole roll, e.g. 2d6[fire]+1d20 [attack]")
        if c == "#":
            return self.fail("'#' repeats a whole roll: write it first, e.g. 6#4d6kh3")
        if c == ".":
            return self.fail("whole numbers only")
        if c and c in "<>=!":
            piece = next((o for o in _COMPARE if self.s.startswith(o, self.i)), c)
            return self.fail(f"{piece!r} belongs right after dice, e.g. 10d10>=8 or 3d6!")
        if c.isalpha():
            start = self.i
            return self.fail(f"{self.word()!r} cannot follow a number (dice are written NdS, e.g. 2d6)", start)
        return self.fail(f"{c!r} is not part of dice notation")
