"""Arm config files broken in exactly one key, for the bad-parameter-file tests."""

from collections.abc import Iterator, Mapping
import copy
from dataclasses import dataclass
import math
from typing import Any

_MISSING = object()


@dataclass(frozen=True)
class BadKey:
    """One key of the config changed to one bad value (or removed, or misspelt)."""

    key: str          # dotted, e.g. joints.elbow.max_deg
    variant: str      # what was done, for the test id
    value: Any        # the new value; _MISSING = key removed

    def apply(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Return a deep copy of ``params`` (the ros__parameters mapping) with the change."""
        changed = copy.deepcopy(dict(params))
        *parents, leaf = self.key.split('.')
        table = changed
        for parent in parents:
            table = table[parent]
        if self.value is _MISSING:
            del table[leaf]
        else:
            table[leaf] = self.value
        return changed

    @property
    def removed(self) -> bool:
        """Return True if the key is removed rather than changed."""
        return self.value is _MISSING


def leaves(params: Mapping[str, Any], path: str = '') -> Iterator[tuple[str, Any]]:
    """Yield ``(dotted key, value)`` for every non-mapping value of ``params``."""
    for key, value in params.items():
        dotted = f'{path}.{key}' if path else key
        if isinstance(value, Mapping):
            yield from leaves(value, dotted)
        else:
            yield dotted, value


def bad_keys(params: Mapping[str, Any]) -> Iterator[BadKey]:
    """Yield every one-key breakage of ``params`` this suite tries.

    Numbers get NaN, ±inf, ±1e300, a string, a bool and removal; integers also a fraction
    and an out-of-range count; lists get empty, one short, a NaN element and a string element;
    strings get empty, an unknown word and a number. Every mapping gets a misspelt key.
    """
    for key, value in leaves(params):
        yield BadKey(key, 'removed', _MISSING)
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            for name, bad in (('nan', math.nan), ('inf', math.inf), ('-inf', -math.inf),
                              ('1e300', 1e300), ('-1e300', -1e300), ('string', 'twelve'),
                              ('bool', True), ('negative', -abs(value) - 1.0)):
                yield BadKey(key, name, bad)
            if isinstance(value, int):
                yield BadKey(key, 'fraction', value + 0.5)
                yield BadKey(key, 'huge_int', 2 ** 40)
        elif isinstance(value, list):
            yield BadKey(key, 'empty_list', [])
            yield BadKey(key, 'one_short', value[:-1])
            if value and isinstance(value[0], float):
                yield BadKey(key, 'nan_element', [math.nan] + value[1:])
            yield BadKey(key, 'string_list', ['x'] * len(value))
        elif isinstance(value, str):
            for name, bad in (('empty', ''), ('unknown_word', 'bogus'), ('number', 5.0)):
                yield BadKey(key, name, bad)
    for table, _ in _tables(params):
        yield BadKey(f'{table}.max_dgree' if table else 'max_dgree', 'misspelt', 1.0)


def _tables(params: Mapping[str, Any], path: str = '') -> Iterator[tuple[str, Any]]:
    yield path, params
    for key, value in params.items():
        if isinstance(value, Mapping):
            yield from _tables(value, f'{path}.{key}' if path else key)
