"""Hidden cards without a dealer: cards as group points (points), the commutative-encryption deal
(deal) and a game's hidden steps dealt at a table (table_deals). FAIRNESS.md §2."""
