"""A simulated servo's temperature: a first-order model driven by its load, evaluated lazily.

The motor's losses grow with the torque it gives, and the case sheds heat to the air: one
thermal time constant, one steady rise per share of full torque. At a constant load share
``s`` the temperature relaxes toward ``ambient + s * rise`` as ``exp(-t / tau)``, so over any
stretch of constant load the answer is exact, whatever the step: the servo asks for the
temperature at the times it sees (a read, a write), with the load each stretch had, and the
result depends only on those times (deterministic, no thread, no clock of its own).

The numbers, for a hobby servo of the STS3215's class (12 V, a stall of about 2.7 A, a
plastic case with the sensor on the driver board): stalled at full torque it dissipates some
30 W into a case with a thermal resistance of a few K/W, far above what it can bear, which is
why it has an overheating shutdown at 70 °C. A steady rise of 75 °C at full torque with a time
constant of 45 s puts a servo pushing on an object at full torque from 25 °C past 55 °C (the
driver's WARN) after about 23 s and past 65 °C (its ERROR) after about 34 s of pushing, and
holding an arm out at a third of full torque settles near 50 °C, as SO-101 arms run warm.
Unloaded it cools back toward the ambient 25 °C with the same time constant.

A temperature set from outside (a test: :meth:`ServoHeat.set`) is where the model stands from
the next moment the servo sees on; it evolves from there.
"""

import math
from typing import Optional

AMBIENT_C = 25.0
FULL_LOAD_RISE_C = 75.0      # steady rise above ambient at full torque [°C]
THERMAL_TAU_S = 45.0         # the case's thermal time constant [s]


class ServoHeat:
    """One servo's temperature as its load heats it and the air cools it.

    :param ambient_c: the air around it [°C]
    :param rise_c: the steady rise above ambient at full torque [°C]
    :param tau_s: the thermal time constant [s]
    """

    def __init__(self, *, ambient_c: float = AMBIENT_C, rise_c: float = FULL_LOAD_RISE_C,
                 tau_s: float = THERMAL_TAU_S) -> None:
        if not tau_s > 0.0:
            raise ValueError(f'tau_s = {tau_s!r}, must be > 0 (a thermal time constant)')
        self.ambient_c = ambient_c
        self.rise_c = rise_c
        self.tau_s = tau_s
        self._temperature_c = ambient_c
        self._at_s: Optional[float] = None       # when _temperature_c held (None: not yet)
        self._set: Optional[float] = None        # set from outside, taken at the next time

    @property
    def temperature_c(self) -> float:
        """Return the temperature as of the latest time the model was given (or as set)."""
        return self._temperature_c if self._set is None else self._set

    def set(self, temperature_c: float) -> None:
        """Put the temperature at ``temperature_c`` [°C]; the model evolves from it from now."""
        self._set = float(temperature_c)

    def steady_c(self, load_share: float) -> float:
        """Return where a constant ``load_share`` of full torque brings the temperature [°C]."""
        return self.ambient_c + min(abs(load_share), 1.0) * self.rise_c

    def advance(self, until_s: float, load_share: float) -> float:
        """Run the model to ``until_s`` [s] under a constant ``load_share``; return it [°C].

        The share is the one the servo had since the model was last advanced; a time that is
        not later than the last one changes nothing.
        """
        if self._set is not None:
            self._temperature_c, self._set = self._set, None
            self._at_s = until_s if self._at_s is None else max(self._at_s, until_s)
            return self._temperature_c
        if self._at_s is None or until_s <= self._at_s:
            self._at_s = until_s if self._at_s is None else self._at_s
            return self._temperature_c
        steady = self.steady_c(load_share)
        decay = math.exp(-(until_s - self._at_s) / self.tau_s)
        self._temperature_c = steady + (self._temperature_c - steady) * decay
        self._at_s = until_s
        return self._temperature_c

    @property
    def at_s(self) -> Optional[float]:
        """Return the time the model was last advanced to [s] (None: never)."""
        return self._at_s
