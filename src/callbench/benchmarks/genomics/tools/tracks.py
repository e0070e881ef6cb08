"""Track visibility and track display settings."""

from __future__ import annotations

from typing import Any

from callbench.benchmarks.genomics.tools._spec import boolean, enum, integer, number, obj, string, tool
from callbench.benchmarks.genomics.workspace import TRACK_SETTING_DEFAULTS, TRACKS, Workspace
from callbench.plugin import ToolError

TRACK_NAME = enum("Track name", list(TRACKS))
SETTINGS_PROPS: dict[str, Any] = {
    "height": integer("Track height in pixels", minimum=20, maximum=600),
    "color": string("Main colour, e.g. #1f77b4"),
    "lineWidth": number("Line width for plotted tracks", minimum=0.5, maximum=10),
    "showLabels": boolean("Show feature labels"),
    "opacity": number("Opacity from 0 to 1", minimum=0, maximum=1),
}
SETTINGS = obj("Settings to change", SETTINGS_PROPS, minProperties=1)


def _track(name: str) -> str:
    if name not in TRACKS:
        raise ToolError(f"unknown track {name!r}; tracks: {', '.join(TRACKS)}")
    return name


@tool(
    "tracks",
    "Show or hide a browser track (genes, gc_content, sequence, variants, reads, proteins, primers, "
    "actions, wigTracks, blast).",
    params={"trackName": TRACK_NAME, "visible": boolean("true shows the track, false hides it")},
    required=("trackName", "visible"),
    keywords=("show track", "hide track", "turn on", "turn off"),
)
def toggle_track(ws: Workspace, trackName: str, visible: bool) -> dict[str, Any]:
    ws.tracks[_track(trackName)] = bool(visible)
    return {"trackName": trackName, "visible": bool(visible)}


@tool(
    "tracks",
    "Visibility of every track.",
    read_only=True,
    keywords=("which tracks", "track visibility"),
    result={"tracks": obj("Track name -> visible")},
)
def get_track_status(ws: Workspace) -> dict[str, Any]:
    return {"tracks": dict(ws.tracks), "visible": [t for t, on in ws.tracks.items() if on]}


@tool(
    "tracks",
    "Show or hide every annotation-derived track at once (genes and proteins).",
    params={"visible": boolean("true shows, false hides")},
    required=("visible",),
    keywords=("annotation track",),
)
def toggle_annotation_track(ws: Workspace, visible: bool) -> dict[str, Any]:
    for name in ("genes", "proteins"):
        ws.tracks[name] = bool(visible)
    return {"genes": bool(visible), "proteins": bool(visible)}


@tool(
    "track_settings",
    "Display settings of one track.",
    params={"trackName": TRACK_NAME},
    required=("trackName",),
    read_only=True,
    keywords=("track height", "track colour"),
)
def get_track_settings(ws: Workspace, trackName: str) -> dict[str, Any]:
    return {"trackName": trackName, "settings": dict(ws.track_settings[_track(trackName)])}


@tool(
    "track_settings",
    "Change display settings (height, color, lineWidth, showLabels, opacity) of one track.",
    params={"trackName": TRACK_NAME, "settings": SETTINGS},
    required=("trackName", "settings"),
    keywords=("resize track", "track colour", "line width", "configure track"),
)
def set_track_settings(ws: Workspace, trackName: str, settings: dict[str, Any]) -> dict[str, Any]:
    ws.track_settings[_track(trackName)].update(settings)
    return {"trackName": trackName, "settings": dict(ws.track_settings[trackName])}


@tool("track_settings", "Display settings of every track.", read_only=True, keywords=("all tracks",))
def get_all_track_settings(ws: Workspace) -> dict[str, Any]:
    return {"settings": {t: dict(s) for t, s in ws.track_settings.items()}}


@tool(
    "track_settings",
    "Reset one track's settings (or all tracks when no name is given) to the defaults.",
    params={"trackName": TRACK_NAME},
    keywords=("default settings", "restore"),
)
def reset_track_settings(ws: Workspace, trackName: str | None = None) -> dict[str, Any]:
    names = [_track(trackName)] if trackName else list(TRACKS)
    for name in names:
        ws.track_settings[name] = dict(TRACK_SETTING_DEFAULTS)
    return {"reset": names}


@tool(
    "track_settings",
    "JSON Schema of the settings a track accepts.",
    read_only=True,
    params={"trackName": TRACK_NAME},
    keywords=("available settings", "options"),
)
def get_track_settings_schema(ws: Workspace, trackName: str | None = None) -> dict[str, Any]:
    return {"trackName": trackName, "schema": {"type": "object", "properties": SETTINGS_PROPS}}


@tool(
    "track_settings",
    "Change settings of several tracks in one call: a map from track name to settings.",
    params={
        "settings_map": obj(
            "Track name -> settings object",
            {t: obj(f"Settings for {t}", SETTINGS_PROPS) for t in TRACKS},
            minProperties=1,
        )
    },
    required=("settings_map",),
    keywords=("several tracks", "batch", "multiple tracks"),
)
def batch_set_track_settings(ws: Workspace, settings_map: dict[str, dict[str, Any]]) -> dict[str, Any]:
    for name, settings in settings_map.items():
        ws.track_settings[_track(name)].update(settings)
    return {"updated": sorted(settings_map)}
