"""Type aliases shared by the kinematics modules."""

from collections.abc import Sequence

import numpy as np

FloatVector = Sequence[float] | np.ndarray
"""A flat run of floats: a list, a tuple or a 1-D numpy array (angles [rad], a point [m])."""
