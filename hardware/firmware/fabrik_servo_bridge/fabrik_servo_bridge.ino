/*
 * fabrik_servo_bridge: Arduino Uno firmware that drives up to 6 hobby servos for fabrik_ros.
 *
 * Speaks hardware/PROTOCOL.md (v1) at 115200 baud on the USB serial port and pulses digital
 * pins 2..7 (channels 0..5). Wiring and flashing: hardware/WIRING.md.
 *
 * Build: open this folder in the Arduino IDE (board "Arduino Uno") and Upload, or run
 * `make -C hardware firmware` and flash hardware/build/fabrik_servo_bridge.hex with avrdude.
 * Both give the same program: the sketch brings its own main(), so the Arduino core's init()
 * never runs. Its Timer0 millis interrupt and its Timer1 PWM setup would only add jitter to
 * the servo edges, and nothing here uses the core (no Serial, no Servo library).
 */
#include "fsb_firmware.h"

int main(void)
{
    fsb_firmware_setup();
    for (;;) {
        fsb_firmware_poll();
    }
}
