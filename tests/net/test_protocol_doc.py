"""docs/PROTOCOL.md is the protocol the code speaks: its kinds, packets, refusals, constants, domain
strings and worked example are checked against net/, and every "PROTOCOL.md §N" that the code (or the
document itself) cites names a section that exists."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

from nacl.signing import SigningKey

from dicetable.net.log import links
from dicetable.net.reach import mailbox

from dicetable.net import refusals

from dicetable.net.log import wire
from dicetable.net.identity import fingerprint

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "PROTOCOL.md").read_text()
SOURCES = {path.name: path.read_text() for path in sorted((ROOT / "net").rglob("*.py"))}
HEADING = re.compile(r"^(#{2,3}) (\d+(?:\.\d+)?)\.? (.+)$", re.MULTILINE)


def headings() -> list[tuple[int, str, str]]:
    """(level, number, title) of every numbered section, in order."""
    return [(len(m.group(1)), m.group(2), m.group(3)) for m in HEADING.finditer(DOC)]


def section(number: str) -> str:
    """The text of section `number`, up to the next heading of its level or above."""
    found = [m for m in HEADING.finditer(DOC)]
    for i, m in enumerate(found):
        if m.group(2) == number:
            level = len(m.group(1))
            end = next((n.start() for n in found[i + 1:] if len(n.group(1)) <= level), len(DOC))
            return DOC[m.end():end]
    raise AssertionError(f"PROTOCOL.md has no section {number}")


def test_sections_are_numbered_one_after_another():
    chapters, last = [], {}
    for level, number, title in headings():
        parts = number.split(".")
        if level == 2:
            assert len(parts) == 1, f"## {number} {title}: a chapter is numbered N."
            chapters.append(int(parts[0]))
        else:
            assert len(parts) == 2 and int(parts[0]) == chapters[-1], f"### {number} {title} is not in chapter {chapters[-1]}"
            expected = last.get(parts[0], 0) + 1
            assert int(parts[1]) == expected, f"### {number} {title}: expected {parts[0]}.{expected}"
            last[parts[0]] = expected
    assert chapters == list(range(1, len(chapters) + 1))
    assert "Open points found while writing this" in headings()[-1][2]


def _cited(text: str, only_after_protocol: bool) -> list[str]:
    """The section numbers `text` cites: in code, every § from a "PROTOCOL.md" to the end of its paragraph
    (or to a mention of another document); in the document, every § not of another document."""
    if only_after_protocol:
        cited = []
        for m in re.finditer(r"PROTOCOL\.md", text):
            paragraph = re.split(r"\n\s*\n|FAIRNESS\.md|ARCHITECTURE\.md|STYLE\.md", text[m.end():], maxsplit=1)[0]
            cited += re.findall(r"§(\d+(?:\.\d+)?)", paragraph)
        return cited
    cited = []
    for m in re.finditer(r"§(\d+[a-z]?(?:\.\d+)?)", text):
        before = text[max(0, m.start() - 14):m.start()]
        if "FAIRNESS.md" not in before and "ARCHITECTURE" not in before:
            cited.append(m.group(1))
    return cited


def test_every_citation_names_a_section_that_exists():
    numbers = {number for _, number, _ in headings()}
    in_code = {(name, n) for name, text in SOURCES.items() for n in _cited(text, True)}
    assert in_code, "net/ cites no section of PROTOCOL.md"
    missing = sorted((name, n) for name, n in in_code if n not in numbers)
    assert not missing, f"net/ cites sections PROTOCOL.md does not have: {missing}"
    dangling = sorted({n for n in _cited(DOC, False) if n not in numbers})
    assert not dangling, f"PROTOCOL.md cites its own sections that do not exist: {dangling}"


def test_every_message_kind_and_field_is_in_the_kinds_table():
    rows = re.findall(r"^\| `(\w+)` \| (?:`(\w+)`|—) \| .+ \| (yes|no|—) \|$", section("4.5"), re.MULTILINE)
    documented = {(kind, field or None, {"yes": True, "no": False}.get(required)) for kind, field, required in rows}
    expected = set()
    for kind, schema in wire.SCHEMAS.items():
        expected |= {(kind, name, required) for name, (_, required) in schema.items()} or {(kind, None, None)}
    assert documented == expected, (f"missing from §4.5: {sorted(expected - documented, key=str)}; "
                                    f"not in wire.SCHEMAS: {sorted(documented - expected, key=str)}")


def test_every_refusal_is_named_with_its_fault():
    kinds = [c for c in vars(refusals).values() if isinstance(c, type) and issubclass(c, refusals.Refusal)
             and c is not refusals.Refusal]
    assert len(kinds) > 15
    for kind in kinds:
        assert f"| `{kind.__name__}` | `{kind.fault}` |" in section("4.8"), f"{kind.__name__} is not in §4.8"


def _packet_ops() -> set[str]:
    """Every op a module of net/ sends or handles, found in the source."""
    patterns = (r'\btell\(\w+, "(\w+)"', r'\bto_orderer\("(\w+)"', r'\.send\((?:\w+, )?"(\w+)"', r'\b_send\("(\w+)"',
                r'\bop [!=]= "(\w+)"', r'\bpack\("(\w+)"', r'\.seal\("(\w+)"', r'return "(\w+)", \{',
                r'_post\(\w+, "(\w+)"')
    ops = {op for text in SOURCES.values() for pattern in patterns for op in re.findall(pattern, text)}
    return ops | set(mailbox.REQUEST_FIELDS)


def test_every_packet_op_is_named():
    ops = _packet_ops()
    assert {"ping", "hello", "tagged", "welcome", "serve", "mb_allocate", "pake"} <= ops and len(ops) > 30
    missing = sorted(op for op in ops if not re.search(rf"`{op}[` ]", DOC))
    assert not missing, f"packets of net/ that PROTOCOL.md does not name: {missing}"


def test_every_domain_string_of_net_is_quoted_verbatim():
    strings = {s for text in SOURCES.values() for s in re.findall(r'b"dicetable[^"]*"', text)}
    assert len(strings) > 15
    missing = sorted(s for s in strings if s not in DOC)
    assert not missing, f"domain strings of net/ not quoted in PROTOCOL.md: {missing}"


def _literal(text: str):
    if text.startswith("frozenset(") and text.endswith(")"):
        return frozenset(ast.literal_eval(text[len("frozenset("):-1]))
    return ast.literal_eval(text)


TOP = ("identity.", "refusals.")  # the modules at the top of net/, in no room


def test_constants_table_matches_the_code():
    rows = re.findall(r"^\| `([\w.]+)` \| `(.+?)` \|", section("18"), re.MULTILINE)
    assert len(rows) > 100
    for dotted, text in rows:
        names = dotted.split(".")
        cut = 1 if dotted.startswith(TOP) else 2  # room.module.NAME, or module.NAME at the top
        value = importlib.import_module("dicetable.net." + ".".join(names[:cut]))
        for name in names[cut:]:
            value = getattr(value, name)
        quoted = _literal(text)
        assert quoted == value and type(quoted) is type(value), f"§18: {dotted} is {value!r}, not {text}"


def test_the_timing_table_gives_the_defaults():
    from dicetable.net.table.deadlines import Timing

    rows = dict(re.findall(r"^\| `(\w+)` \| ([\d.]+) \|", section("3.5"), re.MULTILINE))
    assert rows == {name: str(value) for name, value in Timing().to_data().items()}


def test_vector_fields_are_explained():
    vectors = json.loads((ROOT / "tests" / "vectors_fair.json").read_text())
    names = set(vectors)
    for case in vectors["cases"]:
        names |= set(case) | {k for seat in case["seats"] for k in seat}
        for event in case["events"]:
            names |= set(event) | {k for v in event.values() if isinstance(v, dict) for k in v}
    missing = sorted(n for n in names if f"`{n}`" not in section("17.1"))
    assert not missing, f"fields of tests/vectors_fair.json that §17.1 does not explain: {missing}"


def test_the_worked_example_is_what_the_code_makes():
    block = re.search(r"```\n(table id .*?)```", section("17.2"), re.DOTALL).group(1)
    lines = dict(re.findall(r"^(\S+(?: \S+)*?) {2,}(\S.*)$", block, re.MULTILINE))
    table, seed = bytes.fromhex(lines["table id"]), bytes.fromhex(lines["host seed"])
    key = SigningKey(seed)
    public = bytes(key.verify_key)

    class Host:
        def sign(self, data: bytes) -> bytes:
            return key.sign(data).signature

    head0 = links.genesis(table)
    link = wire.Link(0, head0)
    body = wire.open_body("trice", {}, 2, public)
    signed = wire.signed_bytes(table, 0, 0, "open", body, link)
    frame = wire.make_frame(Host(), table, 0, 0, "open", body, link)
    vectors = json.loads((ROOT / "tests" / "vectors_fair.json").read_text())
    case = next(c for c in vectors["cases"] if c["name"] == "two seats")
    assert bytes.fromhex(case["table"]) == table
    value = bytes.fromhex(case["seats"][0]["values"][0])
    head1 = links.extend(head0, frame)
    reveal = wire.make_frame(None, table, 0, 2, "reveal", wire.reveal_body(1, value), wire.Link(1, head1), sign=False)
    assert lines["host key"] == public.hex()
    assert lines["fingerprint"] == fingerprint(public)
    assert lines["head(0)"] == head0.hex()
    assert lines["signed bytes"] == signed.hex()
    assert lines["signature"] == key.sign(signed).signature.hex()
    assert lines["frame"] == frame.hex()
    assert lines["head(1)"] == head1.hex()
    assert lines["reveal frame"] == reveal.hex()
    envelope = wire.decode(frame)  # the example is a frame every replica takes as the opening
    assert envelope.signed_by(public) and envelope.kind == "open" and envelope.prev == link
    assert f"the {len(signed)} signed bytes" in section("17.2")
