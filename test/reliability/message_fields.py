"""Every numeric field of a ROS message, set one at a time to each extreme of its type.

Used to fuzz the nodes: a subscriber must survive any single field at any representable
value, whatever the other fields hold.
"""

from collections.abc import Callable, Iterator
import copy
import math
from typing import Any

FLOAT_EXTREMES = (math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-160,
                  1e154, -1e154, 1e308, -1.7976931348623157e308)
INT_EXTREMES = {'int32': (-2**31, 2**31 - 1, 0, -1), 'uint32': (0, 2**32 - 1, 1),
                'int64': (-2**63, 2**63 - 1, 0), 'uint64': (0, 2**64 - 1)}
_FLOATS = ('double', 'float')

Assign = Callable[[Any, Any], None]


def numeric_fields(msg: Any, path: str = '') -> Iterator[tuple[str, str, Assign]]:
    """Yield ``(path, type, assign)`` for every numeric field of ``msg``, arrays included.

    ``assign(other, value)`` sets that field in ``other``, a message of the same shape (a copy,
    so that each mutation starts from the untouched message).
    """
    for name, kind in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        here = f'{path}{name}'
        if kind in _FLOATS or kind in INT_EXTREMES:
            yield here, kind, _field_setter(path_of(here))
        elif kind.startswith('sequence<') and kind[9:-1] in _FLOATS:
            for index in range(len(value)):
                yield f'{here}[{index}]', 'double', _field_setter(path_of(f'{here}[{index}]'))
        elif kind.startswith('sequence<') and '/' in kind:
            for index, item in enumerate(value):
                yield from numeric_fields(item, f'{here}[{index}].')
        elif '/' in kind:
            yield from numeric_fields(value, f'{here}.')


def path_of(text: str) -> list[object]:
    """Return the steps of a field path: attribute names and list indices."""
    steps: list[object] = []
    for part in text.split('.'):
        name, _, index = part.partition('[')
        steps.append(name)
        if index:
            steps.append(int(index[:-1]))
    return steps


def _field_setter(steps: list[object]) -> Assign:
    def assign(msg: Any, value: Any) -> None:
        owner = msg
        for step in steps[:-1]:
            owner = owner[step] if isinstance(step, int) else getattr(owner, step)
        last = steps[-1]
        if isinstance(last, int):
            owner[last] = value
        else:
            setattr(owner, last, value)
    return assign


def mutations(msg: Any) -> Iterator[tuple[str, Any]]:
    """Yield ``(description, mutated copy)``: each numeric field at each extreme of its type."""
    for path, kind, assign in numeric_fields(msg):
        for value in FLOAT_EXTREMES if kind in _FLOATS else INT_EXTREMES[kind]:
            mutated = copy.deepcopy(msg)
            assign(mutated, value)
            yield f'{path} = {value!r}', mutated
