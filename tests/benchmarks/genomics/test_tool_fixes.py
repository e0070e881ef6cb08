"""Tool defects found in review.

BLAST strands, GenBank round trip, overlapping edits, primer Tm conditions.
"""

from __future__ import annotations

import primer3
import pytest
from Bio.Seq import Seq

from callbench.benchmarks.genomics.bindings import BINDINGS as T
from callbench.benchmarks.genomics.bindings import SPECS
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.errors import ToolError


def _revcomp(dna: str) -> str:
    return str(Seq(dna).reverse_complement())


# -- local BLAST searches both strands ----------------------------------------------------------------
def test_blastn_finds_a_reverse_complement_query_on_the_minus_strand(ws: Workspace) -> None:
    T["blast_create_db_from_genome"](ws, dbName="syn_nt")
    query = _revcomp(ws.subseq("SYN01", 35955, 36400))
    best = T["blast_search_local"](ws, sequence=query, database="syn_nt")["hits"][0]
    assert (best["subject"], best["subjectStart"], best["subjectEnd"]) == ("SYN01", 35955, 36400)
    assert best["identity"] == 100.0 and best["strand"] == "minus"


def test_blastn_reports_the_plus_strand_for_a_forward_query(ws: Workspace) -> None:
    T["blast_create_db_from_genome"](ws, dbName="syn_nt")
    best = T["blast_search_local"](ws, sequence=ws.subseq("SYN01", 35955, 36400), database="syn_nt")["hits"][
        0
    ]
    assert best["subjectStart"] == 35955 and best["strand"] == "plus"


def test_short_subjects_are_searched_on_both_strands_too(ws: Workspace) -> None:
    # pSYN1-sized entries are aligned whole (no seeding): the minus strand must still be found.
    (ws.root / "small.fa").write_text(">frag\n" + ws.subseq("SYN01", 1001, 1300) + "\n")
    T["blast_create_database"](ws, dbName="small", fastaFile="small.fa")
    query = _revcomp(ws.subseq("SYN01", 1101, 1200))
    best = T["blast_search_local"](ws, sequence=query, database="small")["hits"][0]
    assert (best["subjectStart"], best["subjectEnd"], best["strand"]) == (101, 200, "minus")


def test_tabular_export_writes_minus_strand_hits_end_first(ws: Workspace) -> None:
    T["blast_create_db_from_genome"](ws, dbName="syn_nt")
    query = _revcomp(ws.subseq("SYN01", 35955, 36400))
    result = T["blast_search_local"](ws, sequence=query, database="syn_nt", maxHits=1)
    path = T["blast_export_results"](ws, resultId=result["resultId"], filename="hits.tsv")["filePath"]
    cols = (ws.root / path).read_text().splitlines()[0].split("\t")
    assert cols[4:6] == ["36400", "35955"]  # BLAST tabular: sstart > send on the minus strand


# -- exported GenBank keeps the qualifiers -------------------------------------------------------------
def test_genbank_export_then_reload_keeps_gene_names_and_qualifiers(ws: Workspace) -> None:
    before = {(f["type"], f["start"], f["end"]): f for f in ws.base_features}
    T["create_annotation"](
        ws,
        name="probe_site_1",
        chromosome="SYN01",
        start=50000,
        end=50060,
        type="misc_feature",
        description="capture probe",
    )
    path = T["export_genbank_format"](ws, filename="exports/round.gbk")["filePath"]
    T["load_genome_file"](ws, filePath=path)
    after = {(f["type"], f["start"], f["end"]): f for f in ws.base_features}
    for key, feat in before.items():
        assert after[key]["name"] == feat["name"], key
        for qualifier in ("gene", "locus_tag", "product", "operon"):
            assert after[key].get(qualifier) == feat.get(qualifier), (key, qualifier)
    lacz = next(f for f in ws.base_features if f["type"] == "CDS" and f["name"] == "lacZ")
    assert lacz["translation"] == before[("CDS", lacz["start"], lacz["end"])]["translation"]
    probe = after[("misc_feature", 50000, 50060)]
    assert probe["name"] == "probe_site_1" and probe["note"] == "capture probe"
    assert T["get_coding_sequence"](ws, gene_name="lacZ")["proteinSequence"]


# -- overlapping queued edits are rejected, the rest apply against the original coordinates -------------
def _apply(ws: Workspace, edits: list[tuple[str, dict]]) -> str:
    for name, args in edits:
        T[name](ws, **args)
    T["execute_actions"](ws)
    return ws.sequences["SYN01"]


DELETE_50_60 = ("delete_sequence", {"start": 50, "end": 60})
INSERT_55 = ("insert_sequence", {"position": 55, "sequence": "GGGGG"})
INSERT_70 = ("insert_sequence", {"position": 70, "sequence": "GGGGG"})


@pytest.mark.parametrize("first,second", [(DELETE_50_60, INSERT_55), (INSERT_55, DELETE_50_60)])
def test_an_insertion_inside_a_queued_deletion_is_rejected(ws: Workspace, first, second) -> None:
    T[first[0]](ws, **first[1])
    with pytest.raises(ToolError, match=r"overlaps queued action_1 .*execute_actions"):
        T[second[0]](ws, **second[1])
    assert len(ws.actions) == 1  # the queue keeps only the first edit


@pytest.mark.parametrize("first,second", [(DELETE_50_60, INSERT_70), (INSERT_70, DELETE_50_60)])
def test_separate_edits_apply_in_original_coordinates_in_either_order(ws: Workspace, first, second) -> None:
    seq = ws.sequences["SYN01"]
    assert _apply(ws, [first, second]) == seq[:49] + seq[60:69] + "GGGGG" + seq[69:]


@pytest.mark.parametrize("delete_first", [True, False])
def test_edits_touching_a_deleted_range_are_not_overlaps(ws: Workspace, delete_first: bool) -> None:
    seq = ws.sequences["SYN01"]
    inserts = [
        ("insert_sequence", {"position": 50, "sequence": "AAA"}),
        ("insert_sequence", {"position": 61, "sequence": "CCC"}),
    ]
    out = _apply(ws, [DELETE_50_60, *inserts] if delete_first else [*inserts, DELETE_50_60])
    assert out == seq[:49] + "AAA" + "CCC" + seq[60:]


def test_insertions_at_one_position_keep_their_queue_order(ws: Workspace) -> None:
    seq = ws.sequences["SYN01"]
    out = _apply(
        ws,
        [
            ("insert_sequence", {"position": 100, "sequence": "AAA"}),
            ("insert_sequence", {"position": 100, "sequence": "CCC"}),
        ],
    )
    assert out == seq[:99] + "AAACCC" + seq[99:]


def test_overlapping_replacements_and_cuts_are_rejected(ws: Workspace) -> None:
    T["replace_sequence"](ws, start=100, end=110, sequence="GAATTC")
    with pytest.raises(ToolError, match="overlaps queued action_1"):
        T["replace_sequence"](ws, start=110, end=120, sequence="GGATCC")
    T["copy_sequence"](ws, start=90, end=130)  # a copy is no edit: overlapping is fine
    clipboard = dict(ws.clipboard)
    with pytest.raises(ToolError, match="overlaps queued action_1"):
        T["cut_sequence"](ws, start=105, end=130)
    assert ws.clipboard == clipboard  # a refused cut leaves the clipboard alone
    T["cut_sequence"](ws, start=111, end=130)  # adjacent, not overlapping
    assert [a["type"] for a in ws.actions] == ["replace", "copy", "cut"]


def test_other_chromosomes_do_not_conflict(ws: Workspace) -> None:
    T["delete_sequence"](ws, start=50, end=60)
    T["insert_sequence"](ws, chromosome="pSYN1", position=55, sequence="GG")
    assert len(ws.actions) == 2


# -- primer Tm: one set of PCR conditions, stated ------------------------------------------------------
PRIMER = "AGCGGATAACAATTTCACACAGGA"


def test_designed_and_checked_primers_get_the_same_tm(ws: Workspace) -> None:
    pair = T["design_primers"](ws, chromosome="SYN01", targetStart=23500, targetEnd=23800)
    fwd = pair["forward"]
    props = T["calculate_primer_properties"](ws, sequence=fwd["sequence"])
    saved = T["save_primer"](ws, name="fwd", sequence=fwd["sequence"])
    assert props["tm"] == fwd["tm"] == saved["tm"]


def test_every_tm_states_its_conditions(ws: Workspace) -> None:
    conditions = {"monovalentMm": 50.0, "divalentMm": 1.5, "dntpMm": 0.6, "oligoNm": 50.0}
    pair = T["design_primers"](ws, chromosome="SYN01", targetStart=23500, targetEnd=23800)
    props = T["calculate_primer_properties"](ws, sequence=PRIMER)
    saved = T["save_primer"](ws, name="p", sequence=PRIMER)
    for result in (pair, props, saved):
        assert {k: result["tmConditions"][k] for k in conditions} == conditions
    assert props["tm"] == round(
        primer3.calc_tm(PRIMER, mv_conc=50, dv_conc=1.5, dntp_conc=0.6, dna_conc=50), 2
    )
    for name in ("design_primers", "calculate_primer_properties", "save_primer"):
        description = SPECS[name].description
        assert all(text in description for text in ("50 mM", "1.5 mM Mg", "0.6 mM dNTP", "50 nM")), name


def test_primer_properties_follow_the_conditions_asked_for(ws: Workspace) -> None:
    props = T["calculate_primer_properties"](ws, sequence=PRIMER, naConc=100, primerConc=250)
    assert props["tm"] == round(
        primer3.calc_tm(PRIMER, mv_conc=100, dv_conc=1.5, dntp_conc=0.6, dna_conc=250), 2
    )
    assert props["tmConditions"]["monovalentMm"] == 100 and props["tmConditions"]["oligoNm"] == 250


# -- translate_dna: a table id the schema allows but NCBI never assigned --------------------------------
@pytest.mark.parametrize("table", [7, 8, 17])
def test_an_unassigned_genetic_code_is_a_tool_error_not_a_crash(ws: Workspace, table: int) -> None:
    # Found by hypothesis: the schema allows 1-33, NCBI has gaps; a KeyError would be a harness bug.
    with pytest.raises(ToolError, match=f"table {table} does not exist"):
        T["translate_dna"](ws, dna="ATGAAATAG", genetic_code=table)
    assert T["translate_dna"](ws, dna="ATGAAATAG", genetic_code=11)["protein"].startswith("MK")


def test_a_protein_query_with_letters_blosum62_lacks_is_the_callers_error(ws: Workspace) -> None:
    # Found by the metamorphic test's hypothesis draws: a changed literal "MKJJOUX..." reached the aligner,
    # whose ValueError became a ToolBug (an error record) instead of a failed call the model hears.
    T["blast_create_protein_db_from_genome"](ws, dbName="syn_prot")
    with pytest.raises(ToolError, match="not amino acids: J"):
        T["blast_search_local"](ws, sequence="MKLVJJAAGGEEF", database="syn_prot", blastType="blastp")
