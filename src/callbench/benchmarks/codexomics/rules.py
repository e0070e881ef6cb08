"""Facts about the CodeXomics benchmark that the importer encodes (see docs/codexomics-import.md).

Everything here restates published behaviour of the original strict evaluator (its alias tables,
equivalent tools, read-only set, documented follow-ups and pattern-checked placeholders) as plain
data, so the converters stay small and the mapping is reviewable in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class ImportProblem:
    """One finding of the importer, attached to a case or a file.

    Attributes:
        where: ``suite_id:case_id`` (optionally with a step) or a registry-relative file path.
        severity: ``error`` (item skipped), ``warning`` (imported with a lossy or repaired mapping)
            or ``info`` (a documented, faithful rewrite).
        message: One line saying what was found and what the importer did.
    """

    where: str
    severity: Severity
    message: str

    def line(self) -> str:
        """The problem as one printable line."""
        return f"{self.severity:<7} {self.where}: {self.message}"


# Angle placeholders the original checks by pattern rather than accepting any value.
# <created_protein_database> must contain a "protein"/"prot" token: tokens are split on anything
# that is not a letter or digit, so "Ecoli_protein" and "prot-db" qualify, "proteome" does not.
SPECIAL_PLACEHOLDERS: dict[str, str] = {
    "created_annotation_id": r"^user_\d+_[a-z0-9]+$",
    "created_protein_database": r"(?i)(?:^|[^a-z0-9])(?:protein|prot)(?:[^a-z0-9]|$)",
}

PLACEHOLDER_RE = re.compile(r"^<([A-Za-z_][A-Za-z0-9_]*)>$")
# '{tool.path}' or '{{tool.path}}'; path segments are dotted names or [n] indexes.
REFERENCE_RE = re.compile(r"^\{\{?\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z0-9_.\[\]]+?)\s*\}?\}$")

# Directional key aliases of the original argument matcher: expected key -> accepted actual keys.
_FILE_KEYS = ("filename", "fileName", "filePath", "outputPath")
KEY_ALIASES: dict[str, tuple[str, ...]] = {
    **{k: tuple(x for x in _FILE_KEYS if x != k) + ("path",) for k in _FILE_KEYS},
    "inputFile": ("filePath", "filename", "fileName", "path"),
    "database": ("dbName", "databaseName"),
    "dbName": ("database", "databaseName"),
    "databaseName": ("database", "dbName"),
    "tabIndex": ("index", "tab"),
    "sequence": ("primerSequence", "dna"),
    "primerSequence": ("sequence",),
    "dna": ("sequence",),
    "includeCoordinates": ("includeCoordinate", "includeCoords"),
    "includeCoordinate": ("includeCoordinates", "includeCoords"),
    "includeCoords": ("includeCoordinates", "includeCoordinate"),
}

# Completion-mode key alternatives of the original (tool -> expected key -> alternative key sets).
COMPLETION_KEY_ALTERNATIVES: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "switch_to_tab": {"tabId": (("tabName",), ("tabIndex",))},
    "blast_create_quick_db_for_current_genome": {"dbName": (("genomeName",),)},
    "navigate_to_position": {"position": (("start",),), "start": (("position",),)},
    "export_bed_format": {"exportRange": (("startPosition", "endPosition"),)},
}

# Symmetric tool equivalences (completion mode of the original).
EQUIVALENT_TOOLS: tuple[tuple[str, str], ...] = (
    ("blast_create_db_from_genome", "blast_create_quick_db_for_current_genome"),
    ("blast_search", "blast_search_online"),
    ("translate_sequence", "translate_dna"),
)

# The published read-only set: exact names plus name prefixes (written ``get_track_*`` upstream).
READ_ONLY_NAMES: frozenset[str] = frozenset(
    {
        "get_current_state",
        "get_genome_info",
        "get_chromosome_list",
        "get_sequence",
        "search_features",
        "search_annotations",
        "search_pattern",
        "search_uniprot_database",
        "search_pdb_structures",
        "search_alphafold_structures",
        "search_sequence_motif",
        "compute_gc",
        "calc_region_gc",
        "reverse_complement",
        "translate_dna",
        "translate_sequence",
        "virtual_digest",
        "blast_search",
        "blast_search_local",
        "blast_list_databases",
        "blast_validate_database",
        "blast_filter_results",
        "blast_get_installation_status",
        "capture_screenshot",
        "save_view_state",
        "open_image_file",
        "show_action_list",
    }
)
READ_ONLY_PREFIXES: tuple[str, ...] = ("get_track_", "get_annotation", "list_", "calculate_")

# Documented follow-ups: tool -> the tools it may follow as a tolerated extra call.
QUEUE_EDIT_TOOLS = (
    "paste_sequence",
    "insert_sequence",
    "cut_sequence",
    "delete_sequence",
    "replace_sequence",
    "copy_sequence",
)
FOLLOW_UPS: dict[str, tuple[str | dict[str, Any], ...]] = {
    "execute_actions": QUEUE_EDIT_TOOLS,
    # Upstream only forgives it when it writes the file execute_actions(auto_save) already wrote.
    "export_genbank_format": (
        {
            "tool": "execute_actions",
            "same_values": {"filename": "arguments.filename"},
            "requires": {"auto_save": True},
        },
    ),
    # Upstream only forgives it when its label equals the gene select_gene selected.
    "highlight_region": ({"tool": "select_gene", "same_values": {"label": "arguments.geneName"}},),
}

# toggle_track track names are compared after stripping case, spaces, '_' and '-', with aliases.
TRACK_NAME_ALIASES: dict[str, tuple[str, ...]] = {
    "gc": ("gc", "gccontent"),
    "genes": ("genes", "gene"),
    "variants": ("variants", "variant"),
    "reads": ("reads", "read"),
    "proteins": ("proteins", "protein"),
    "primers": ("primers", "primer"),
    "wigtracks": ("wigtracks", "wig", "wigtrack"),
}


def is_read_only(name: str) -> bool:
    """Whether ``name`` belongs to the original's read-only set."""
    return name in READ_ONLY_NAMES or name.startswith(READ_ONLY_PREFIXES)


def normalize_key(key: str) -> str:
    """The comparison form of a parameter key: ``-`` and ``_`` removed, lower case."""
    return key.replace("_", "").replace("-", "").lower()


def camel_key(key: str) -> str:
    """snake/kebab key to the original matcher's camelCase form (``reading_frame`` -> ``readingFrame``)."""
    parts = re.split(r"[_\-\s]+", key)
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:] if p)


def snake_key(key: str) -> str:
    """camelCase key to snake_case (``readingFrame`` -> ``reading_frame``)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def track_canonical(name: str) -> str:
    """toggle_track's canonical track name (``GC Content`` -> ``gc``)."""
    flat = re.sub(r"[\s_\-]+", "", name.lower())
    for canonical, spellings in TRACK_NAME_ALIASES.items():
        if flat in spellings:
            return canonical
    return flat
