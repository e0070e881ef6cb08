"""The tools: plain functions taking the case's state first, then the call's arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callbench.plugin import Case, ToolError

STATIONS = {"oslo": ("OSL-1", 4.5), "rome": ("ROM-7", 21.0), "lima": ("LIM-2", 18.25)}


class WeatherLog:
    """One case's state: the readings logged so far. ``snapshot()`` is what state-match compares."""

    def __init__(self) -> None:
        self.logged: list[dict[str, Any]] = []

    def snapshot(self) -> dict[str, Any]:
        return {"logged": list(self.logged)}


def make_state(case: Case, workdir: Path) -> WeatherLog:
    """A fresh state for every case."""
    return WeatherLog()


def find_station(state: WeatherLog, city: str) -> dict[str, Any]:
    """The station id of a city."""
    try:
        station, _celsius = STATIONS[city.strip().lower()]
    except KeyError:
        raise ToolError(f"no station in {city!r}; known: {', '.join(sorted(STATIONS))}") from None
    return {"city": city, "station_id": station}


def read_temperature(state: WeatherLog, station_id: str, unit: str = "celsius") -> dict[str, Any]:
    """The current temperature at a station."""
    for station, celsius in STATIONS.values():
        if station == station_id:
            value = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 2)
            return {"station_id": station_id, "value": value, "unit": unit}
    raise ToolError(f"unknown station {station_id!r}")


def log_reading(state: WeatherLog, station_id: str, value: float) -> dict[str, Any]:
    """Record a reading in the case's log (the state change state-match checks)."""
    state.logged.append({"station_id": station_id, "value": value})
    return {"logged": len(state.logged)}


BINDINGS = {"find_station": find_station, "read_temperature": read_temperature, "log_reading": log_reading}
