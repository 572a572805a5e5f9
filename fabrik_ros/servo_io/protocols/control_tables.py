"""The registers of each bus-servo model the link reads and writes, and how their values encode.

A bus servo is a small memory: EEPROM settings (id, limits, homing offset) and RAM controls and
readings (torque, goal, present position...). Each model numbers them in its *control table*.
:class:`ControlTable` names the ones the driver, the calibration and the simulated buses use,
so no address is typed twice; :class:`Register` turns a value into bytes and back, including the
makers' sign conventions (Feetech stores signed values as sign and magnitude with the sign in a
given bit; Dynamixel X as two's complement).

Both makers store multi-byte values little-endian (Feetech "END" byte at address 2 = 0 on the
STS series). The older Feetech SCS series is big-endian: not supported here.

STS3215 sources (every address, size and encoding below agrees in all of them):
scservo_sdk 1.0.0 (``protocol_packet_handler.py``: model number read at 3, 2 bytes; error bits),
LeRobot ``src/lerobot/motors/feetech/tables.py`` (``STS_SMS_SERIES_CONTROL_TABLE``, the
sign-magnitude bits ``STS_SMS_SERIES_ENCODINGS_TABLE``, model number 777 for the sts3215), and
Feetech's STS memory table (doc.feetech.cn, "FT-SMS-STS emanual"; units: voltage 0.1 V, load
0.1 % with its direction in bit 10, ``Ofs`` 31 with its sign in bit 11, lock flag 55).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
import enum
import math
from typing import Optional


class Encoding(enum.Enum):
    """How a register holds a signed value."""

    UNSIGNED = 'unsigned'
    SIGN_MAGNITUDE = 'sign-magnitude'   # Feetech: magnitude below the sign bit, 1 = negative
    TWOS_COMPLEMENT = 'twos-complement'  # Dynamixel X


class Storage(enum.Enum):
    """Where a register lives: EEPROM survives power-off (and may need unlocking), RAM not."""

    EEPROM = 'eeprom'
    RAM = 'ram'


@dataclass(frozen=True)
class Register:
    """One register: its ``address``, ``size`` [bytes] and how its value encodes.

    ``sign_bit`` is the bit holding the sign of a sign-magnitude value (Feetech's "BIT15 =
    direction" or "BIT11").

    >>> STS3215.homing_offset.encode(-5).hex()
    '0508'
    >>> STS3215.present_load.decode(bytes.fromhex('1004'))
    -16
    """

    name: str
    address: int
    size: int
    storage: Storage
    encoding: Encoding = Encoding.UNSIGNED
    sign_bit: int = 0

    def __post_init__(self) -> None:
        """Check that the sign bit lies inside the register."""
        if self.encoding is Encoding.SIGN_MAGNITUDE and not 0 < self.sign_bit < 8 * self.size:
            raise ValueError(f'{self.name}: sign_bit = {self.sign_bit!r}, must be within '
                             f'[1, {8 * self.size - 1}]')

    @property
    def end(self) -> int:
        """Return the address after the register's last byte."""
        return self.address + self.size

    @property
    def value_range(self) -> tuple[int, int]:
        """Return the smallest and largest value the register can hold."""
        bits = 8 * self.size
        if self.encoding is Encoding.SIGN_MAGNITUDE:
            top = (1 << self.sign_bit) - 1
            return -top, top
        if self.encoding is Encoding.TWOS_COMPLEMENT:
            return -(1 << bits - 1), (1 << bits - 1) - 1
        return 0, (1 << bits) - 1

    def encode(self, value: int) -> bytes:
        """Return ``value`` as the register's bytes (little-endian).

        :raises ValueError: if the register cannot hold ``value``.
        """
        low, high = self.value_range
        if not low <= value <= high:
            raise ValueError(f'{self.name} = {value!r}, must be within [{low}, {high}]')
        if self.encoding is Encoding.SIGN_MAGNITUDE:
            raw = abs(value) | ((1 << self.sign_bit) if value < 0 else 0)
        else:
            raw = value % (1 << 8 * self.size)
        return raw.to_bytes(self.size, 'little')

    def decode(self, data: bytes) -> int:
        """Return the value held in ``data`` (exactly :attr:`size` bytes).

        Bits above a sign-magnitude sign bit are ignored, as the servo ignores them.

        :raises ValueError: if ``data`` has another length.
        """
        if len(data) != self.size:
            raise ValueError(f'{self.name}: {len(data)} bytes given, must be {self.size}')
        raw = int.from_bytes(data, 'little')
        if self.encoding is Encoding.SIGN_MAGNITUDE:
            magnitude = raw & ((1 << self.sign_bit) - 1)
            return -magnitude if raw >> self.sign_bit & 1 else magnitude
        if self.encoding is Encoding.TWOS_COMPLEMENT and raw >> (8 * self.size - 1):
            return raw - (1 << 8 * self.size)
        return raw

    def value_in(self, block: bytes, start: int) -> int:
        """Return the register's value out of ``block``, bytes read from address ``start``.

        :raises ValueError: if the block does not cover the register.
        """
        offset = self.address - start
        if offset < 0 or offset + self.size > len(block):
            raise ValueError(f'{self.name} ({self.address}..{self.end - 1}) is not inside the '
                             f'{len(block)} bytes read from {start}')
        return self.decode(bytes(block[offset:offset + self.size]))


def span(*registers: Register) -> tuple[int, int]:
    """Return ``(address, size)`` of one read covering every register given.

    >>> span(STS3215.present_position, STS3215.present_temperature)
    (56, 8)
    """
    if not registers:
        raise ValueError('no registers given, must name at least one')
    start = min(register.address for register in registers)
    return start, max(register.end for register in registers) - start


@dataclass(frozen=True)
class ControlTable:
    """The registers of one servo model that fabrik_ros uses, and its units.

    ``counts_per_turn`` is the position resolution over a whole turn (4096 on STS3215 and X
    series; the AX-12's 1024 counts span 300 degrees, 1228.8 a turn, with no wrap at the
    end); positions run 0..``position_max``. Optional registers are None where the model has
    none (Dynamixel X and the AX-12 have no Feetech lock flag; the AX-12 no homing offset).
    ``lock`` is Feetech's EEPROM write protection: 1 = locked (EEPROM writes take effect but
    are not kept at power-off), 0 = unlocked. ``hardware_error_status`` holds the error bits
    the status packets carry (Feetech ``Status`` 65, Dynamixel X ``Hardware Error Status``).
    ``torque_limit`` is the RAM register that caps the motor's output in position control
    (STS3215 and AX-12 ``Torque_Limit``; Dynamixel X ``Goal_PWM``, which limits the PWM in
    position mode, where ``Goal_Current`` applies only in current-based position mode), and
    ``torque_limit_full`` its value for the servo's full torque (STS3215 1000 = 100 % in
    0.1 %; AX-12 1023; X 885, the factory ``PWM_Limit``, 0.113 % a unit).
    ``torque_on_at_power_up`` says whether the arm is stiff before any host has spoken to it.
    ``speed_unit_counts_per_s`` is one unit of ``goal_speed`` (STS3215 Goal_Velocity: steps/s,
    1; Dynamixel X Profile_Velocity: 0.229 rev/min, 15.6 counts/s).
    ``min_voltage_limit``/``max_voltage_limit`` are the input-voltage limit registers (in
    ``voltage_unit_v``), read at admission; ``voltage_range_v`` the input range assumed,
    used where the table has no such registers [V].
    ``extra`` holds further registers a simulated servo models (settings the driver leaves
    alone); ``power_up`` the register values, by name, a new servo of this model starts with.
    """

    model: str
    model_number: int
    counts_per_turn: float
    position_max: int
    voltage_unit_v: float
    load_unit_percent: float
    torque_on_at_power_up: bool
    memory_size: int
    model_number_register: Register
    torque_enable: Register
    goal_position: Register
    goal_speed: Register
    present_position: Register
    present_speed: Register
    present_load: Register
    present_voltage: Register
    present_temperature: Register
    min_position_limit: Register
    max_position_limit: Register
    homing_offset: Optional[Register] = None
    lock: Optional[Register] = None
    hardware_error_status: Optional[Register] = None
    moving: Optional[Register] = None
    torque_limit: Optional[Register] = None
    torque_limit_full: int = 0
    min_voltage_limit: Optional[Register] = None
    max_voltage_limit: Optional[Register] = None
    voltage_range_v: tuple[float, float] = (0.0, math.inf)
    extra: tuple[Register, ...] = ()
    power_up: Mapping[str, int] = field(default_factory=dict)
    speed_unit_counts_per_s: float = 1.0
    _registers: tuple[Register, ...] = field(init=False, repr=False, compare=False, default=())
    _by_name: Mapping[str, Register] = field(init=False, repr=False, compare=False,
                                             default_factory=dict)

    def __post_init__(self) -> None:
        """Order the registers once: a simulated servo looks them up for every packet."""
        found = [value for value in vars(self).values() if isinstance(value, Register)]
        ordered = tuple(sorted(found + list(self.extra), key=lambda register: register.address))
        object.__setattr__(self, '_registers', ordered)
        object.__setattr__(self, '_by_name', {register.name: register for register in ordered})

    def torque_limit_value(self, fraction: Optional[float]) -> int:
        """Return the torque-limit register value of ``fraction`` of the full torque.

        None is the full torque; the fraction is clamped into [0, 1].

        >>> STS3215.torque_limit_value(0.3), XL430_W250.torque_limit_value(0.3)
        (300, 266)
        >>> STS3215.torque_limit_value(None), STS3215.torque_limit_value(1.7)
        (1000, 1000)
        """
        full = self.torque_limit_full
        share = 1.0 if fraction is None else min(max(fraction, 0.0), 1.0)
        return min(max(round(share * full), 0), full)

    def registers(self) -> tuple[Register, ...]:
        """Return every register of the table (for simulated memories and checks)."""
        return self._registers

    def register(self, name: str) -> Register:
        """Return the register called ``name`` (the maker's name, e.g. ``'Goal_Position'``).

        :raises KeyError: naming the unknown register and the known ones.
        """
        if name in self._by_name:
            return self._by_name[name]
        known = ', '.join(register.name for register in self.registers())
        raise KeyError(f'{self.model} has no register {name!r}; known: {known}')


def _reg(name: str, address: int, size: int, storage: Storage = Storage.RAM,
         sign_bit: int = 0) -> Register:
    encoding = Encoding.SIGN_MAGNITUDE if sign_bit else Encoding.UNSIGNED
    return Register(name, address, size, storage, encoding, sign_bit)


# Feetech STS3215 (SO-100/SO-101): 4096 counts per turn, little-endian, 1 Mbaud by default.
STS3215 = ControlTable(
    model='STS3215',
    model_number=777,
    counts_per_turn=4096,
    position_max=4095,
    voltage_unit_v=0.1,
    load_unit_percent=0.1,
    # Sold as a 7.4 V and a 12 V variant (the SO-101 follower's): a guard wide enough for both,
    # not either's datasheet range. Its own Max/Min_Voltage_Limit registers (14 and 15, 0.1 V)
    # are not read yet.
    voltage_range_v=(4.0, 14.0),
    torque_on_at_power_up=True,     # issue 23 / bus contract decision 5: the arm is stiff
    memory_size=87,                 # addresses 0..86: version, EEPROM, RAM, factory bytes
    model_number_register=_reg('Model_Number', 3, 2, Storage.EEPROM),
    min_position_limit=_reg('Min_Position_Limit', 9, 2, Storage.EEPROM),
    max_position_limit=_reg('Max_Position_Limit', 11, 2, Storage.EEPROM),
    homing_offset=_reg('Homing_Offset', 31, 2, Storage.EEPROM, sign_bit=11),
    torque_enable=_reg('Torque_Enable', 40, 1),
    goal_position=_reg('Goal_Position', 42, 2, sign_bit=15),
    goal_speed=_reg('Goal_Velocity', 46, 2, sign_bit=15),
    lock=_reg('Lock', 55, 1),
    present_position=_reg('Present_Position', 56, 2, sign_bit=15),
    present_speed=_reg('Present_Velocity', 58, 2, sign_bit=15),
    present_load=_reg('Present_Load', 60, 2, sign_bit=10),
    present_voltage=_reg('Present_Voltage', 62, 1),
    present_temperature=_reg('Present_Temperature', 63, 1),
    hardware_error_status=_reg('Status', 65, 1),
    moving=_reg('Moving', 66, 1),
    torque_limit=_reg('Torque_Limit', 48, 2),
    torque_limit_full=1000,
    extra=(_reg('ID', 5, 1, Storage.EEPROM),
           _reg('Max_Temperature_Limit', 13, 1, Storage.EEPROM),
           _reg('Max_Torque_Limit', 16, 2, Storage.EEPROM),
           _reg('Acceleration', 41, 1),
           _reg('Goal_Time', 44, 2)),
    # Feetech's memory table: factory id 1, limits 0..4095, max temperature 70 °C, torque
    # limit 1000 (0.1 %, copied to Torque_Limit at power-up), EEPROM locked.
    power_up={'ID': 1, 'Min_Position_Limit': 0, 'Max_Position_Limit': 4095,
              'Max_Temperature_Limit': 70, 'Max_Torque_Limit': 1000, 'Torque_Limit': 1000,
              'Lock': 1},
)
"""Feetech STS3215; see the module docstring for the sources."""


# Dynamixel AX-12A (Protocol 1.0; PhantomX Pincher). Sources: ROBOTIS e-manual "AX-12+,
# AX-12A" control table; the arbotix ax12 definitions (docs.ros.org arbotix_python ax12.py).
# Present speed and load carry their direction in bit 10; no homing offset, no sync read.
AX12 = ControlTable(
    model='AX-12A',
    model_number=12,
    counts_per_turn=1024 * 360 / 300,
    position_max=1023,
    voltage_unit_v=0.1,
    load_unit_percent=100 / 1023,
    voltage_range_v=(9.0, 12.0),        # AX-12A: 9 V to 12 V (recommended 11.1 V)
    torque_on_at_power_up=False,
    memory_size=50,
    model_number_register=_reg('Model_Number', 0, 2, Storage.EEPROM),
    min_position_limit=_reg('CW_Angle_Limit', 6, 2, Storage.EEPROM),
    max_position_limit=_reg('CCW_Angle_Limit', 8, 2, Storage.EEPROM),
    torque_enable=_reg('Torque_Enable', 24, 1),
    goal_position=_reg('Goal_Position', 30, 2),
    goal_speed=_reg('Moving_Speed', 32, 2),
    present_position=_reg('Present_Position', 36, 2),
    present_speed=_reg('Present_Speed', 38, 2, sign_bit=10),
    present_load=_reg('Present_Load', 40, 2, sign_bit=10),
    present_voltage=_reg('Present_Voltage', 42, 1),
    present_temperature=_reg('Present_Temperature', 43, 1),
    moving=_reg('Moving', 46, 1),
    torque_limit=_reg('Torque_Limit', 34, 2),
    torque_limit_full=1023,
    # Its Lock (47) is not Feetech's: once set, EEPROM stays read-only until power-off.
    extra=(_reg('ID', 3, 1, Storage.EEPROM),
           _reg('Lock', 47, 1),
           _reg('Temperature_Limit', 11, 1, Storage.EEPROM),
           _reg('Max_Torque', 14, 2, Storage.EEPROM)),
    power_up={'ID': 1, 'CW_Angle_Limit': 0, 'CCW_Angle_Limit': 1023, 'Temperature_Limit': 70,
              'Max_Torque': 1023, 'Torque_Limit': 1023, 'Lock': 0},
)
"""Dynamixel AX-12A; see the comment above for the sources."""



# Dynamixel X series, Protocol 2.0 (Koch and OpenManipulator arms). The XL430 and XM430 share
# every address below. Sources, which agree on each number: the ROBOTIS e-Manual control
# tables (github.com/ROBOTIS-GIT/emanual docs/en/dxl/x/xl430-w250.md and xm430-w350.md, with
# the includes they name: Homing Offset "Present Position = Actual Position + Homing Offset",
# two's complement; the Hardware Error Status bits under Shutdown(63); EEPROM written only
# with Torque Enable 0), LeRobot src/lerobot/motors/dynamixel/tables.py (X_SERIES_CONTROL_TABLE,
# MODEL_NUMBER_TABLE: xl430-w250 1060, xm430-w350 1020; two's complement per
# X_SERIES_ENCODINGS_TABLE) and dynamixel_sdk 4.1.0 (little-endian words, DXL_MAKEDWORD).
def _x_reg(name: str, address: int, size: int, storage: Storage = Storage.RAM,
           signed: bool = False) -> Register:
    encoding = Encoding.TWOS_COMPLEMENT if signed else Encoding.UNSIGNED
    return Register(name, address, size, storage, encoding)


def _x_series(model: str, model_number: int, *, load: Register, load_unit_percent: float,
              power_up: Mapping[str, int]) -> ControlTable:
    eeprom = Storage.EEPROM
    return ControlTable(
        model=model,
        model_number=model_number,
        counts_per_turn=4096,
        position_max=4095,
        voltage_unit_v=0.1,             # Present Input Voltage(144): 0.1 V
        load_unit_percent=load_unit_percent,
        torque_on_at_power_up=False,    # Torque Enable(64) initial value 0: limp at power-up
        memory_size=148,                # 0..147 (Backup Ready); the indirect area not modelled
        model_number_register=_x_reg('Model_Number', 0, 2, eeprom),
        homing_offset=_x_reg('Homing_Offset', 20, 4, eeprom, signed=True),
        max_position_limit=_x_reg('Max_Position_Limit', 48, 4, eeprom),
        min_position_limit=_x_reg('Min_Position_Limit', 52, 4, eeprom),
        torque_enable=_x_reg('Torque_Enable', 64, 1),
        hardware_error_status=_x_reg('Hardware_Error_Status', 70, 1),
        goal_speed=_x_reg('Profile_Velocity', 112, 4),     # 0.229 rev/min; 0 = no limit
        speed_unit_counts_per_s=0.229 * 4096 / 60,           # Profile Velocity(112) unit
        goal_position=_x_reg('Goal_Position', 116, 4, signed=True),
        moving=_x_reg('Moving', 122, 1),
        # Goal PWM(100): -PWM Limit(36) .. PWM Limit, 0.113 %; caps the output in position
        # control mode (Operating Mode 3); 885 at power-up, the factory PWM Limit.
        torque_limit=_x_reg('Goal_PWM', 100, 2, signed=True),
        torque_limit_full=885,
        max_voltage_limit=_x_reg('Max_Voltage_Limit', 32, 2, eeprom),     # 0.1 V
        min_voltage_limit=_x_reg('Min_Voltage_Limit', 34, 2, eeprom),
        present_load=load,
        present_speed=_x_reg('Present_Velocity', 128, 4, signed=True),
        present_position=_x_reg('Present_Position', 132, 4, signed=True),
        present_voltage=_x_reg('Present_Input_Voltage', 144, 2),
        present_temperature=_x_reg('Present_Temperature', 146, 1),
        extra=(_x_reg('Firmware_Version', 6, 1, eeprom),
               _x_reg('ID', 7, 1, eeprom),
               _x_reg('Baud_Rate', 8, 1, eeprom),
               _x_reg('Return_Delay_Time', 9, 1, eeprom),
               _x_reg('Drive_Mode', 10, 1, eeprom),
               _x_reg('Operating_Mode', 11, 1, eeprom),
               _x_reg('Temperature_Limit', 31, 1, eeprom),
               _x_reg('PWM_Limit', 36, 2, eeprom),
               _x_reg('Velocity_Limit', 44, 4, eeprom),
               _x_reg('Shutdown', 63, 1, eeprom),
               _x_reg('LED', 65, 1),
               _x_reg('Status_Return_Level', 68, 1),
               _x_reg('Profile_Acceleration', 108, 4)),
        power_up=power_up,
    )


# Initial values from each model's e-Manual table, but Baud_Rate 3 (1 Mbps, as the arms'
# owners set it; factory 1 = 57,600 bps). Return_Delay_Time is the factory 250 (500 us);
# LeRobot writes 0, and the simulated bus answers at once either way.
_X_POWER_UP = {'Firmware_Version': 38, 'ID': 1, 'Baud_Rate': 3, 'Return_Delay_Time': 250,
               'Drive_Mode': 0, 'Operating_Mode': 3, 'Max_Position_Limit': 4095,
               'Min_Position_Limit': 0, 'Shutdown': 52, 'Status_Return_Level': 2,
               'PWM_Limit': 885, 'Goal_PWM': 885}

XL430_W250 = _x_series(
    'XL430-W250', 1060, load=_x_reg('Present_Load', 126, 2, signed=True),
    load_unit_percent=0.1,              # Present Load(126): 0.1 % of the maximum torque
    power_up={**_X_POWER_UP, 'Temperature_Limit': 72, 'Max_Voltage_Limit': 140,
              'Min_Voltage_Limit': 60, 'Velocity_Limit': 265})
"""Dynamixel XL430-W250 (Koch arm); see the comment above :func:`_x_reg` for the sources."""

XM430_W350 = _x_series(
    'XM430-W350', 1020, load=_x_reg('Present_Current', 126, 2, signed=True),
    # Present Current(126) in 2.69 mA; as a load, a share of the factory Current Limit(38)
    # 1,193 (3.2 A), which the e-Manual gives as the range of Goal Current(102).
    load_unit_percent=100 / 1193,
    power_up={**_X_POWER_UP, 'Temperature_Limit': 80, 'Max_Voltage_Limit': 160,
              'Min_Voltage_Limit': 95, 'Velocity_Limit': 350})
"""Dynamixel XM430-W350 (OpenManipulator-X); same addresses as the XL430-W250."""

TABLES: Mapping[str, ControlTable] = {table.model: table
                                      for table in (STS3215, AX12, XL430_W250, XM430_W350)}
"""Every supported model by name."""
