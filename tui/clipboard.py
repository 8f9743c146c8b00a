"""Copying text for the player (the waiting room's invite), and saying truly what was done.

A terminal app can only ask the terminal to copy (OSC 52, Textual's `copy_to_clipboard`); the
terminal never says whether it did, and inside tmux the request goes no further unless tmux is set
to let applications set the clipboard (`set-clipboard on`; `external` ignores them). So the app
does what it can check, and its words name only what it knows:
- inside tmux, `tmux load-buffer` puts the text in tmux's paste buffer (its exit status says so);
- on a desktop of this machine (not over SSH), wl-copy, xclip, xsel or pbcopy (exit status too);
- always, OSC 52 to the terminal: "asked", never "copied".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# Desktop clipboard tools, each with how it reads the text from stdin; the first found is used.
DESKTOP_TOOLS = (
    ("wl-copy", [], "WAYLAND_DISPLAY"),
    ("xclip", ["-selection", "clipboard"], "DISPLAY"),
    ("xsel", ["--clipboard", "--input"], "DISPLAY"),
    ("pbcopy", [], ""),  # macOS: no display variable
)


def _ran(command: list[str], text: str) -> bool:
    """The command took `text` on stdin and said it worked (no output is read: xclip stays behind
    to serve the selection, holding any pipe it was given)."""
    try:
        done = subprocess.run(command, input=text.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=3)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _desktop(text: str) -> bool:
    if os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_TTY"):
        return False  # this machine's clipboard is not the one in front of the player
    for tool, args, display in DESKTOP_TOOLS:
        if (display and not os.environ.get(display)) or (not display and sys.platform != "darwin"):
            continue
        path = shutil.which(tool)
        if path and _ran([path, *args], text):
            return True
    return False


def _tmux(text: str) -> bool:
    tmux = shutil.which("tmux")
    if not os.environ.get("TMUX") or not tmux:
        return False
    return _ran([tmux, "load-buffer", "-"], text)


def copy(app, text: str, what: str = "the text", kept_in: str | None = None) -> str:
    """Copy `text` every way there is; the sentence that says what was done (for a notification).
    `kept_in`: a file that holds the text whole (where the screen shows it cut)."""
    app.copy_to_clipboard(text)  # OSC 52: the terminal may or may not take it, and never tells
    if _desktop(text):
        return f"Copied {what} to the clipboard."
    if _tmux(text):
        return (f"Put {what} in tmux's paste buffer (your tmux prefix, then ], pastes it); the terminal's own "
                "clipboard has it only if tmux passes it on.")
    if kept_in is not None:
        return (f"Asked the terminal to copy {what}; not every terminal does (none says so). If pasting gives "
                f"nothing, {what} is whole in {kept_in}.")
    return (f"Asked the terminal to copy {what}; not every terminal does (none says so). If pasting gives "
            f"nothing, select {what} on the screen (Shift and the mouse in most terminals).")
