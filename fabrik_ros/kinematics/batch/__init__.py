"""The batch solve: the single solve's steps on numpy arrays, one row per target."""
