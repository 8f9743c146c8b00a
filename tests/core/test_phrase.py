"""Words that keep the seats they name (core/phrase.py): plain text for files and the command line,
names for a screen, and nothing parsed back on the way."""

from dicetable.core import registry
from dicetable.core.game import Chance, Outcome, Result
from dicetable.core.phrase import Phrase, Seat, listing, phrase


def test_a_phrase_is_its_plain_words_and_keeps_its_seats():
    said = phrase(Seat(1, "bob"), " claims ", Seat(2), " is in default")
    assert said == "seat 1 (bob) claims seat 2 is in default" and isinstance(said, str)
    assert said.parts == (Seat(1, "bob"), " claims ", Seat(2), " is in default")
    assert said.words(["Ann", "Bob", "Cy"]) == "Bob claims Cy is in default"
    assert said.words(["Ann"]) == "seat 1 claims seat 2 is in default"  # no name there: stays a seat


def test_phrases_join_and_stay_merged():
    two = listing([Seat(0), Seat(2)])
    assert two == "seat 0, seat 2" and two.parts == (Seat(0), ", ", Seat(2))
    more = "no rematch: " + two + " left"
    assert isinstance(more, Phrase) and more.parts == ("no rematch: ", Seat(0), ", ", Seat(2), " left")
    assert phrase("a", "", "b", phrase("c")).parts == ("abc",) and not phrase()


def test_words_read_back_from_a_file_or_a_peer_give_the_same_text():
    for text in ("seat 1 (bob) resigns", "seat 0 wins (seat 1 in default)", "seat 1 ()", "no seats here", ""):
        assert Phrase.read(text) == text
    assert Phrase.read("seat 3 (cy) did not move within 4 s").parts == (Seat(3, "cy"), " did not move within 4 s")


def test_core_builds_its_words_with_seats():
    trice = registry.get("trice")
    state = trice.start(2)
    rolled = trice.describe_outcome(state, state.chance(), Outcome((5,) * 6 + (0,) * 6))
    assert Seat(0) in rolled.parts and Seat(1) in rolled.parts and rolled.endswith("seat 0 places first")
    assert Chance("setup roll", ranges=(6,)).label.parts == ("setup roll",)  # plain words become a phrase
    result = Result((1,), (0.0, 1.0), phrase(Seat(0), " resigned"))
    assert result.said() == "seat 1 wins (seat 0 resigned)" and result.said().words(["Ann", "Bob"]) == "Bob wins (Ann resigned)"
    assert result.describe(["Ann", "Bob"]) == "Bob wins (seat 0 resigned)"  # the names given are the winners'
    stored = Result.from_data(result.to_data())
    assert stored == result and stored.reason.parts == result.reason.parts and result.to_data()["reason"] == "seat 0 resigned"
