"""Exceptions of the kinematics core: every one is a ValueError that names key, value and rule."""


class ArmConfigError(ValueError):
    """An arm description key holds a value its rule does not allow.

    The message reads ``<dotted.key> = <value!r>, <rule>`` so a node can log it as it stands.
    """

    def __init__(self, key: str, value: object, rule: str) -> None:
        super().__init__(f'{key} = {value!r}, {rule}')
        self.key = key
        self.value = value
        self.rule = rule


class SolverOptionsError(ValueError):
    """A solver option is out of its allowed range (a node rejects the parameter change)."""

    def __init__(self, name: str, value: object, rule: str) -> None:
        super().__init__(f'{name} = {value!r}, {rule}')
        self.name = name
        self.value = value
        self.rule = rule


class TargetError(ValueError):
    """A target, seed or direction handed to a solver is not usable (non-finite, wrong shape)."""
