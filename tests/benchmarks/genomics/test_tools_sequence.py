"""Sequence, protein, restriction and primer tools compute real results."""

from __future__ import annotations

import math

import primer3
import pytest
from Bio import Restriction
from Bio.Seq import Seq
from Bio.SeqUtils import molecular_weight

from callbench.benchmarks.genomics.bindings import BINDINGS as T
from callbench.benchmarks.genomics.workspace import Workspace
from callbench.errors import ToolError


def test_get_sequence_both_strands(ws: Workspace) -> None:
    fwd = T["get_sequence"](ws, chromosome="SYN01", start=1300, end=1365)
    rev = T["get_sequence"](ws, chromosome="SYN01", start=1300, end=1365, strand="-")
    assert fwd["length"] == 66 and fwd["sequence"].startswith("ATG")  # thrL starts at 1300
    assert rev["sequence"] == str(Seq(fwd["sequence"]).reverse_complement())
    assert T["get_sequence"](ws)["length"] == 1000  # the fixture view


def test_invalid_region_is_a_tool_error(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="invalid region"):
        T["get_sequence"](ws, start=500, end=100)
    with pytest.raises(ToolError, match="unknown chromosome"):
        T["get_sequence"](ws, chromosome="chrX", start=1, end=10)


def test_coding_sequence_of_minus_strand_gene_translates_to_annotation(ws: Workspace) -> None:
    cds = T["get_coding_sequence"](ws, gene_name="lacZ")
    assert cds["strand"] == "-" and cds["codingSequence"].startswith("ATG")
    assert cds["codingSequence"][-3:] in ("TAA", "TAG", "TGA")
    feature = next(f for f in ws.base_features if f["type"] == "CDS" and f["name"] == "lacZ")
    assert cds["proteinSequence"] == feature["translation"]


def test_reverse_complement_and_translation_frames(ws: Workspace) -> None:
    assert T["reverse_complement"](ws, sequence="atgc NNa")["reverseComplement"] == "TNNGCAT"
    assert T["translate_dna"](ws, dna="ATGAAAGCGCTGTAA")["protein"] == "MKAL*"
    assert T["translate_dna"](ws, dna="GATGGCTAAAGG", reading_frame=2)["protein"] == "MAK"
    assert T["translate_dna"](ws, dna="TTACGCCTTCGCCATCAT", reading_frame=-1)["protein"] == "MMAKA*"
    # TGA is tryptophan in the mitochondrial code (table 2), a stop in table 1.
    assert T["translate_sequence"](ws, sequence="ATGTGA", genetic_code=1)["protein"] == "M*"
    assert T["translate_sequence"](ws, sequence="ATGTGA", genetic_code=2)["protein"] == "MW"
    with pytest.raises(ToolError):
        T["reverse_complement"](ws, sequence="ATGXQ")


def test_gc_entropy_and_skew(ws: Workspace) -> None:
    assert T["compute_gc"](ws, sequence="GGCCATAT")["gcPercent"] == 50.0
    region = T["calc_region_gc"](ws, chromosome="SYN01", start=30000, end=32000, window=200)
    seq = ws.subseq("SYN01", 30000, 32000)
    assert region["gcPercent"] == round(100 * (seq.count("G") + seq.count("C")) / len(seq), 2)
    assert len(region["profile"]) == math.ceil(len(seq) / 200)
    assert T["calculate_entropy"](ws, sequence="ACGT")["entropy"] == 2.0
    assert T["calculate_entropy"](ws, sequence="AAAA")["entropy"] == 0.0
    skew = T["gc_skew"](ws, chromosome="SYN01", start=1, end=10000, window=1000)
    chunk = ws.subseq("SYN01", 1, 1000)
    g, c = chunk.count("G"), chunk.count("C")
    assert skew["skew"][0] == round((g - c) / (g + c), 4) and len(skew["cumulative"]) == 10


def test_orfs_recover_annotated_genes(ws: Workspace) -> None:
    found = T["find_orfs"](ws, start=35000, end=42000, minLength=150)["orfs"]
    trp = [f for f in ws.base_features if f["type"] == "CDS" and f["name"] in ("trpE", "trpC", "trpB")]
    for gene in trp:
        assert any(o["start"] == gene["start"] and o["end"] == gene["end"] for o in found), gene["name"]


def test_promoter_prediction_finds_the_planted_box(ws: Workspace) -> None:
    hits = T["predict_promoter"](ws, chromosome="SYN01", start=1200, end=1400, maxMismatches=0)["promoters"]
    planted = next(f for f in ws.base_features if f["type"] == "promoter")
    assert any(h["start"] == planted["start"] and h["spacer"] == 17 for h in hits)


def test_codon_usage(ws: Workspace) -> None:
    usage = T["codon_usage_analysis"](ws, sequence="ATGGCTGCTGCTAAATAA")
    assert usage["codons"] == 6 and usage["usage"]["GCT"] == 0.5
    genome = T["genome_codon_usage_analysis"](ws, topN=5)
    assert (
        genome["genes"] == sum(1 for f in ws.base_features if f["type"] == "CDS") and len(genome["top"]) == 5
    )


def test_protein_properties_match_biopython(ws: Workspace) -> None:
    peptide = "MKTAYIAKQRQISFVKSHFSRQ"
    mw = T["calculate_molecular_weight"](ws, sequence=peptide, type="protein")["molecularWeight"]
    assert mw == round(molecular_weight(peptide, seq_type="protein"), 2)
    dna = T["calculate_molecular_weight"](ws, sequence="GATTACA")["molecularWeight"]
    assert dna == round(molecular_weight("GATTACA", seq_type="DNA"), 2)
    assert 9 < T["calculate_isoelectric_point"](ws, sequence=peptide)["pI"] < 12  # lysine/arginine rich
    props = T["analyze_protein_properties"](ws, sequence=peptide)
    assert props["length"] == 22 and isinstance(props["stable"], bool)
    assert T["amino_acid_composition"](ws, sequence="AAKK")["percent"] == {"A": 50.0, "K": 50.0}


def test_restriction_sites_agree_with_string_search(ws: Workspace) -> None:
    found = T["find_restriction_sites"](ws, enzymes=["EcoRI"], chromosome="SYN01", start=20000, end=30000)
    region = ws.subseq("SYN01", 20000, 30000)
    expected, i = [], region.find("GAATTC")
    while i >= 0:
        expected.append(20000 + i + 1)  # EcoRI cuts after G^AATTC
        i = region.find("GAATTC", i + 1)
    assert found["sites"]["EcoRI"] == expected and expected


def test_digest_fragments_cover_the_region(ws: Workspace) -> None:
    digest = T["virtual_digest"](ws, enzymes=["EcoRI", "HindIII"], chromosome="SYN01", start=20000, end=30000)
    assert sum(digest["fragments"]) == 10001
    assert digest["fragmentCount"] == len(digest["cutPositions"]) + 1
    circular = T["virtual_digest"](
        ws, enzymes=["EcoRI"], chromosome="pSYN1", start=1, end=6000, circular=True
    )
    n_sites = len(Restriction.EcoRI.search(Seq(ws.sequences["pSYN1"]), linear=False))
    assert sum(circular["fragments"]) == 6000 and circular["fragmentCount"] == n_sites


def test_gel_orders_bands_by_size(ws: Workspace) -> None:
    gel = T["simulate_gel_electrophoresis"](ws, fragments=[500, 3000, {"size": 1500}], agarosePercent=1.5)
    sample = gel["lanes"][1]["bands"]
    assert [b["size"] for b in sample] == [3000, 1500, 500]
    assert sample[0]["migrationMm"] < sample[1]["migrationMm"] < sample[2]["migrationMm"]
    assert T["get_dna_marker_info"](ws, marker="100bp_ladder")["bands"][-1] == 100
    with pytest.raises(ToolError):
        T["simulate_gel_electrophoresis"](ws, fragments=[100], marker="nope")


def test_enzyme_listing_filters(ws: Workspace) -> None:
    listed = T["list_restriction_enzymes"](
        ws, query="Eco", minRecognitionLength=6, commercialOnly=True, limit=500
    )
    names = [e["name"] for e in listed["enzymes"]]
    assert "EcoRI" in names and all(n.startswith("Eco") for n in names)
    assert all(len(e["site"]) >= 6 for e in listed["enzymes"])


def test_primer_design_amplifies_the_target(ws: Workspace) -> None:
    pair = T["design_primers"](
        ws, chromosome="SYN01", targetStart=30100, targetEnd=30400, productMinSize=400, productMaxSize=800
    )
    fwd, rev = pair["forward"], pair["reverse"]
    genome = ws.sequences["SYN01"]
    assert genome[fwd["genomicStart"] - 1 : fwd["genomicStart"] - 1 + fwd["length"]] == fwd["sequence"]
    assert fwd["genomicStart"] < 30100 and rev["genomicStart"] > 30400
    assert 400 <= pair["productSize"] <= 800
    assert abs(fwd["tm"] - primer3.calc_tm(fwd["sequence"])) < 0.5


def test_primer_properties_and_binding_sites(ws: Workspace) -> None:
    props = T["calculate_primer_properties"](ws, sequence="AGCGGATAACAATTTCACACAGGA")
    # Defaults: primer3's (50 mM monovalent cations, 1.5 mM Mg2+, 0.6 mM dNTPs, 50 nM primer),
    # as design_primers.
    assert props["tm"] == round(primer3.calc_tm("AGCGGATAACAATTTCACACAGGA", mv_conc=50, dna_conc=50), 2)
    assert props["length"] == 24
    probe = ws.subseq("SYN01", 30010, 30033)
    exact = T["find_primer_binding_sites"](ws, sequence=probe)
    assert exact["sites"][0]["start"] == 30010 and exact["specific"]
    mutated = probe[:5] + ("A" if probe[5] != "A" else "C") + probe[6:]
    assert T["find_primer_binding_sites"](ws, sequence=mutated)["count"] == 0
    assert (
        T["find_primer_binding_sites"](ws, sequence=mutated, maxMismatches=1)["sites"][0]["mismatches"] == 1
    )
    antisense = str(Seq(probe).reverse_complement())
    assert T["find_primer_binding_sites"](ws, sequence=antisense)["sites"][0]["strand"] == "-"
    dimer = T["check_primer_dimer"](ws, primer1="AGCGGATAACAATTTCACACAGG", primer2="CCTGTGTGAAATTGTTATCCGCT")
    assert dimer["risky"] and dimer["dg"] < -20  # perfect complements anneal strongly


def test_tandem_repeats_recover_the_planted_rep_elements(ws: Workspace) -> None:
    found = T["find_repeats"](ws, chromosome="SYN01", minCopies=3)["repeats"]
    planted = [f for f in ws.base_features if f["type"] == "repeat_region"]
    for rep in planted:  # the reported copy may be a rotation shifted by a few bases
        assert any(
            abs(h["start"] - rep["start"]) <= 3 and h["copies"] == 3 and len(h["unit"]) == 34 for h in found
        ), rep
