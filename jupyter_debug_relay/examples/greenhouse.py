"""Greenhouse report: a week of hourly temperatures from three sensors, smoothed, with an alarm. It has a bug to find.

The roof sensor reports Fahrenheit, the others Celsius; the report converts and raises the
alarm when a smoothed temperature passes ``ALARM_C``. Run it with ``python greenhouse.py``
(it needs pandas).
"""

import math

import pandas as pd

HOURS = 24 * 7
SENSORS = ("north", "south", "roof")
FAHRENHEIT = ("roof",)
ALARM_C = 35.0


def read_sensor(name, hour):
    """A stand-in for the hardware: a daily wave around each sensor's mean."""
    mean, swing = {"north": (18.0, 3.0), "south": (21.0, 4.0), "roof": (68.0, 9.0)}[name]
    return round(mean + swing * math.sin(2 * math.pi * (hour % 24 - 8) / 24), 2)


def collect():
    readings = []
    for hour in range(HOURS):
        for name in SENSORS:
            readings.append((hour, name, read_sensor(name, hour)))
    return readings


def fahrenheit_to_celsius(value):
    return value - 32 * 5 / 9


def to_frame(readings):
    rows = []
    for hour, name, value in readings:
        celsius = fahrenheit_to_celsius(value) if name in FAHRENHEIT else value
        rows.append({"hour": hour, "sensor": name, "celsius": round(celsius, 2)})
    return pd.DataFrame(rows)


def smooth(frame, window=6):
    wide = frame.pivot(index="hour", columns="sensor", values="celsius")
    return wide.rolling(window, min_periods=1).mean()


def main():
    readings = collect()
    frame = to_frame(readings)
    smoothed = smooth(frame)
    peaks = smoothed.max().round(1)
    print("peak °C:", ", ".join(f"{name} {peaks[name]}" for name in SENSORS))
    hot = [name for name in SENSORS if peaks[name] > ALARM_C]
    if hot:
        print("ALARM: too hot at", ", ".join(hot))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
