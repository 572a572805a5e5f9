"""Textbook FABRIK (Aristidou & Lasenby 2011, Algorithm 1), unconstrained, in numpy.

The benchmark's baseline: no joint limits, fixed root, tolerance on the end effector distance
and an iteration cap; joint positions in, joint positions out. Written as the paper states it,
with each update ``p = (1 - lambda) p_a + lambda p_b`` on numpy 3-vectors.
"""

import numpy as np


def textbook_fabrik(points: np.ndarray, target: np.ndarray, *, tolerance_m: float,
                    max_iterations: int) -> tuple[np.ndarray, int]:
    """Return the solved (n+1, 3) joint positions and the iterations used.

    :param points: current joint positions, root first [m]
    :param target: wanted end effector position [m]
    """
    p = points.astype(float).copy()
    d = np.linalg.norm(np.diff(p, axis=0), axis=1)
    count = len(d)
    if np.linalg.norm(target - p[0]) > d.sum():
        for i in range(count):
            r = np.linalg.norm(target - p[i])
            lam = d[i] / r
            p[i + 1] = (1 - lam) * p[i] + lam * target
        return p, 0
    base = p[0].copy()
    iterations = 0
    while np.linalg.norm(p[-1] - target) > tolerance_m and iterations < max_iterations:
        iterations += 1
        p[-1] = target
        for i in range(count - 1, -1, -1):
            r = np.linalg.norm(p[i + 1] - p[i])
            lam = d[i] / r
            p[i] = (1 - lam) * p[i + 1] + lam * p[i]
        p[0] = base
        for i in range(count):
            r = np.linalg.norm(p[i + 1] - p[i])
            lam = d[i] / r
            p[i + 1] = (1 - lam) * p[i] + lam * p[i + 1]
    return p, iterations
