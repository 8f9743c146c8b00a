"""Which of a relay's connections are still open, learned from libzmq, not from keepalives (PROTOCOL.md §12.4).

An idle host sends the relay nothing (net/reach/relay_link.py): its link is kept, and a dead one closed,
by ZMTP heartbeats, which libzmq's I/O threads answer without a message ever crossing a pipe
(net/reach/transport.py). That is what keeps an idle table's connection as small as when it was served:
every application packet goes through the connection's inbound pipe, whose 256-message chunks are all
written through after 512 packets (net/reach/relay_memory.py), so a keepalive a second doubled what an
idle table costs within minutes.

So the relay learns that a connection closed (its other end closed it, died, or went silent past the
heartbeats' timeout) from its ROUTER's monitor: EVENT_DISCONNECTED, whose value is the connection's
file descriptor. Every packet tells the descriptor it came on (libzmq's ZMQ_SRCFD), which ties a
routing id to its descriptor. Two orders are not guaranteed and are handled here:
- a descriptor is reused by the next connection once closed, and that connection's first packet may be
  read before the closing is: the monitor is read before any packet is tied to a new descriptor (the
  closing was sent before the descriptor could be reused), and a packet on a descriptor tied to
  another id closes that id's connection too (one descriptor is one connection at a time);
- packets a connection sent before it closed may be read after its closing: the descriptor remembers
  the id that closed on it, and that id's packets on it are dropped (the connection is gone; it could
  not hear an answer). A client that reconnects with the same routing id onto the same descriptor
  number is taken for that closed connection: dicetable's sockets take a fresh id on every connection
  (net/reach/transport.py `PeerSocket`).
The ROUTER is also ROUTER_MANDATORY: a packet the relay sends to a connection that is gone fails with
EHOSTUNREACH at once, and the relay forgets that connection then (whichever of the two it hears first).

The monitor's queue has no high-water mark (the receiving end's RCVHWM is 0), so no closing is lost
to a burst: it holds only closings not read yet, and the relay reads them on every step.
"""

from __future__ import annotations

import itertools
import sys
from typing import Callable

import zmq

SRCFD = int(zmq.SRCFD)  # a plain int: pyzmq's enums cost a Python call on every use
_monitors = itertools.count()


class Presence:
    """Ties routing ids to descriptors and calls `forget(id)` for each connection that closed."""

    def __init__(self, socket, forget: Callable[[bytes], None], poller: zmq.Poller):
        self.forget = forget
        self.fds: dict[bytes, int] = {}  # routing id -> the descriptor its packets came on
        self._on_fd: dict[int, bytes] = {}  # descriptor -> the routing id of its connection
        self._closed: dict[int, bytes] = {}  # descriptor -> the id whose connection last closed on it
        self.closings = 0  # connections the relay has heard close
        socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        address = f"inproc://dicetable-relay-presence-{id(self)}-{next(_monitors)}"
        socket.monitor(address, zmq.EVENT_DISCONNECTED)
        self._monitor = socket.context.socket(zmq.PAIR)
        self._monitor.setsockopt(zmq.RCVHWM, 0)  # with the monitor's own SNDHWM: no limit, no closing dropped
        self._monitor.setsockopt(zmq.LINGER, 0)
        self._monitor.connect(address)
        self._socket = socket
        poller.register(self._monitor, zmq.POLLIN)

    def tie(self, peer: bytes, fd: int) -> bool:
        """`peer`'s packet came on descriptor `fd`, which it was not tied to: tie them, after the closings
        waiting. False for a packet its connection sent before it closed (drop it)."""
        self.read_closings()
        if self._closed.get(fd) == peer:
            return False
        other = self._on_fd.get(fd)
        if other is not None and other != peer:  # the descriptor is another connection's now: that one closed
            self._gone(fd, other)
        before = self.fds.get(peer)
        if before is not None and self._on_fd.get(before) == peer:
            del self._on_fd[before]
        self._on_fd[fd], self.fds[peer] = peer, fd
        return True

    def read_closings(self) -> None:
        """Forget every connection whose closing the monitor has told."""
        recv = self._monitor.recv
        while True:
            try:
                event = recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            while self._monitor.getsockopt(zmq.RCVMORE):  # the event's endpoint: not needed
                recv()
            # A monitor event's first frame: the event (uint16) and its value (uint32, here the descriptor).
            if int.from_bytes(event[:2], sys.byteorder) == zmq.EVENT_DISCONNECTED:
                fd = int.from_bytes(event[2:6], sys.byteorder)
                peer = self._on_fd.get(fd)
                if peer is not None:
                    self._gone(fd, peer)

    def unreachable(self, peer: bytes) -> None:
        """A send to `peer` failed with EHOSTUNREACH: its connection is gone."""
        fd = self.fds.get(peer)
        if fd is not None and self._on_fd.get(fd) == peer:
            self._gone(fd, peer)
        else:
            self.fds.pop(peer, None)
            self.forget(peer)

    def _gone(self, fd: int, peer: bytes) -> None:
        del self._on_fd[fd]
        self.fds.pop(peer, None)
        self._closed[fd] = peer
        self.closings += 1
        self.forget(peer)

    def close(self) -> None:
        try:
            self._socket.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(0)
