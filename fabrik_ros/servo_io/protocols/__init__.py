"""Board protocol codecs (bytes in, frames out; no I/O) and the link's dialect of each.

``native`` is the fabrik_ros firmware's protocol (hardware/PROTOCOL.md); ``ssc32`` the
Lynxmotion SSC-32U; ``maestro`` the Pololu Maestro. Each ``*_dialect`` module tells the link
what to send to that board and which answers to expect. ``dynamixel`` is Dynamixel Protocol
2.0 (X series), a :class:`~.bus_codec.BusCodec` for the bus link.
"""
