"""The one error of the launch files' checks (re-exported by :mod:`.arguments`)."""


class LaunchArgumentError(ValueError):
    """A launch argument's value cannot work; the message names it, its value and the rule."""
