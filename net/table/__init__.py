"""A seat at a networked table and what drives it: the seat's session (session), the host that orders
the log (host), a joiner (joiner), the seat that takes over ordering (succession, deputies), clocks
and defaults (deadlines), the host's tagged packets (host_packets), the seat file (seat_file), seats
in one process (local_seats) and the deal on its own (deal_table)."""
