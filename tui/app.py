"""Placeholder until the app lands: the Textual app is built in tui/ (issue 5)."""


def run_app() -> int:
    print("dicetable: the app is not built yet; try `dicetable selfplay trice`")
    return 0
