"""The bundled data: small, regenerable byte for byte, and biologically consistent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from Bio import SeqIO
from Bio.Seq import Seq

from callbench.benchmarks.genomics.genome import data_dir

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "make_genomics_data.py"


def test_data_is_small() -> None:
    assert sum(p.stat().st_size for p in data_dir().iterdir()) < 1_000_000


def test_generator_reproduces_the_checked_in_files(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_genomics_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for bundled in data_dir().iterdir():
        if bundled.is_file():
            assert (tmp_path / bundled.name).read_bytes() == bundled.read_bytes(), bundled.name


def test_genes_have_start_stop_and_matching_translations() -> None:
    records = list(SeqIO.parse(data_dir() / "syn_genome.gbk", "genbank"))
    assert [r.id for r in records] == ["SYN01", "pSYN1"]
    kinds = {f.type for r in records for f in r.features}
    assert {"gene", "CDS", "operon", "promoter", "repeat_region"} <= kinds
    for record in records:
        for feature in (f for f in record.features if f.type == "CDS"):
            cds = feature.extract(record.seq)
            assert cds[:3] == "ATG" and str(cds[-3:]) in ("TAA", "TAG", "TGA")
            assert str(cds.translate(table=11, to_stop=True)) == feature.qualifiers["translation"][0]
    fasta = {r.id: str(r.seq) for r in SeqIO.parse(data_dir() / "syn_genome.fasta", "fasta")}
    assert fasta == {r.id: str(r.seq) for r in records}
    chrom = str(records[0].seq)
    assert "GAATTC" in chrom and "GGATCC" in chrom and "AAGCTT" in chrom  # restriction sites to find
    promoter = next(f for f in records[0].features if f.type == "promoter" and f.location.strand == -1)
    assert str(Seq(str(promoter.extract(records[0].seq)))).startswith("TTGACA")
