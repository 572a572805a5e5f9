"""The URDF's own forward kinematics, through yourdfpy (PyPI), to compare an arm file with."""

from pathlib import Path

import numpy as np
import yourdfpy


class UrdfFk:
    """A URDF file loaded once; ``tool_point`` poses it and reads a link's origin."""

    def __init__(self, path: Path, *, base_link: str, tool_link: str) -> None:
        self.robot = yourdfpy.URDF.load(str(path), load_meshes=False,
                                        build_collision_scene_graph=False,
                                        load_collision_meshes=False)
        self.base_link = base_link
        self.tool_link = tool_link

    def tool_point(self, positions_rad: dict[str, float]) -> np.ndarray:
        """Return the tool link's origin in the base link's frame [m]."""
        self.robot.update_cfg({name: positions_rad.get(name, 0.0)
                               for name in self.robot.actuated_joint_names})
        return self.robot.get_transform(self.tool_link, self.base_link)[:3, 3].copy()
