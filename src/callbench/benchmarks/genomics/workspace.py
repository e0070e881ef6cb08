"""The genome-workbench state machine the genomics tools act on.

One ``Workspace`` per case: it starts from the same fixture (bundled genome loaded, chromosome
SYN01, view 35,001-36,000), lives in its own folder (``root``) where exports are written, and is
fully deterministic (ids come from counters, never from clocks or random numbers).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from callbench.benchmarks.genomics.genome import DEFAULT_GENOME, Genome, data_dir, feature_dicts, parse_genome
from callbench.plugin import ToolError, freeze

DATA_FOLDER = "data"
INITIAL_VIEW = {"chromosome": "SYN01", "start": 35001, "end": 36000}
TRACKS = (
    "genes",
    "gc_content",
    "sequence",
    "variants",
    "reads",
    "proteins",
    "primers",
    "actions",
    "wigTracks",
    "blast",
)
VISIBLE_BY_DEFAULT = {"genes", "gc_content", "sequence"}
TRACK_SETTING_DEFAULTS: dict[str, Any] = {
    "height": 80,
    "color": "#4a90d9",
    "lineWidth": 1,
    "showLabels": True,
    "opacity": 1.0,
}
UI_DEFAULTS: dict[str, Any] = {
    "chatbox_visible": True,
    "chatbox_layout": "floating",
    "chatbox_minimized": False,
    "sidebar_visible": True,
    "sidebar_panels": {},
    "top_banner": "expanded",
    "settings_modal_open": False,
    "style": "classic",
}
EXPORT_DEFAULTS: dict[str, Any] = {
    "defaultFormat": "fasta",
    "lineLength": 60,
    "includeAnnotations": True,
    "outputDirectory": "exports",
}


class Workspace:
    """Mutable state of one workbench session (one case)."""

    def __init__(self, root: Path, *, load_default: bool = True) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._link_data()
        self.cwd = "."
        self.genome: Genome | None = None
        self.sequences: dict[str, str] = {}
        self.base_features: list[dict[str, Any]] = []
        self.annotations: dict[str, dict[str, Any]] = {}
        self.annotation_history: list[dict[str, Any]] = []
        self.view: dict[str, Any] = dict(INITIAL_VIEW)
        self.selection: dict[str, Any] | None = None
        self.tracks = {t: t in VISIBLE_BY_DEFAULT for t in TRACKS}
        self.track_settings = {t: dict(TRACK_SETTING_DEFAULTS) for t in TRACKS}
        self.tabs: list[dict[str, Any]] = [{"id": "tab_1", "title": "SYN01", "view": dict(INITIAL_VIEW)}]
        self.active_tab = "tab_1"
        self.windows = [{"id": "window_1", "title": "Genome browser"}]
        self.active_window = "window_1"
        self.highlights: list[dict[str, Any]] = []
        self.bookmarks: list[dict[str, Any]] = []
        self.saved_views: dict[str, dict[str, Any]] = {}
        self.actions: list[dict[str, Any]] = []
        self.executed_actions: list[dict[str, Any]] = []
        self.undo_stack: list[dict[str, str]] = []
        self.clipboard: dict[str, Any] | None = None
        self.primers: dict[str, dict[str, Any]] = {}
        self.blast_dbs: dict[str, dict[str, Any]] = {}
        self.blast_results: dict[str, dict[str, Any]] = {}
        self.tasks: list[dict[str, Any]] = []
        self.export_settings = dict(EXPORT_DEFAULTS)
        self.loaded_files: list[dict[str, Any]] = []
        self.variants: list[dict[str, Any]] = []
        self.reads: dict[str, Any] = {}
        self.wig_tracks: dict[str, dict[str, Any]] = {}
        self.operons_table: list[dict[str, str]] = []
        self.ui = {k: (dict(v) if isinstance(v, dict) else v) for k, v in UI_DEFAULTS.items()}
        self.files_written: list[str] = []
        self._counters: dict[str, int] = {"tab": 1, "window": 1}
        if load_default:
            self.load_genome(data_dir() / DEFAULT_GENOME, DATA_FOLDER + "/" + DEFAULT_GENOME)

    # -- setup ---------------------------------------------------------------------------------
    def _link_data(self) -> None:
        """Expose the bundled data read-only as ``<root>/data``: one directory symlink (a copy where
        links are not allowed). One link per case keeps per-case setup and cleanup cheap."""
        target = self.root / DATA_FOLDER
        if target.exists() or target.is_symlink():
            return
        try:
            os.symlink(data_dir(), target, target_is_directory=True)
        except OSError:
            target.mkdir()
            for src in data_dir().iterdir():
                if src.is_file():
                    (target / src.name).write_bytes(src.read_bytes())

    def load_genome(self, path: Path, shown_as: str) -> Genome:
        """Replace the loaded genome: drops user annotations and pending or undoable edits; keeps the
        view when its chromosome and coordinates still exist, else shows the first kilobase."""
        genome = parse_genome(path)
        self.genome = genome
        self.sequences = dict(genome.sequences)
        self.base_features = list(feature_dicts(genome))  # read-only; user edits live in annotations
        self.annotations, self.actions, self.undo_stack = {}, [], []
        chrom = self.view["chromosome"]
        if chrom not in genome.sequences or self.view["end"] > len(genome.sequences[chrom]):
            first = next(iter(genome.sequences))
            self.view = {"chromosome": first, "start": 1, "end": min(1000, len(genome.sequences[first]))}
        self.note_loaded("genome", shown_as)
        return genome

    # -- helpers used by tools ---------------------------------------------------------------------
    def next_id(self, prefix: str, salt: str = "") -> str:
        """Deterministic id: ``<prefix>_<n>`` or, with a salt, ``<prefix>_<n>_<hex>``."""
        n = self._counters.get(prefix, 0) + 1
        self._counters[prefix] = n
        if not salt:
            return f"{prefix}_{n}"
        # surrogatepass: a salt is the model's text, and a lone surrogate in it is still an id
        digest = hashlib.sha256(f"{prefix}:{n}:{salt}".encode("utf-8", "surrogatepass")).hexdigest()[:6]
        return f"{prefix}_{n}_{digest}"

    def note_loaded(self, kind: str, path: str, **extra: Any) -> None:
        self.loaded_files.append({"type": kind, "path": path, **extra})

    def chromosome(self, name: str | None) -> str:
        """Validate a chromosome name (``None`` means the current one)."""
        if not self.sequences:
            raise ToolError("no genome is loaded")
        chrom = name or self.view["chromosome"]
        if chrom not in self.sequences:
            raise ToolError(f"unknown chromosome {chrom!r}; loaded: {', '.join(self.sequences)}")
        return chrom

    def region(self, chromosome: str | None, start: int | None, end: int | None) -> tuple[str, int, int]:
        """Validate a 1-based inclusive region; missing bounds default to the current view."""
        chrom = self.chromosome(chromosome)
        s = self.view["start"] if start is None else int(start)
        e = self.view["end"] if end is None else int(end)
        length = len(self.sequences[chrom])
        if s < 1 or e < s or e > length:
            raise ToolError(f"invalid region {chrom}:{s}-{e} (chromosome length {length})")
        return chrom, s, e

    def subseq(self, chrom: str, start: int, end: int) -> str:
        return self.sequences[chrom][start - 1 : end]

    def features(self) -> list[dict[str, Any]]:
        """Genome features plus user annotations."""
        return self.base_features + list(self.annotations.values())

    def resolve(self, path: str, *, must_exist: bool = False) -> Path:
        """A user path inside the workspace folder (relative to the working directory).

        Every path comes from the model, so whatever the file system would refuse is a ToolError the
        model hears (a name too long, text that is no file name), never an exception out of the tool.
        """
        if not path or not str(path).strip():
            raise ToolError("empty file path")
        _check_file_name(path)
        # normpath, not resolve(): data/ holds symlinks into the package, which must stay usable.
        root = self.root.resolve()
        full = Path(os.path.normpath(path if os.path.isabs(path) else root / self.cwd / path))
        if full != root and root not in full.parents:
            raise ToolError(f"path {path!r} is outside the workspace folder")
        if must_exist and not os.path.exists(full):  # (os.path: False, not an error, for any OSError)
            raise ToolError(f"file not found: {path}")
        return full

    def existing_file(self, path: str) -> Path:
        """An existing file (not a folder) named by the model."""
        full = self.resolve(path, must_exist=True)
        if full.is_dir():
            raise ToolError(f"{path!r} is a folder, not a file")
        return full

    def existing_folder(self, path: str) -> Path:
        """An existing folder named by the model."""
        full = self.resolve(path, must_exist=True)
        if not full.is_dir():
            raise ToolError(f"{path!r} is a file, not a folder")
        return full

    def read_text(self, path: str) -> str:
        """The text of an existing file named by the model; what cannot be read is a ToolError."""
        full = self.existing_file(path)
        try:
            return full.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path!r} is not a UTF-8 text file") from None
        except OSError as exc:
            raise ToolError(f"cannot read {path!r}: {exc.strerror or exc}") from None

    def relative(self, path: Path) -> str:
        """A path as shown to the model: relative to the workspace folder."""
        return Path(os.path.normpath(path)).relative_to(self.root.resolve()).as_posix()

    def writable(self, path: str) -> Path:
        """Resolve a path that will be written or created; the bundled ``data/`` is off limits."""
        full = self.resolve(path)
        rel = self.relative(full)
        if rel == DATA_FOLDER or rel.startswith(DATA_FOLDER + "/"):
            raise ToolError(f"{DATA_FOLDER}/ holds the bundled read-only data; write somewhere else")
        return full

    def write_file(self, path: str, text: str) -> str:
        """Write a text file inside the workspace and record it; returns its relative path."""
        full = self.writable(path)
        if full.is_dir():
            raise ToolError(f"{path!r} is a folder; give a file name to write")
        rel = self.relative(full)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError(f"the text to write is not valid Unicode (position {exc.start})") from None
        try:
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_bytes(data)
        except OSError as exc:
            raise ToolError(f"cannot write {path!r}: {exc.strerror or exc}") from None
        if rel not in self.files_written:
            self.files_written.append(rel)
        return rel

    def set_view(self, chrom: str, start: int, end: int) -> dict[str, Any]:
        length = len(self.sequences[chrom])
        start, end = max(1, start), min(length, end)
        self.view = {"chromosome": chrom, "start": start, "end": end}
        for tab in self.tabs:
            if tab["id"] == self.active_tab:
                tab["view"] = dict(self.view)
        return dict(self.view)

    # -- snapshot ------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The state for the final-state check, as a detached immutable value (sequences summarised by
        hash and length, written files by content hash). Everything a tool can change is in it."""
        seqs = {
            c: {"length": len(s), "sha256": hashlib.sha256(s.encode()).hexdigest()[:16]}
            for c, s in self.sequences.items()
        }
        files = {}
        for rel in sorted(self.files_written):
            full = self.root / rel
            if full.is_file():
                files[rel] = hashlib.sha256(full.read_bytes()).hexdigest()[:16]
        return freeze(
            {
                "genome": self.genome.name if self.genome else None,
                "sequences": seqs,
                "view": self.view,
                "selection": self.selection,
                "tracks": self.tracks,
                "track_settings": self.track_settings,
                "tabs": self.tabs,
                "active_tab": self.active_tab,
                "windows": self.windows,
                "active_window": self.active_window,
                "highlights": self.highlights,
                "bookmarks": self.bookmarks,
                "saved_views": self.saved_views,
                "annotations": self.annotations,
                "pending_actions": self.actions,
                "clipboard": self.clipboard,
                "primers": self.primers,
                "blast_databases": sorted(self.blast_dbs),
                "tasks": self.tasks,
                "cwd": self.cwd,
                "export_settings": self.export_settings,
                "loaded_files": [f["path"] for f in self.loaded_files],
                "ui": self.ui,
                "files": files,
            }
        )


NAME_MAX_BYTES = 255
"""The longest file or folder name (in UTF-8 bytes) the common file systems take."""


def _check_file_name(path: str) -> None:
    """A ToolError for a path no file system could hold: not encodable, or a name too long."""
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"path {path[:60]!r} is not a valid file name (position {exc.start})") from None
    if b"\0" in encoded:
        raise ToolError("a file name cannot hold a NUL character")
    if any(len(part) > NAME_MAX_BYTES for part in encoded.split(b"/")):
        raise ToolError(f"file name too long: at most {NAME_MAX_BYTES} bytes per name ({path[:60]!r}...)")
