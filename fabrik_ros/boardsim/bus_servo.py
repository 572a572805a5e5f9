"""A simulated serial bus servo: its register memory, its motion, and the hand that moves it.

Shared by the simulated Feetech and Dynamixel buses: a :class:`BusServo` knows nothing of
packets, only of its control table (:mod:`fabrik_ros.servo_io.protocols.control_tables`).
The bus firmware reads and writes its memory as the servo would on receiving a request.

What it models, and where the numbers come from:

- **Positions.** The shaft sits somewhere on the encoder's turn (``shaft``, 0..counts per turn).
  The servo reports and takes positions in its own frame, shifted by the homing offset:
  ``Present_Position = shaft - Homing_Offset`` modulo a turn (LeRobot
  ``motors/feetech/feetech.py``, ``_get_half_turn_homings``: "Present_Position =
  Actual_Position - Homing_Offset"; LeRobot's Dynamixel bus states the opposite sign,
  ``Present_Position = Actual_Position + Homing_Offset``, so the sign is a parameter of the
  table's maker, :attr:`BusServo.offset_sign`). A goal is reached by moving through the range
  in that frame, never across the 4095 -> 0 seam: a goal past the seam runs the long way round.
- **Torque on**: the shaft moves toward the goal (clamped into the limit registers, when
  min <= max) at the goal speed register's rate, or at ``max_speed_counts_per_s`` when that
  register is 0 (STS: 0 = fastest). Acceleration is not modelled.
- **Torque off**: the servo is limp; :meth:`BusServo.move_by_hand` puts the shaft where a hand
  moves it. With torque on, a hand can push the shaft but the servo drives back to its goal.
- **Torque on at power-up** per table (the STS3215 holds where it stands; Dynamixel X is limp);
  the goal register starts at the present position. Enabling torque later drives to the goal
  register as it stands: a host that enables torque must first write a goal (the safe reading
  of the makers' manuals, and the one that shows a driver that forgot).
- **EEPROM** (limits, homing offset, id) survives :meth:`BusServo.power_cycle`; with a Feetech
  lock flag of 1 a write takes effect but is not kept at power-off (Feetech's memory table:
  "0 = save EEPROM changes, 1 = don't save").
- **An object in the way** (:meth:`BusServo.place_object`): the shaft stops where it meets
  it (a gripper closing on something) and pushes: its load reads the torque-limit register
  (``ControlTable.torque_limit``: STS3215 ``Torque_Limit``, Dynamixel X ``Goal_PWM``) as a
  share of its full torque, signed the way it pushes, for as long as its goal lies beyond the
  object. Moving away is free. :meth:`BusServo.remove_object` takes it out of the way.
- **Heat** (:mod:`fabrik_ros.boardsim.servo_heat`): the temperature follows the load, a
  first-order model (pushing on an object at full torque passes 65 °C after about 34 s;
  unloaded it cools toward 25 °C). A temperature the test sets is where the model goes on
  from (:attr:`BusServo.temperature_c`); :attr:`BusServo.heat` holds its constants.
- **Readings** the test sets: voltage, load; **error bits** on demand
  (:attr:`BusServo.error_bits`, reported by the bus in every status and in the hardware error
  register); a servo that goes **silent** (:attr:`BusServo.silent`: it neither hears nor
  answers, as with a broken cable).

Pure: every method that depends on time takes ``now_s``.
"""

from dataclasses import dataclass
import math
from typing import Optional

from fabrik_ros.boardsim.servo_heat import ServoHeat
from fabrik_ros.servo_io.protocols.control_tables import ControlTable, Register, Storage

# STS3215 no-load speed 45 rpm (0.22 s / 60 deg at 12 V, measured ~46 rpm in TheRobotStudio
# SO-ARM100 issue 134): 45 x 4096 / 60 ~ 3070 counts/s.
DEFAULT_MAX_SPEED_COUNTS_PER_S = 3000.0


@dataclass(frozen=True)
class HeldObject:
    """Something in the shaft's way at ``position`` [counts, the servo's frame].

    ``side`` is +1 when the object lies above ``position`` (it stops a shaft moving up), -1
    when below.
    """

    position: float
    side: int

    def stops(self, target: float) -> bool:
        """Return True if a move to ``target`` runs into the object."""
        return (target - self.position) * self.side > 0


@dataclass(frozen=True)
class _Motion:
    """A move in the servo's own position frame: from ``start`` at ``t0_s`` to ``target``."""

    start: float
    target: float
    t0_s: float
    rate: float          # counts/s; 0 = standing still

    def at(self, now_s: float) -> float:
        distance = self.target - self.start
        travelled = self.rate * max(0.0, now_s - self.t0_s)
        if travelled >= abs(distance):
            return self.target
        return self.start + math.copysign(travelled, distance)

    def arrival_s(self) -> float:
        """Return when the move reaches its target [s] (inf: standing short of it)."""
        distance = abs(self.target - self.start)
        if distance == 0.0:
            return self.t0_s
        return self.t0_s + distance / self.rate if self.rate > 0.0 else math.inf


class BusServo:
    """One simulated bus servo.

    :param table: the model's control table.
    :param servo_id: its bus id (written to its ``ID`` register).
    :param shaft: where its shaft stands at power-up [counts of the raw encoder].
    :param offset_sign: +1 if ``Present = shaft - offset`` (Feetech), -1 if ``shaft + offset``.
    :param max_speed_counts_per_s: its speed when the goal speed register is 0.
    """

    def __init__(self, table: ControlTable, servo_id: int, *, shaft: Optional[float] = None,
                 offset_sign: int = 1,
                 max_speed_counts_per_s: float = DEFAULT_MAX_SPEED_COUNTS_PER_S) -> None:
        self.table = table
        self.offset_sign = offset_sign
        self.max_speed_counts_per_s = max_speed_counts_per_s
        self.silent = False
        self.error_bits = 0
        self.heat = ServoHeat()
        self.voltage_v = 12.0
        self.load = 0                       # Present_Load while torque is on [register units]
        self.held: Optional[HeldObject] = None
        self._pushing = False               # the goal lies beyond the held object
        self._memory = bytearray(table.memory_size)
        self._fill_power_up()
        self._saved = bytearray(self._memory)        # EEPROM as kept at power-off
        id_register = self._find('ID')
        if id_register is not None:
            self._put(id_register, servo_id)
            self._save(id_register)
        self._fixed_id = servo_id
        start = (table.position_max + 1) // 2 if shaft is None else shaft
        self._motion = _Motion(self._frame(start), self._frame(start), 0.0, 0.0)
        self._power_up_torque()

    # -- identity and registers ---------------------------------------------------------------

    @property
    def servo_id(self) -> int:
        """Return the id the servo answers to (its ``ID`` register)."""
        id_register = self._find('ID')
        return self._fixed_id if id_register is None else self._get(id_register)

    @property
    def torque(self) -> bool:
        """Return True while the motor holds or drives (torque enable register non-zero)."""
        return self._get(self.table.torque_enable) != 0

    @property
    def homing_offset(self) -> int:
        """Return the homing offset register's value (0 on a model without one)."""
        register = self.table.homing_offset
        return 0 if register is None else self._get(register)

    @property
    def limits(self) -> tuple[int, int]:
        """Return the min and max position limit registers."""
        return self._get(self.table.min_position_limit), self._get(self.table.max_position_limit)

    @property
    def temperature_c(self) -> float:
        """Return the temperature as of the latest time the servo saw [°C]."""
        return self.heat.temperature_c

    @temperature_c.setter
    def temperature_c(self, value: float) -> None:
        """Set the temperature; the heat model goes on from it (see :mod:`servo_heat`)."""
        self.heat.set(value)

    def temperature(self, now_s: float) -> float:
        """Return the temperature at ``now_s`` as the load heated the servo until then [°C]."""
        self._heat_to(now_s)
        return self.heat.temperature_c

    def register(self, register: Register) -> int:
        """Return the value a register holds (readings as of the last :meth:`read`)."""
        return self._get(register)

    # -- motion -------------------------------------------------------------------------------

    def present(self, now_s: float) -> float:
        """Return the position the servo reports at ``now_s``, unrounded [counts]."""
        return self._motion.at(now_s)

    def shaft(self, now_s: float) -> float:
        """Return where the shaft stands on the raw encoder's turn [counts]."""
        raw = self.present(now_s) + self.offset_sign * self.homing_offset
        return self._wrap(raw)

    def moving(self, now_s: float) -> bool:
        """Return True while the servo drives toward its goal."""
        return self.torque and self.present(now_s) != self._motion.target

    def goal_target(self) -> float:
        """Return where the servo is driving: its goal register clamped into its limits."""
        return float(self._clamped(self._get(self.table.goal_position)))

    def move_by_hand(self, count: float, now_s: float) -> None:
        """Put the shaft where a hand moves it, given as the position the servo will report.

        A limp servo stays there; one with torque on drives back to its goal.
        """
        self._heat_to(now_s)
        here = min(max(float(count), 0.0), float(self.table.position_max))
        self._motion = _Motion(here, here, now_s, 0.0)
        if self.torque:
            self._drive(now_s)

    def place_object(self, count: float, now_s: float) -> None:
        """Put an object in the shaft's way at ``count`` (the position the servo reports).

        The object lies on the side of ``count`` away from where the shaft stands now; a
        shaft driving toward it stops there and pushes.

        :raises ValueError: if the shaft stands at ``count`` (the object has no side then)
        """
        self._heat_to(now_s)
        here = self.present(now_s)
        if count == here:
            raise ValueError(f'object at {count!r}: the shaft stands there, put it on a side')
        self.held = HeldObject(float(count), 1 if count > here else -1)
        if self.torque:
            self._drive(now_s)

    def remove_object(self, now_s: float) -> None:
        """Take the object out of the way; a servo pushing on it goes on to its goal."""
        self._heat_to(now_s)
        self.held = None
        self._pushing = False
        if self.torque:
            self._drive(now_s)

    def pushing(self, now_s: float) -> bool:
        """Return True while the shaft stands against the object, its goal beyond it."""
        held = self.held
        return (self.torque and self._pushing and held is not None
                and self.present(now_s) == held.position)

    def torque_limit_share(self) -> float:
        """Return the torque-limit register as a share of the full torque (1.0 without one)."""
        register = self.table.torque_limit
        if register is None or not self.table.torque_limit_full:
            return 1.0
        return min(abs(self._get(register)) / self.table.torque_limit_full, 1.0)

    # -- the bus's access to memory -------------------------------------------------------------

    def read(self, address: int, size: int, now_s: float) -> bytes:
        """Return ``size`` bytes of memory from ``address``, readings current at ``now_s``.

        Bytes past the end of the memory read as 0.
        """
        self._refresh(now_s)
        data = bytes(self._memory[address:address + size])
        return data + bytes(size - len(data))

    def write(self, address: int, data: bytes, now_s: float) -> None:
        """Write ``data`` from ``address`` as the servo does, and act on what changed.

        Read-only readings are not written; bytes past the end of the memory are dropped.
        """
        self._heat_to(now_s)
        end = min(address + len(data), len(self._memory))
        if address >= end:
            return
        touched = [register for register in self.table.registers()
                   if register.address < end and address < register.end]
        writable = [register for register in touched if not self._read_only(register)]
        old_offset, was_on = self.homing_offset, self.torque
        here = self.present(now_s)
        for register in writable:
            for index in range(max(register.address, address), min(register.end, end)):
                self._memory[index] = data[index - address]
            if register.storage is Storage.EEPROM and self._eeprom_kept():
                self._save(register)
        self._react(writable, old_offset, was_on, here, now_s)

    def power_cycle(self, now_s: float) -> None:
        """Switch the servo off and on: RAM from power-up, EEPROM as kept, the shaft stays."""
        self._heat_to(now_s)
        shaft = self.shaft(now_s)
        self._fill_power_up()
        for register in self.table.registers():
            if register.storage is Storage.EEPROM:
                self._memory[register.address:register.end] = \
                    self._saved[register.address:register.end]
        self._motion = _Motion(self._frame(shaft), self._frame(shaft), now_s, 0.0)
        self._power_up_torque()

    # -- internals --------------------------------------------------------------------------

    def _react(self, written: list[Register], old_offset: int, was_on: bool, here: float,
               now_s: float) -> None:
        table = self.table
        if table.homing_offset in written and self.homing_offset != old_offset:
            shaft = self._wrap(here + self.offset_sign * old_offset)
            here = self._frame(shaft)
            self._motion = _Motion(here, here, now_s, 0.0)
        if not self.torque:
            self._motion = _Motion(here, here, now_s, 0.0)
            return
        drive = {table.goal_position, table.goal_speed, table.min_position_limit,
                 table.max_position_limit, table.homing_offset, table.torque_enable}
        if not was_on or drive.intersection(written):
            self._drive(now_s)

    def _drive(self, now_s: float) -> None:
        here = self.present(now_s)
        speed = (abs(self._get(self.table.goal_speed)) * self.table.speed_unit_counts_per_s
                 or self.max_speed_counts_per_s)
        rate = min(float(speed), self.max_speed_counts_per_s)
        target = self.goal_target()
        held = self.held
        self._pushing = held is not None and held.stops(target)
        if held is not None and self._pushing:
            target = held.position
        self._motion = _Motion(here, target, now_s, rate)

    def _clamped(self, goal: int) -> int:
        low, high = self.limits
        goal = min(max(goal, 0), self.table.position_max)
        return min(max(goal, low), high) if low <= high else goal

    def _frame(self, shaft: float) -> float:
        """Return the position the servo reports for a shaft position."""
        return self._wrap(shaft - self.offset_sign * self.homing_offset)

    def _wrap(self, count: float) -> float:
        if self.table.homing_offset is None:      # no full-turn encoder (AX-12): no wrap
            return min(max(count, 0.0), float(self.table.position_max))
        return count % self.table.counts_per_turn

    def _refresh(self, now_s: float) -> None:
        """Write the readings into memory, as the servo keeps them current."""
        table = self.table
        present = self.present(now_s)
        moving = self.moving(now_s)
        speed = round(self._motion.rate / table.speed_unit_counts_per_s) if moving else 0
        if moving and self._motion.target < present:
            speed = -speed
        self._put(table.present_position, round(present) % (table.position_max + 1))
        self._put_clipped(table.present_speed, speed)
        self._put_clipped(table.present_load, self._load(now_s))
        self._put_clipped(table.present_voltage, round(self.voltage_v / table.voltage_unit_v))
        self._put_clipped(table.present_temperature, round(self.temperature(now_s)))
        if table.moving is not None:
            self._put(table.moving, int(moving))
        if table.hardware_error_status is not None:
            self._put_clipped(table.hardware_error_status, self.error_bits)

    def _load(self, now_s: float) -> int:
        """Return Present_Load: the set ``load``, or the torque limit while pushing."""
        if not self.torque:
            return 0
        held = self.held
        if held is None or not self.pushing(now_s):
            return self.load
        percent = 100.0 * self.torque_limit_share()
        return held.side * round(percent / self.table.load_unit_percent)

    def _heat_to(self, now_s: float) -> None:
        """Run the heat model to ``now_s`` under the load since it last ran.

        Nothing changed the servo since then but the passing time, so the load is the set one
        until the shaft meets the object it drives to, and the torque limit from then on.
        """
        heat = self.heat
        since = now_s if heat.at_s is None else heat.at_s
        if not self.torque:
            heat.advance(now_s, 0.0)
            return
        share = abs(self.load) * self.table.load_unit_percent / 100.0
        held = self.held
        if held is not None and self._pushing and self._motion.target == held.position:
            meets = min(max(self._motion.arrival_s(), since), now_s)
            heat.advance(meets, share)
            share = self.torque_limit_share()
        heat.advance(now_s, share)

    def _read_only(self, register: Register) -> bool:
        table = self.table
        readings = (table.model_number_register, table.present_position, table.present_speed,
                    table.present_load, table.present_voltage, table.present_temperature,
                    table.hardware_error_status, table.moving)
        return register in readings

    def _eeprom_kept(self) -> bool:
        """Return True if an EEPROM write now survives power-off (Feetech: lock flag 0)."""
        lock = self.table.lock
        return lock is None or self._get(lock) == 0

    def _fill_power_up(self) -> None:
        """Set the memory to a new servo's: zeros, the table's power-up values, the model."""
        table = self.table
        self._memory[:] = bytes(len(self._memory))
        for name, value in table.power_up.items():
            self._put(table.register(name), value)
        self._put(table.model_number_register, table.model_number)

    def _power_up_torque(self) -> None:
        here = self._motion.target
        self._put(self.table.goal_position, round(here))
        self._put(self.table.torque_enable, int(self.table.torque_on_at_power_up))

    def _save(self, register: Register) -> None:
        self._saved[register.address:register.end] = self._memory[register.address:register.end]

    def _find(self, name: str) -> Optional[Register]:
        try:
            return self.table.register(name)
        except KeyError:
            return None

    def _get(self, register: Register) -> int:
        return register.decode(bytes(self._memory[register.address:register.end]))

    def _put(self, register: Register, value: int) -> None:
        self._memory[register.address:register.end] = register.encode(value)

    def _put_clipped(self, register: Register, value: int) -> None:
        low, high = register.value_range
        self._put(register, min(max(value, low), high))
