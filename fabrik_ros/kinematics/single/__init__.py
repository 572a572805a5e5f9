"""The single solve: one target to joint angles within limits (closed forms, FABRIK, reach)."""
