"""Stateful tools: editing queue, annotations, files, BLAST, tabs, tasks, and workspace isolation."""

from __future__ import annotations

from pathlib import Path

import pytest
from Bio import SeqIO

from callbench.benchmarks.genomics.bindings import BINDINGS as T
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.errors import ToolError


def test_edit_queue_executes_highest_position_first_and_undoes(ws: Workspace) -> None:
    before = ws.sequences["SYN01"]
    T["replace_sequence"](ws, start=20100, end=20105, sequence="GAATTC")
    T["insert_sequence"](ws, position=30000, sequence="GGATCC")
    T["delete_sequence"](ws, start=100, end=109)
    assert ws.sequences["SYN01"] == before  # queued, not applied
    assert T["get_action_list"](ws)["count"] == 3
    result = T["execute_actions"](ws)
    after = ws.sequences["SYN01"]
    assert result["executed"] == 3 and len(after) == len(before) + 6 - 10
    assert after[20089:20095] == "GAATTC"  # shifted left by the 10-base deletion at 100
    assert after[29989:29995] == "GGATCC"
    T["undo_last_action"](ws)
    T["undo_last_action"](ws)
    T["undo_last_action"](ws)
    assert ws.sequences["SYN01"] == before
    with pytest.raises(ToolError, match="nothing to undo"):
        T["undo_last_action"](ws)


def test_copy_paste_and_clear(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="clipboard is empty"):
        T["paste_sequence"](ws, position=50000)
    T["copy_sequence"](ws, start=1241, end=1269)
    assert T["get_clipboard_content"](ws)["clipboard"]["sequence"] == ws.subseq("SYN01", 1241, 1269)
    T["paste_sequence"](ws, position=50000)
    assert T["clear_actions"](ws)["needsConfirmation"]
    assert T["clear_actions"](ws, forced=True)["cleared"] == 2


def test_execute_actions_auto_save_writes_genbank(ws: Workspace) -> None:
    T["cut_sequence"](ws, chromosome="SYN01", start=70000, end=70050)
    out = T["execute_actions"](ws, auto_save=True, filename="edited.gbk")
    records = list(SeqIO.parse(ws.root / out["savedTo"], "genbank"))
    assert len(records[0].seq) == 120000 - 51


def test_annotation_crud_and_history(ws: Workspace) -> None:
    created = T["create_annotation"](ws, name="site_A", start=15000, end=15150, type="regulatory_region")
    assert created["id"].startswith("user_1_")
    T["update_annotation"](ws, identifier="site_A", updates={"description": "conserved"})
    T["bulk_update_annotations"](ws, identifiers=[created["id"]], updates={"type": "misc_feature"})
    assert T["get_annotation"](ws, identifier=created["id"])["type"] == "misc_feature"
    assert T["list_annotations"](ws, userOnly=True)["count"] == 1
    assert T["search_annotations"](ws, query="conserved")["count"] == 1
    T["delete_annotation"](ws, identifier=created["id"])
    history = T["get_annotation_history"](ws)["history"]
    assert [h["action"] for h in history] == ["delete", "update", "update", "create"]
    assert history[1]["before"] == {"type": "regulatory_region"} and history[2]["before"] == {
        "description": ""
    }


def test_gene_details_operons_neighbours(ws: Workspace) -> None:
    details = T["get_gene_details"](ws, geneName="trpB")
    assert details["operon"] == "trpEDCBA" and details["strand"] == "+"
    operons = T["get_operons"](ws, chromosome="SYN01", start=30000, end=45000)["operons"]
    assert [o["name"] for o in operons] == ["trpEDCBA"] and operons[0]["genes"][0] == "trpE"
    near = {f["name"] for f in T["get_nearby_features"](ws, geneName="lacI", distance=2000)["features"]}
    # lacI spans 27218-28297: polA (from 30003) is 1706 bp away, lacZ (to 25177) 2041 bp.
    assert {"lacZYA", "polA"} <= near and not {"lacI", "lacZ"} & near
    gaps = T["find_intergenic_regions"](ws, chromosome="SYN01", minLength=1500)["regions"]
    genes = [f for f in ws.base_features if f["type"] == "gene" and f["chromosome"] == "SYN01"]
    assert all(not (g["start"] <= gap["start"] <= g["end"]) for gap in gaps for g in genes)
    assert T["assess_annotation_quality"](ws)["issues"] == []


def test_loaders_parse_the_bundled_files(ws: Workspace) -> None:
    assert T["load_variant_file"](ws, filePath="data/variants.vcf")["variants"] == 40
    assert T["load_reads_file"](ws, filePath="data/reads.sam")["reads"] == 300
    assert T["load_wig_tracks"](ws, filePaths=["data/sample.wig", "data/another_sample.wig"])["tracks"] == 2
    assert T["load_annotation_file"](ws, filePath="data/extra_annotations.gff3")["annotations"] == 3
    assert T["load_annotation_file"](ws, filePath="data/crispr_guides.bed")["annotations"] == 12
    assert T["load_operon_file"](ws, filePath="data/operons.tsv")["operons"] == 7
    variants = T["list_variants_in_region"](ws, chromosome="SYN01", start=1, end=120000)
    assert variants["count"] == 40 and ws.tracks["variants"] and ws.tracks["reads"]
    genome = T["load_genome_file"](ws, filePath="data/syn_genome.fasta")
    assert [c["name"] for c in genome["chromosomes"]] == ["SYN01", "pSYN1"] and genome["features"] == 0
    assert len(T["get_loaded_files_list"](ws)["files"]) == 9


def test_exports_write_parseable_files(ws: Workspace) -> None:
    fasta = T["export_fasta_sequence"](ws, filename="exports/g.fasta")["filePath"]
    assert [len(r) for r in SeqIO.parse(ws.root / fasta, "fasta")] == [120000, 6000]
    gbk = T["export_genbank_format"](ws, filename="exports/g.gbk")["filePath"]
    assert len(next(SeqIO.parse(ws.root / gbk, "genbank")).features) > 100
    proteins = list(
        SeqIO.parse(ws.root / T["export_protein_fasta"](ws, filename="p.faa")["filePath"], "fasta")
    )
    assert len(proteins) == 42 and all(str(p.seq)[0] == "M" for p in proteins)
    bed = (
        ws.root
        / T["export_bed_format"](ws, filename="g.bed", startPosition=20000, endPosition=26000)["filePath"]
    )
    assert {line.split("\t")[3] for line in bed.read_text().splitlines()[1:]} == {"lacA", "lacY", "lacZ"}
    view = T["export_current_view_fasta"](ws, filename="v.fa")
    assert view["region"] == "SYN01:35001-36000"
    gff = ws.root / T["export_gff_annotations"](ws, filename="o.gff3", featureTypes=["operon"])["filePath"]
    assert len(gff.read_text().splitlines()) == 1 + 7  # header + the seven operons
    shot = T["capture_screenshot"](ws, filePath="shots/a.svg")["filePath"]
    assert T["open_image_file"](ws, filePath=shot)["opened"] == "shots/a.svg"


def test_paths_cannot_escape_or_touch_bundled_data(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        T["export_fasta_sequence"](ws, filename="../escape.fasta")
    with pytest.raises(ToolError, match="read-only"):
        T["export_fasta_sequence"](ws, filename="data/overwrite.fasta")
    with pytest.raises(ToolError, match="read-only"):
        T["set_working_directory"](ws, directory_path="data/sub")
    T["set_working_directory"](ws, directory_path="results")
    T["set_working_directory"](ws, directory_path="run1")
    out = T["export_cds_fasta"](ws, filename="cds.fna")["filePath"]
    assert out == "results/run1/cds.fna" and (ws.root / out).is_file()
    assert T["set_working_directory"](ws, directory_path="../..")["workingDirectory"] == "."


def test_local_blast_finds_the_source(ws: Workspace) -> None:
    T["blast_create_db_from_genome"](ws, dbName="syn_nt")
    query = ws.subseq("SYN01", 35955, 36400)
    hits = T["blast_search_local"](ws, sequence=query, database="syn_nt")["hits"]
    assert (
        hits[0]["subjectStart"] == 35955 and hits[0]["subjectEnd"] == 36400 and hits[0]["identity"] == 100.0
    )
    T["blast_create_protein_db_from_genome"](ws, dbName="syn_prot")
    recA = next(f for f in ws.base_features if f["type"] == "CDS" and f["name"] == "recA")["translation"]
    result = T["blast_search_local"](ws, sequence=recA[10:70], database="syn_prot", blastType="blastp")
    assert result["hits"][0]["subject"] == "recA" and result["hits"][0]["evalue"] < 1e-20
    filtered = T["blast_filter_results"](ws, resultId=result["resultId"], minIdentity=90)
    assert all(h["identity"] >= 90 for h in filtered["hits"]) and filtered["hits"]
    exported = T["blast_export_results"](ws, resultId=filtered["resultId"], filename="hits.tsv")
    assert (ws.root / exported["filePath"]).read_text().startswith("query\trecA\t100.0")
    with pytest.raises(ToolError, match="query is prot"):
        T["blast_search_local"](ws, sequence=recA[:40], database="syn_nt")
    T["blast_delete_database"](ws, dbName="syn_nt")
    assert [d["dbName"] for d in T["blast_list_databases"](ws)["databases"]] == ["syn_prot"]


def test_remote_stand_ins_answer_from_fixtures(ws: Workspace) -> None:
    entry = T["get_uniprot_entry"](ws, uniprotId="recA")
    assert entry["source"] == "offline fixture" and entry["gene"] == "recA"
    model = T["fetch_alphafold_structure"](ws, uniprotId=entry["accession"])
    assert (ws.root / model["filePath"]).read_text().startswith("HEADER")
    with pytest.raises(ToolError, match="offline fixture"):
        T["get_uniprot_entry"](ws, uniprotId="P99999")
    with pytest.raises(ToolError, match="network access is disabled"):
        T["download_internet_file"](ws, url="https://example.com/x", filename="x")


def test_tabs_tasks_tracks_and_ui(ws: Workspace) -> None:
    ids = [T["open_new_tab"](ws)["tab_id"] for _ in range(3)]
    assert ids == ["tab_2", "tab_3", "tab_4"]
    T["switch_to_tab"](ws, tabId="tab_1")
    T["close_tab"](ws, tabId="tab_3")
    assert [t["id"] for t in T["list_tabs"](ws)["tabs"]] == ["tab_1", "tab_2", "tab_4"]
    task = T["add_task"](ws, title="check primers")
    T["update_task"](ws, taskId=task["id"], status="done")
    assert T["list_tasks"](ws, status="done")["count"] == 1
    T["toggle_track"](ws, trackName="gc_content", visible=False)
    assert "gc_content" not in T["get_track_status"](ws)["visible"]
    T["batch_set_track_settings"](ws, settings_map={"genes": {"height": 120}})
    assert T["get_track_settings"](ws, trackName="genes")["settings"]["height"] == 120
    T["switch_ui_style"](ws, style_name="midnight")
    assert ws.ui["style"] == "midnight"


def test_navigation_moves_the_view(ws: Workspace) -> None:
    assert T["navigate_to_position"](ws, position=40000) == {
        "chromosome": "SYN01",
        "start": 39500,
        "end": 40499,
    }
    assert T["zoom_in"](ws, factor=4)["end"] - ws.view["start"] + 1 == 250
    T["zoom_to_gene"](ws, geneName="recA", padding=500)
    recA = next(f for f in ws.base_features if f["type"] == "gene" and f["name"] == "recA")
    assert ws.view["start"] == recA["start"] - 500
    T["save_view_state"](ws, name="v")
    T["pan_right"](ws, distance=5000)
    assert T["restore_view_state"](ws, name="v")["start"] == recA["start"] - 500


def test_workspaces_are_isolated_and_deterministic(tmp_path: Path) -> None:
    first, second = Workspace(tmp_path / "a"), Workspace(tmp_path / "b")
    for ws in (first, second):
        T["create_annotation"](ws, name="x", start=10, end=20)
        T["highlight_region"](ws, start=5, end=50, label="h")
        T["export_gff_annotations"](ws, filename="out.gff3")
    assert first.snapshot() == second.snapshot()
    assert Workspace(tmp_path / "c").annotations == {}


def test_loading_a_genome_resets_annotations_and_edits(ws: Workspace) -> None:
    T["create_annotation"](ws, name="old", start=10, end=20)
    T["delete_sequence"](ws, start=100, end=110)
    T["navigate_to_position"](ws, chromosome="pSYN1", start=100, end=900)
    T["load_genome_file"](ws, filePath="data/syn_genome.fasta")
    assert ws.annotations == {} and ws.actions == [] and ws.base_features == []
    assert ws.view == {"chromosome": "pSYN1", "start": 100, "end": 900}  # still valid: kept
