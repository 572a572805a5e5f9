"""``make demo``: the arm on a simulated servo board, steps in, a table of what the board held."""
