"""`dicetable replay` as a person meets it: a game recorded by `dicetable selfplay --record`, replayed
by a real process in an 80 x 24 pseudo-terminal, stepped with the arrow keys, End and Home."""

from __future__ import annotations

import os

from dicetable.net.log.verify import verify
from net_helpers import dicetable
from test_ctrl_c import Terminal


def test_a_recorded_game_replays_in_a_terminal_with_the_keys(tmp_path):
    records = tmp_path / "records"
    made = dicetable("selfplay", "trice", "--games", "1", "--seed", "5", "--record", str(records))
    assert made.returncode == 0, made.stderr
    (path,) = records.glob("*.transcript")
    assert verify(path).valid
    terminal = Terminal(tmp_path, "replay", str(path))
    try:
        terminal.read(lambda: "step 0 of " in terminal.text())
        last = int(terminal.text().split("step 0 of ", 1)[1].split()[0])

        def press(key: bytes, shown: str) -> None:
            seen = len(terminal.text())
            os.write(terminal.master, key)
            terminal.read(lambda: shown in terminal.text()[seen:])

        press(b"\x1b[C", "step 1 of ")  # →
        press(b"\x1b[C", "step 2 of ")
        press(b"\x1b[D", "step 1 of ")  # ←
        press(b"\x1b[F", f"step {last} of {last}")  # End
        assert "wins" in terminal.text() or "draw" in terminal.text()
        press(b"\x1b[H", "step 0 of ")  # Home
        os.write(terminal.master, b"\x11")  # Ctrl+Q
        terminal.read(lambda: False)  # to the end
        assert terminal.process.wait(60) == 0
        assert "Traceback" not in terminal.text()
    finally:
        terminal.close()
