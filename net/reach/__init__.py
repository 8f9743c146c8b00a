"""How a table is reached: ZeroMQ sockets (transport), invites (invite), the relay and a host's link
to it (relay, relay_link), short codes and the relay's mailboxes (codes, mailbox), limits per source
(sources), LAN discovery (lan) and this machine's lobby (same_machine)."""
