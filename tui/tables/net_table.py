"""The network table controller: a `TableController` over a net session (net/table/host.py, net/table/joiner.py).

The session runs its synchronous loop in a thread worker of the app (it outlives the waiting room
and the game screen); it reports through `on_event`, called in that thread, where this controller
takes a `TableView` snapshot of the session's Replica (only that thread changes it) and posts it to
the current screen as a Message. The screen's moves and chat go back through the session's
thread-safe command queue, so network I/O never blocks the interface.
"""

from __future__ import annotations

import threading
import time

from dicetable.core.game import Move
from dicetable.core.phrase import Phrase, Seat, phrase
from dicetable.net.table import deadlines
from dicetable.net.table.events import (
    AnswerPath,
    ClaimDisputed,
    Chat,
    Claimable,
    CodeGone,
    CodeOffered,
    CodesStopped,
    Cut,
    Defaulted,
    Dropped,
    Ended,
    Failed,
    Fault,
    Invited,
    Joined,
    Ordering,
    Recorded,
    Refused,
    RematchAnswered,
    RematchGone,
    Returned,
    SeatHeld,
    StallCleared,
    Stalled,
    SeatReleased,
    SecretShown,
    Started,
    TranscriptOpened,
    Unwitnessed,
    Watching,
    YourTurn,
)
from dicetable.tui.tables.controller import TableController, outcome_words
from dicetable.tui.tables.messages import Banner, ChatArrived, MoveRefused, TableChanged, TableClosed
from dicetable.tui.tables.view import (
    OUT,
    VERIFIED,
    WAITING,
    Decided,
    FairEvent,
    LogEntry,
    Moved,
    Reveal,
    SatDown,
    SeatLine,
    TableView,
    told_apart,
)


def replica_log(replica, events: tuple[FairEvent, ...]) -> list[LogEntry]:
    """The move log from a replica's records: moves, decided events, joins, claims."""
    outcomes = {event.number: event.outcome for event in events}
    log: list[LogEntry] = []
    started = False
    for record in replica.log:
        started = started or record.kind == "start"
        if record.kind == "join" and started:  # a newcomer to an open room, in the log's own words (§5.2)
            log.append(Moved(record.seat, record.note))
        elif record.kind in ("move", "unseal") and record.move is not None:
            log.append(Moved(record.seat, record.note))
        elif record.event is not None and record.event.outcome is not None:
            outcome = outcomes.get(record.event.number) or Phrase(("every reveal checked",))
            log.append(Decided(record.event.label, outcome))
        elif record.kind == "join":
            log.append(SatDown(record.seat, record.envelope.body["name"], replica.seats[record.seat].fingerprint))
        elif record.kind in ("claim", "witness", "dispute", "resign", "rematch", "unveil", "leave", "back"):
            log.append(Moved(record.seat, record.note))
    return log


def seat_names(replica) -> tuple[str, ...]:
    """The seats' names as a table shows them: two people who chose one name are told apart by their
    keys (view.told_apart)."""
    return told_apart(replica.names, [info.fingerprint if info is not None else "" for info in replica.seats])


def fair_events(replica) -> tuple[FairEvent, ...]:
    """The replica's random events as the fairness panel lists them: each seat's reveal checked."""
    events = []
    for event in replica.events:
        reveals = tuple(
            Reveal(seat, OUT, "out: counts as zeros") if value == b""
            else Reveal(seat, VERIFIED, f"revealed {value[:4].hex()}…") if value is not None else Reveal(seat, WAITING, "reveal due")
            for seat, value in enumerate(event.reveals)
        )
        outcome = Phrase()
        if event.outcome is not None:
            outcome = outcome_words(replica.game, event.chance, event.outcome, None)
            if event.seed is not None:
                outcome += f" (seed {event.seed[:4].hex()}…)"
        status = VERIFIED if event.outcome is not None else WAITING
        events.append(FairEvent(event.number, event.label, outcome, status, reveals))
    return tuple(events)


LEAVE_WAIT = 5.0  # seconds a leaving seat waits for its resignation to come back in the log


class NetTable(TableController):
    network = True

    def __init__(self, session, role: str, on_connected=None) -> None:
        self.session = session
        self.role = role  # "host" or "join"
        # on_connected(session): a joiner's check once seated (the LAN list's opening check);
        # it raises SessionError to leave the table
        self.on_connected = on_connected
        self.target = None
        self.invite = ""
        self.code = ""  # the short code at the relay, when hosting through one (net/reach/codes.py)
        self.no_code = ""  # why no code is offered any more, and what to do (PROTOCOL.md §13.4)
        self.closed_reason = ""
        self.away: set[int] = set()
        self.watching: tuple[int, tuple[str, ...]] = (0, ())  # the last Watching heard: how many, who
        self._view: TableView | None = None
        self._waiting_key = None  # what the table waits for, and since when (for seat clocks)
        self._waiting_since = 0.0
        self._lock = threading.Lock()
        self._started = False
        self._untold: list[Banner] = []  # said before any screen was attached (a resumed seat catching up)
        self._ending = ""  # how a default claimed against this seat ended the game, in words
        session.on_event = self._on_event
        session.games = None  # a person offers, accepts or declines a rematch (r, n at the game's end)

    # -- the interface -------------------------------------------------------------------------
    @property
    def game(self):
        replica = self.session.replica
        return replica.game if replica is not None else None

    def attach(self, target) -> None:
        with self._lock:
            self.target = target
            view = self._view
            untold, self._untold = self._untold, []
        for banner in untold:  # first: a view may make the target give way to the game's screen
            target.post_message(banner)
        if view is not None:
            target.post_message(TableChanged(view))
        if not self._started:
            self._started = True
            target.app.run_worker(self._run, thread=True, group="net", name=f"table ({self.role})",
                                  exit_on_error=False)

    def view(self) -> TableView | None:
        return self._view

    def submit(self, move) -> None:
        self.session.move(move)

    def send_chat(self, text: str) -> None:
        self.session.chat(text)

    def verify(self) -> str:
        from dicetable.net.log.verify import NotATranscript, verify

        path = self.session.transcript_path
        if path is None or not path.exists():
            return "no transcript yet: it starts when every seat has joined"
        try:
            return verify(path).line()
        except NotATranscript as error:
            return f"not a transcript: {error}"

    def can_rematch(self) -> bool:
        view = self._view
        return view is not None and view.rematch in ("open", "asked")

    def rematch(self) -> None:
        self.session.rematch(True)

    def decline_rematch(self) -> None:
        self.session.rematch(False)

    def close(self) -> None:
        view = self._view
        if view is not None and view.rematch == "asked":  # leaving says no, so the offerer hears it at once
            self.session.rematch(False)
        self.session.stop()

    def ending_note(self) -> str:
        return self._ending

    def leave_note(self) -> str:
        path = self.session.transcript_path
        if self.role != "join" or not self.closed_reason or self.session.replica.result is not None \
                or path is None or not path.exists():
            return ""
        return "Your game is kept: c on the home screen (Resume) picks it up when the host is back."

    def can_resign(self) -> bool:
        replica, session = self.session.replica, self.session
        return (replica is not None and replica.phase == "playing" and session.seat is not None
                and not self.closed_reason)  # a table already closed (its host gone): only leaving is left

    def resign(self) -> None:
        if self.can_resign():
            self.session.resign()

    def invitation(self) -> tuple[str, str]:
        return self.invite or "", self.code

    def seat_waits(self) -> float:
        return self.session.timing.grace

    def roll_line(self, number: int) -> str | None:
        from dicetable.net.log.roll_line import RollLineError, roll_line

        try:
            return roll_line(self.session.replica, number)
        except RollLineError:
            return None

    def roll_secretly(self, expr: str, to: int | None = None) -> bool:
        self.session.roll_secretly(expr, to)
        return True

    def unveil(self) -> None:
        self.session.unveil()

    def leave(self) -> None:
        """Leave a table still in play for good: resign (the others see it at once and every copy
        of the log, this one too, ends with it), then stop once the session has it back, or after
        LEAVE_WAIT seconds when the host does not answer. A room that goes on without a seat (a free
        dice room) is left instead (PROTOCOL.md §5.11): through a relay its host leaves too, and the room
        goes on under the next person (§11); a host that others dial directly orders the log, so its room
        closes with it."""
        if not self.can_resign():  # nothing in play to end, or a table already closed
            self.close()
            return
        replica = self.session.replica
        if replica.game.name == "diceroom" and replica.state.free:
            if self.session.seat != 0 or not self.session.orders_log or self.session.relay is not None:
                self.session.leave_room()
            else:  # the host's room ends with it (closing opens the secret rolls; a second close does not wait)
                self.session.move(Move("close"))
        else:
            self.session.resign()
        stop = threading.Timer(LEAVE_WAIT, self.session.stop)
        stop.daemon = True
        stop.start()

    # -- the session's thread ------------------------------------------------------------------
    def _run(self) -> None:
        from dicetable.net.table.session import SessionError

        try:
            if self.on_connected is not None:
                self.session.connect()
                self.on_connected(self.session)
            self.session.run()
        except SessionError as error:
            self.closed_reason = str(error)
            self._post(TableClosed(str(error)))
        except Exception as error:  # a bug must still reach the player as words, not a dead table
            self.closed_reason = f"the table stopped: {error}"
            self._post(TableClosed(self.closed_reason))
            raise

    def _post(self, message) -> None:
        with self._lock:
            target = self.target
            if target is None and isinstance(message, Banner):  # in words now: the first screen has no names yet
                self._untold.append(Banner(Phrase((message.what.words(self._names()),)), message.level))
        if target is not None:
            target.post_message(message)

    def _on_event(self, event) -> None:
        match event:
            case Invited(invite):
                self.invite = invite
            case CodeOffered(code):
                self.code, self.no_code = code, ""
            case CodeGone(_, said):  # a code that no longer opens the table: a new one follows
                self._post(Banner(Phrase((said,)), "warning"))
            case Dropped(seat, _) if seat in self.session.replica.out:  # it left a room that goes on: nobody waits
                self.away.add(seat)
                self._post(Banner(phrase(Seat(seat), " left the room"), "info"))
            case Dropped(seat, said):
                self.away.add(seat)
                self._post(Banner(phrase(Seat(seat), f" dropped: {said or 'waiting for them to return'}"), "warning"))
            case Returned(seat):
                self.away.discard(seat)
                self._post(Banner(phrase(Seat(seat), " is back"), "info"))
            case Stalled(_, _, said):  # heard but stuck: in words, with what to do (net/table/stalls.py)
                self._post(Banner(phrase("stalled: ", said), "warning"))
            case StallCleared(_, _, said):
                self._post(Banner(said, "info"))
            case CodesStopped(said):  # no short code now: why, and what to do (PROTOCOL.md §13.4)
                self.code, self.no_code = "", said  # the waiting room shows no dead code
                self._post(Banner(Phrase((f"no code: {said}",)), "warning"))
            case Claimable(seat, why):
                default = deadlines.answer_default(self.session.replica)
                if default is not None:
                    self._post(Banner(phrase(Seat(seat), f" did not answer in time: {default}"), "info"))
                else:
                    self._post(Banner(phrase(Seat(seat), " is in default: ", why,
                                             "; the game is claimed for the seats still here"), "warning"))
            case Unwitnessed(_, said):  # a claim no neutral seat can witness: the game waits (FAIRNESS.md §5b)
                self._post(Banner(said, "warning"))
            case Refused(seat, said) if seat == self.session.seat:
                self._post(MoveRefused(said))
            case Refused(_, said):
                self._post(Banner(phrase("refused: ", said), "error"))
            case Defaulted(_, said):  # the game was decided by this seat's default (told too on its return)
                self._post(Banner(said, "warning"))
            case ClaimDisputed(_, said):  # a claim against this seat that its own view refutes (FAIRNESS.md §4)
                self._post(Banner(phrase("disputed: ", said), "error"))
            case Fault(_, said):  # a seat caught cheating: every player is told at once (FAIRNESS.md §3)
                self._post(Banner(phrase("fault: ", said), "error"))
            case Ordering(_, said):  # a seat took over ordering the log through the relay
                self._post(Banner(said, "info"))
            case AnswerPath(_, said):  # my answers reach a seat only through the orderer (PROTOCOL.md §10.10)
                self._post(Banner(said, "warning"))
            case Cut(_, said):  # this host seat cut its unrelayed tail
                self._post(Banner(Phrase((said,)), "info"))
            case SeatHeld(_, _, said) | SeatReleased(_, _, said):  # the host: who holds a free seat until its join
                self._post(Banner(said, "info"))
            case Chat(seat, text):
                self._post(ChatArrived(seat, self._name(seat), text))
            case Failed(said):
                self._post(Banner(Phrase((said,)), "error"))
            case Watching(count, names):  # who follows the table without a seat (net/table/watching.py)
                self.watching = (count, names)  # the seats panel's line; the notice says the change
                who = f": {', '.join(names)}" if names else ""
                self._post(Banner(Phrase((f"{count} watching{who}",)), "info"))
        if isinstance(event, (Invited, CodeOffered, Joined, Started, Recorded, YourTurn, Ended, TranscriptOpened, CodesStopped,
                              Dropped, Returned, RematchAnswered, RematchGone, Cut, Watching, SecretShown)):
            view = self._snapshot()
            with self._lock:
                self._view = view
            self._post(TableChanged(view))
            if isinstance(event, RematchGone) or isinstance(event, RematchAnswered) and event.seat != self.session.seat:
                # another seat's answer to a rematch, or an offer that ended unanswered: also as a notice
                words = Phrase((view.note,)) if view.rematch == "asked" else event.said
                agreed = isinstance(event, RematchAnswered) and event.agree
                self._post(Banner(words, "info" if agreed else "warning"))

    # -- snapshots (session thread only) ---------------------------------------------------------
    def _names(self) -> tuple[str, ...]:
        replica = self.session.replica
        return seat_names(replica) if replica is not None else ()

    def _name(self, seat: int) -> str:
        names = self._names()
        return names[seat] if 0 <= seat < len(names) else f"seat {seat}"

    def _snapshot(self) -> TableView:
        session, replica = self.session, self.session.replica
        names = list(self._names())
        me = session.seat
        waiting = replica.waiting_for
        key = deadlines.waiting_key(replica)  # the wait the sessions' clocks and claims are about
        if key != self._waiting_key:
            self._waiting_key, self._waiting_since = key, time.monotonic()
        limit = deadlines.deadline(replica, session.timing)
        due = set(waiting.seats) if limit and replica.phase == "playing" else set()
        seats = []
        for seat in range(replica.seat_count):
            info = replica.seats[seat] if seat < len(replica.seats) else None
            if info is None:
                seats.append(SeatLine(f"seat {seat}", "free", "free: waiting for a player", connected=False))
            else:
                deadline = self._waiting_since + limit if seat in due else None
                if seat == me:
                    seats.append(SeatLine(names[seat], "human", "this terminal", info.fingerprint, deadline=deadline))
                else:
                    seats.append(SeatLine(names[seat], "remote", "host" if seat == 0 else "peer", info.fingerprint,
                                          connected=seat not in self.away, deadline=deadline))
        events = fair_events(replica) if replica.game is not None else ()
        log = replica_log(replica, events)
        ending = replica.ending
        if ending is not None and ending.against == me and replica.result is not None and not self._ending:
            self._ending = session.describe_default(ending).words(names)  # before any screen sees the end
        note = ""
        if replica.phase in ("new", "joining"):
            wanted = self.session.start_with if self.role == "host" and self.session.start_with else replica.seat_count
            note = f"Waiting for players: {len([s for s in replica.seats if s is not None])} of {wanted} seated"
        elif waiting.action == "reveal":
            note = "Rolling: waiting for " + ", ".join(names[s] for s in waiting.seats) + " to reveal"
        elif waiting.action == "start":
            note = "Everyone is here: starting…"
        rematch = self._rematch_state()
        if rematch == "offered":
            others = ", ".join(names[s] for s, agreed in enumerate(replica.consents) if not agreed)
            note = f"Rematch offered: waiting for {others} to accept"
        elif rematch == "asked":
            offered = ", ".join(names[s] for s, agreed in enumerate(replica.consents) if agreed)
            note = f"{offered} offers a rematch (game {replica.game_number + 1}): r accepts, n declines"
        elif rematch == "declined":
            note = "You declined a rematch" if replica.declined == me else f"{names[replica.declined]} declined a rematch"
        elif rematch == "closed":
            note = "No rematch: the table closed"
        state, acting = replica.state, None
        if waiting.action in ("seal", "unseal") and replica.phase == "playing":
            # A sealed step asks every seat at once: mine sees the step as it asks me, until I answer.
            mine = waiting.action == "seal" and me in waiting.seats
            acting = frozenset(waiting.seats) if waiting.action == "seal" else frozenset()  # opening is automatic
            state = state.asking(me) if mine else state
            if not mine:
                doing = "answer" if waiting.action == "seal" else "open their answers"
                note = f"Answers are sealed until all are in: waiting for {', '.join(names[s] for s in waiting.seats)} to {doing}"
        return TableView(
            game=replica.game,
            state=state,
            seats=tuple(seats),
            local_seats=frozenset({me}) if me is not None else frozenset(),
            log=tuple(log),
            events=events,
            network=True,
            transcript=str(session.transcript_path or ""),
            note=note,
            final=replica.forced,
            acting=acting,
            rematch=rematch,
            out=replica.out & frozenset(s for s, info in enumerate(replica.seats) if info is not None),  # who left, not free places
            peeked=self._peeked(),
            watching=self.watching[0],
            watchers=self.watching[1],
            shown=self._shown(),
            shown_me=self._peeked(shown=True),
        )

    def _peeked(self, shown: bool = False) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """This seat's own sealed secret rolls, with the dice only it can draw now (PROTOCOL.md §16.6);
        with `shown`, the sealed rolls another seat showed this one (the game master, step 7)."""
        from dicetable.core.dice_expr import parse

        replica = self.session.replica
        if replica.game is None or replica.game.name != "diceroom" or replica.state is None:
            return ()
        rolls = replica.state.rolls
        first = len(replica.events) - len(rolls) + 1
        room = self.session.own.room
        return tuple((k - first, parse(rolls[k - first].expr).faces(values))
                     for k, _, values in (room.shown_to_me() if shown else room.owed()))

    def _shown(self) -> tuple[tuple[int, int], ...]:
        """(roll index, seat) of each roll of this room shown to one seat (PROTOCOL.md §16.6 step 7)."""
        replica = self.session.replica
        if not replica.shown or replica.game is None or replica.game.name != "diceroom" or replica.state is None:
            return ()
        return tuple((n, replica.shown[roll.secret][1]) for n, roll in enumerate(replica.state.rolls)
                     if roll.secret in replica.shown)

    def _rematch_state(self) -> str:
        """Where this table's next game stands for this seat (TableView.rematch)."""
        session, replica = self.session, self.session.replica
        if replica.phase != "over" or session.seat is None:
            return ""
        if replica.declined is not None:
            return "declined"
        if session.finished or not session.can_rematch():
            return "closed" if session.finished and session.can_rematch() else ""
        if replica.consents[session.seat]:
            return "offered"
        return "asked" if any(replica.consents) else "open"
