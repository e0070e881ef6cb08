"""Generate the bundled synthetic genome and companion files of the genomics domain pack.

The output is deterministic for a given seed, so the checked-in files can be regenerated and
compared byte for byte::

    python scripts/make_genomics_data.py            # writes src/callbench/benchmarks/genomics/data/
    python scripts/make_genomics_data.py OUT_DIR    # writes elsewhere (the tests compare the two)

The genome is synthetic: gene names are borrowed from E. coli for readability, the sequences are
random codons between real start and stop codons, so no biological claim is made.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from Bio.Seq import Seq
from Bio.SeqFeature import FeatureLocation, SeqFeature
from Bio.SeqRecord import SeqRecord

OUT = Path(__file__).resolve().parent.parent / "src" / "callbench" / "benchmarks" / "genomics" / "data"
SEED = 20260701
CHROM_LEN = 120_000
PLASMID_LEN = 6_000
STOPS = ("TAA", "TAG", "TGA")
SENSE_CODONS = [a + b + c for a in "ACGT" for b in "ACGT" for c in "ACGT" if a + b + c not in STOPS]
PROMOTER = "TTGACA" + "ATGCTAGCTAGCTAGCA" + "TATAAT"  # -35 box, 17 bp spacer, -10 box
REPEAT_UNIT = "GCCGGATGCGGCGTGAACGCCTTATCCGGCCTAC"  # REP-like element, repeated on purpose

# (operon name or None, strand, [(gene, product, length in codons)])
OPERONS: list[tuple[str | None, int, list[tuple[str, str, int]]]] = [
    (
        "thrLABC",
        1,
        [
            ("thrL", "thr operon leader peptide", 22),
            ("thrA", "aspartate kinase I", 420),
            ("thrB", "homoserine kinase", 310),
            ("thrC", "threonine synthase", 428),
        ],
    ),
    (None, 1, [("yaaA", "DUF328 domain protein", 258)]),
    (None, -1, [("talB", "transaldolase B", 317)]),
    ("dnaKJ", 1, [("dnaK", "chaperone protein DnaK", 638), ("dnaJ", "chaperone protein DnaJ", 376)]),
    (None, -1, [("nhaA", "sodium/proton antiporter", 388)]),
    (
        "lacZYA",
        -1,
        [
            ("lacZ", "beta-galactosidase", 612),
            ("lacY", "lactose permease", 417),
            ("lacA", "galactoside O-acetyltransferase", 203),
        ],
    ),
    (None, 1, [("lacI", "lac repressor", 360)]),
    (None, 1, [("polA", "DNA polymerase I", 560)]),
    (None, -1, [("recA", "DNA recombination protein RecA", 353)]),
    (
        "trpEDCBA",
        1,
        [
            ("trpE", "anthranilate synthase component I", 520),
            ("trpD", "anthranilate phosphoribosyltransferase", 331),
            ("trpC", "indole-3-glycerol phosphate synthase", 452),
            ("trpB", "tryptophan synthase beta chain", 397),
            ("trpA", "tryptophan synthase alpha chain", 268),
        ],
    ),
    (None, -1, [("gyrA", "DNA gyrase subunit A", 590)]),
    (None, 1, [("rpoB", "DNA-directed RNA polymerase subunit beta", 640)]),
    (
        "araBAD",
        -1,
        [
            ("araB", "ribulokinase", 566),
            ("araA", "L-arabinose isomerase", 500),
            ("araD", "L-ribulose-5-phosphate 4-epimerase", 231),
        ],
    ),
    (None, 1, [("araC", "arabinose operon regulator", 292)]),
    (None, 1, [("dnaE", "DNA polymerase III subunit alpha", 610)]),
    (None, -1, [("fakG", "hypothetical protein", 140)]),
    (
        "hisGDC",
        1,
        [
            ("hisG", "ATP phosphoribosyltransferase", 299),
            ("hisD", "histidinol dehydrogenase", 434),
            ("hisC", "histidinol-phosphate aminotransferase", 356),
        ],
    ),
    (None, -1, [("ompA", "outer membrane protein A", 346)]),
    (None, 1, [("ftsZ", "cell division protein FtsZ", 383)]),
    (None, 1, [("secA", "protein translocase subunit SecA", 520)]),
    (
        "rplKAJL",
        1,
        [
            ("rplK", "50S ribosomal protein L11", 142),
            ("rplA", "50S ribosomal protein L1", 234),
            ("rplJ", "50S ribosomal protein L10", 165),
            ("rplL", "50S ribosomal protein L7/L12", 121),
        ],
    ),
    (None, -1, [("glnA", "glutamine synthetase", 469)]),
    (None, 1, [("katG", "catalase-peroxidase", 560)]),
    (None, -1, [("sodA", "superoxide dismutase [Mn]", 206)]),
]


def random_dna(rng: random.Random, n: int, gc: float = 0.5) -> str:
    """Random DNA of length ``n`` with the given GC fraction."""
    weights = [(1 - gc) / 2, gc / 2, gc / 2, (1 - gc) / 2]
    return "".join(rng.choices("ACGT", weights=weights, k=n))


def coding(rng: random.Random, codons: int) -> str:
    """An ORF: ATG, ``codons - 2`` sense codons, one stop codon."""
    return "ATG" + "".join(rng.choices(SENSE_CODONS, k=codons - 2)) + rng.choice(STOPS)


def revcomp(seq: str) -> str:
    """Reverse complement of a DNA string."""
    return str(Seq(seq).reverse_complement())


def build_chromosome(rng: random.Random) -> tuple[str, list[SeqFeature]]:
    """Lay out operons, promoters, repeats and spacer DNA; return sequence and features."""
    parts: list[str] = []
    features: list[SeqFeature] = []
    pos = 0

    def add(seq: str) -> int:
        nonlocal pos
        start = pos
        parts.append(seq)
        pos += len(seq)
        return start

    add(random_dna(rng, 1200))
    for index, (operon, strand, genes) in enumerate(OPERONS):
        block_start = pos
        promoter_seq = PROMOTER if strand == 1 else revcomp(PROMOTER)
        units: list[tuple[str, str, str]] = [(g, p, coding(rng, n)) for g, p, n in genes]
        if strand == 1:
            p_start = add(random_dna(rng, 40) + promoter_seq) + 40
            features.append(
                _feature(
                    "promoter",
                    p_start,
                    p_start + len(PROMOTER),
                    strand,
                    note=f"sigma70-like promoter of {operon or genes[0][0]}",
                )
            )
            add(random_dna(rng, 30))
        ordered = units if strand == 1 else list(reversed(units))
        for j, (gene, product, cds) in enumerate(ordered):
            seq = cds if strand == 1 else revcomp(cds)
            start = add(seq)
            features.append(_feature("gene", start, start + len(seq), strand, gene=gene))
            features.append(_cds_feature(start, seq, strand, gene, product, cds))
            if j < len(ordered) - 1:
                add(random_dna(rng, rng.randint(12, 60)))
        if strand == -1:
            add(random_dna(rng, 30))
            p_start = add(promoter_seq)
            features.append(
                _feature(
                    "promoter",
                    p_start,
                    p_start + len(PROMOTER),
                    strand,
                    note=f"sigma70-like promoter of {operon or genes[0][0]}",
                )
            )
        if operon:
            features.append(
                _feature(
                    "operon",
                    block_start,
                    pos,
                    strand,
                    operon=operon,
                    note="genes: " + ",".join(g for g, _, _ in genes),
                )
            )
        if index % 6 == 5:
            r_start = add(random_dna(rng, 200))
            r_start = add(REPEAT_UNIT * 3)
            features.append(
                _feature(
                    "repeat_region",
                    r_start,
                    r_start + 3 * len(REPEAT_UNIT),
                    1,
                    rpt_type="tandem",
                    note="REP-like tandem repeat",
                )
            )
        add(random_dna(rng, rng.randint(1200, 2200), gc=0.42))
    add(random_dna(rng, CHROM_LEN - pos))
    return "".join(parts), features


def _feature(kind: str, start: int, end: int, strand: int, **quals: str) -> SeqFeature:
    return SeqFeature(
        FeatureLocation(start, end, strand=strand), type=kind, qualifiers={k: [v] for k, v in quals.items()}
    )


def _cds_feature(start: int, seq: str, strand: int, gene: str, product: str, cds: str) -> SeqFeature:
    protein = str(Seq(cds).translate(to_stop=True))
    locus = "SYN_" + gene
    return _feature(
        "CDS",
        start,
        start + len(seq),
        strand,
        gene=gene,
        locus_tag=locus,
        product=product,
        codon_start="1",
        transl_table="11",
        translation=protein,
    )


def make_record(seq: str, features: list[SeqFeature], rid: str, desc: str) -> SeqRecord:
    """Wrap a sequence and features into a GenBank-ready record."""
    record = SeqRecord(Seq(seq), id=rid, name=rid, description=desc, features=features)
    record.annotations["molecule_type"] = "DNA"
    record.annotations["topology"] = "circular"
    record.annotations["organism"] = "Synthetic bacterium callbench"
    record.annotations["data_file_division"] = "SYN"
    record.annotations["date"] = "01-JUL-2026"
    return record


def write_reads(rng: random.Random, seq: str, path: Path) -> None:
    """A tiny SAM file: 300 single-end 80 bp reads, a few with a mismatch."""
    lines = ["@HD\tVN:1.6\tSO:coordinate", f"@SQ\tSN:SYN01\tLN:{len(seq)}", "@PG\tID:callbench-synth"]
    starts = sorted(rng.randint(0, len(seq) - 81) for _ in range(300))
    for i, start in enumerate(starts):
        read = seq[start : start + 80]
        flag = 16 if i % 3 == 0 else 0
        lines.append(f"read{i:04d}\t{flag}\tSYN01\t{start + 1}\t60\t80M\t*\t0\t0\t{read}\t{'I' * 80}")
    path.write_text("\n".join(lines) + "\n")


def write_variants(rng: random.Random, seq: str, path: Path) -> None:
    """A VCF with 40 SNVs and indels."""
    lines = [
        "##fileformat=VCFv4.2",
        "##source=callbench-synth",
        f"##contig=<ID=SYN01,length={len(seq)}>",
        "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO",
    ]
    for i, pos in enumerate(sorted(rng.sample(range(100, len(seq) - 100), 40))):
        ref = seq[pos - 1]
        if i % 8 == 7:
            alt, kind = ref + "A", "INS"
        else:
            alt, kind = rng.choice([b for b in "ACGT" if b != ref]), "SNV"
        lines.append(
            f"SYN01\t{pos}\tvar{i + 1}\t{ref}\t{alt}\t{rng.randint(30, 99)}\tPASS\t"
            f"TYPE={kind};DP={rng.randint(10, 80)}"
        )
    path.write_text("\n".join(lines) + "\n")


def write_wig(rng: random.Random, path: Path, name: str, scale: float) -> None:
    """A fixedStep coverage track over the chromosome, one value per 500 bp."""
    lines = [f'track type=wiggle_0 name="{name}"', "fixedStep chrom=SYN01 start=1 step=500 span=500"]
    lines += [f"{scale * (20 + 10 * rng.random()):.1f}" for _ in range(CHROM_LEN // 500)]
    path.write_text("\n".join(lines) + "\n")


def write_small_files(rng: random.Random, chrom: str, features: list[SeqFeature]) -> None:
    """Reads, variants, WIG, BED, operon table, GFF extra annotations and README."""
    write_reads(rng, chrom, OUT / "reads.sam")
    write_variants(rng, chrom, OUT / "variants.vcf")
    write_wig(rng, OUT / "sample.wig", "sample coverage", 1.0)
    write_wig(rng, OUT / "another_sample.wig", "another sample coverage", 1.6)
    guides = [
        f"SYN01\t{p}\t{p + 23}\tguide_{i + 1}\t{rng.randint(300, 1000)}\t{'+' if i % 2 else '-'}"
        for i, p in enumerate(sorted(rng.sample(range(1000, CHROM_LEN - 1000), 12)))
    ]
    (OUT / "crispr_guides.bed").write_text("\n".join(guides) + "\n")
    operon_rows = ["operon\tgenes\tstrand\tstart\tend"]
    for f in features:
        if f.type == "operon":
            strand = "+" if f.location.strand == 1 else "-"
            operon_rows.append(
                f"{f.qualifiers['operon'][0]}\t{f.qualifiers['note'][0][7:]}\t{strand}\t"
                f"{int(f.location.start) + 1}\t{int(f.location.end)}"
            )
    (OUT / "operons.tsv").write_text("\n".join(operon_rows) + "\n")
    gff = ["##gff-version 3"]
    for i, start in enumerate((15000, 42000, 88000)):
        gff.append(
            f"SYN01\tcurator\tregulatory_region\t{start}\t{start + 150}\t.\t+\t.\t"
            f"ID=reg{i + 1};Name=regulatory_site_{i + 1};note=curated binding site"
        )
    (OUT / "extra_annotations.gff3").write_text("\n".join(gff) + "\n")
    (OUT / "README.md").write_text(
        "# Synthetic bacterium callbench\n\nA seeded synthetic genome for tool-calling benchmarks.\n"
        "Chromosome SYN01 (120 kb) and plasmid pSYN1 (6 kb). Genes carry E. coli names for\n"
        "readability only; their sequences are random codons.\n"
    )


def write_fixtures(proteins: dict[str, tuple[str, str]]) -> None:
    """Bundled answers for the tools that stand in for remote services (UniProt, AlphaFold, ...)."""
    entries = {}
    for i, (gene, (product, seq)) in enumerate(sorted(proteins.items())):
        acc = f"Q9S{i:02d}{(7 * i) % 10}"  # UniProt accession shape [OPQ][0-9][A-Z0-9]{3}[0-9]
        entries[gene] = {
            "accession": acc,
            "gene": gene,
            "protein_name": product,
            "organism": "Escherichia coli",
            "length": len(seq),
            "sequence": seq,
            "alphafold_id": f"AF-{acc}-F1",
            "pdb_ids": [f"{i % 9 + 1}{gene[:3].upper()}"] if i % 3 == 0 else [],
            "interpro": [
                {
                    "id": f"IPR{100000 + 37 * i:06d}",
                    "name": f"{product} domain",
                    "start": 5,
                    "end": max(6, len(seq) - 10),
                }
            ],
        }
    (OUT / "protein_fixtures.json").write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n")


def main(out: Path = OUT) -> None:
    """Generate every file under ``out`` (default: the package's data folder)."""
    global OUT
    OUT = out
    rng = random.Random(SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    chrom, features = build_chromosome(rng)
    plasmid_seq = random_dna(rng, 900) + coding(rng, 287) + random_dna(rng, PLASMID_LEN - 900 - 861)
    plasmid_feats = [
        _feature("gene", 900, 1761, 1, gene="bla"),
        _cds_feature(900, plasmid_seq[900:1761], 1, "bla", "beta-lactamase TEM", plasmid_seq[900:1761]),
    ]
    from Bio import SeqIO

    records = [
        make_record(chrom, features, "SYN01", "Synthetic bacterium callbench chromosome"),
        make_record(plasmid_seq, plasmid_feats, "pSYN1", "Synthetic bacterium callbench plasmid"),
    ]
    SeqIO.write(records, OUT / "syn_genome.gbk", "genbank")
    SeqIO.write(records, OUT / "syn_genome.fasta", "fasta")
    proteins = {
        f.qualifiers["gene"][0]: (f.qualifiers["product"][0], f.qualifiers["translation"][0])
        for r in records
        for f in r.features
        if f.type == "CDS"
    }
    write_small_files(rng, chrom, features)
    write_fixtures(proteins)
    print(f"wrote {sorted(p.name for p in OUT.iterdir())} to {OUT.name}/")


if __name__ == "__main__":
    import sys

    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
