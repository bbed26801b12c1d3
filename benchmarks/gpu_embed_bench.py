"""Embedding throughput on a GPU: lore's PyTorch embedder (`SentenceTransformerEmbedder`, what
`auto` picks when `LORE_EMBEDDING__DEVICE` names a GPU) in fp32 and bf16, by batch size, on the
chunks of the Python documentation, with how close each is to the CPU's fp32 vectors.

Two steps, because the GPU machine this was measured on reaches no network and takes at most
64 MiB of files along:

    # here: chunks through lore's extractor and chunker, the CPU's fp32 vectors, and the model
    # with its weights rounded to fp16 (45 MB instead of 91 MB), into DIR
    .venv/bin/python benchmarks/gpu_embed_bench.py prepare DIR [--pages 120]
    # on the GPU machine (PyTorch and sentence-transformers installed; lore's other
    # dependencies need not be): measures and prints a table
    python3 benchmarks/gpu_embed_bench.py run DIR [--device cuda]

The fp16 rounding of the weights is in every figure's cosine: the fp32 row's cosine is that
rounding alone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prepare(out: Path, pages: int) -> None:
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from _common import default_corpus, html_files, page_source  # noqa: PLC0415
    from safetensors.torch import load_file, save_file  # noqa: PLC0415

    from ingest import ChunkingOptions, IngestError, SentenceTransformerEmbedder  # noqa: PLC0415
    from ingest import prepare as prepare_page  # noqa: PLC0415
    from ingest.embed import bundled_model_path  # noqa: PLC0415

    embedder = SentenceTransformerEmbedder(precision="fp32")
    corpus = default_corpus()
    texts: list[str] = []
    for path in html_files(corpus, pages):
        try:
            prepared = prepare_page(
                page_source("gpu", corpus, path), ChunkingOptions(), embedder.count_tokens
            )
        except IngestError:
            continue
        texts += [c.search_text for c in prepared.chunks]
    out.mkdir(parents=True, exist_ok=True)
    (out / "texts.json").write_text(json.dumps(texts))
    np.save(out / "cpu-fp32.npy", np.asarray(embedder.embed(texts), dtype=np.float32))
    model = out / "model"
    shutil.rmtree(model, ignore_errors=True)
    shutil.copytree(
        bundled_model_path(), model, ignore=shutil.ignore_patterns("*.safetensors", "README.md")
    )
    source = bundled_model_path() / "model.safetensors"
    half = {k: v.to(torch.float16) for k, v in load_file(str(source)).items()}
    save_file(half, str(model / "model.safetensors"), metadata={"format": "pt"})
    print(f"{len(texts)} chunks from {pages} pages of {corpus} into {out}")


def _embed_module() -> types.ModuleType:
    """`ingest.embed` without `ingest/__init__`, which imports lore's extractors and store (not
    installed on the GPU machine)."""
    package = types.ModuleType("ingest")
    package.__path__ = [str(ROOT / "ingest")]
    sys.modules.setdefault("ingest", package)
    return importlib.import_module("ingest.embed")


def run(data: Path, device: str, batch_sizes: list[int], repeats: int) -> None:
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    embed = _embed_module()
    texts = json.loads((data / "texts.json").read_text())
    reference = np.load(data / "cpu-fp32.npy")
    name = torch.cuda.get_device_name() if device.startswith("cuda") else device
    print(f"{len(texts)} chunks; device {name}; torch {torch.__version__}\n")
    print("| precision | batch | chunks/s (best of runs) | cosine to CPU fp32: mean | min |")
    print("|---|---:|---:|---:|---:|")
    for precision in ("fp32", "bf16"):
        embedder = embed.SentenceTransformerEmbedder(data / "model", device, precision)
        embedder._model.float()  # the weights travelled in fp16; lore's own model is fp32
        for batch in batch_sizes:
            embedder.embed(texts[: batch * 2], batch_size=batch)  # warm-up: kernels, allocator
            rates = []
            for _ in range(repeats):
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
                start = time.perf_counter()
                lists = embedder.embed(texts, batch_size=batch)
                rates.append(len(texts) / (time.perf_counter() - start))
                vectors = np.asarray(lists, dtype=np.float32)
            cosine = (vectors * reference).sum(axis=1)
            print(
                f"| {precision} | {batch} | {max(rates):,.0f} | {cosine.mean():.5f} "
                f"| {cosine.min():.5f} |"
            )
        if precision == "fp32":  # the library's own encode, lore's lists left out
            for batch in batch_sizes:
                model = embedder._model
                model.encode(texts[: batch * 2], batch_size=batch)
                rates = []
                for _ in range(repeats):
                    if device.startswith("cuda"):
                        torch.cuda.synchronize()
                    start = time.perf_counter()
                    model.encode(texts, batch_size=batch, normalize_embeddings=True)
                    rates.append(len(texts) / (time.perf_counter() - start))
                print(f"| fp32, sentence-transformers encode | {batch} | {max(rates):,.0f} | | |")
        if precision == "fp32":
            breakdown(embedder, texts, max(batch_sizes), device)
        del embedder
        if device.startswith("cuda"):
            torch.cuda.empty_cache()


def breakdown(embedder: object, texts: list[str], batch: int, device: str) -> None:
    """Where a pass's time goes at one batch size: tokenizing (transformers' tokenizer call, as
    lore did before, and the Rust tokenizer lore calls now), the model on the device (inputs
    already there), and turning the vectors into Python lists."""
    import torch  # noqa: PLC0415

    model = embedder._model  # type: ignore[attr-defined]
    ordered = sorted(texts, key=len)
    batches = [ordered[i : i + batch] for i in range(0, len(ordered), batch)]
    start = time.perf_counter()
    for b in batches:
        model.tokenizer(
            b, padding=True, truncation=True, max_length=model.max_seq_length, return_tensors="pt"
        )
    transformers_call = time.perf_counter() - start
    start = time.perf_counter()
    token_arrays = _embed_module().token_arrays
    features = [
        {
            name: torch.from_numpy(array)
            for name, array in token_arrays(
                embedder._batcher.encode_batch(b),  # type: ignore[attr-defined]
                embedder._features,  # type: ignore[attr-defined]
            ).items()
        }
        for b in batches
    ]
    rust = time.perf_counter() - start
    features = [{k: v.to(device) for k, v in f.items()} for f in features]
    torch.cuda.synchronize() if device.startswith("cuda") else None
    start = time.perf_counter()
    with torch.inference_mode():
        pooled = [model(f)["sentence_embedding"] for f in features]
    torch.cuda.synchronize() if device.startswith("cuda") else None
    forward = time.perf_counter() - start
    arrays = [torch.nn.functional.normalize(p, dim=1).cpu().numpy() for p in pooled]
    start = time.perf_counter()
    for array in arrays:
        array.tolist()
    lists = time.perf_counter() - start
    print(
        f"\nfp32, batch {batch}, {len(texts)} chunks: tokenizing {transformers_call:.2f} s "
        f"(transformers' call) or {rust:.2f} s (the Rust tokenizer, lore's), the model "
        f"{forward:.2f} s ({len(texts) / forward:,.0f} chunks/s), Python lists {lists:.2f} s\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    first = steps.add_parser("prepare")
    first.add_argument("dir", type=Path)
    first.add_argument("--pages", type=int, default=120)
    second = steps.add_parser("run")
    second.add_argument("dir", type=Path)
    second.add_argument("--device", default="cuda")
    second.add_argument("--batch-sizes", default="32,64,128,256,512")
    second.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.dir, args.pages)
    else:
        sizes = [int(b) for b in args.batch_sizes.split(",")]
        run(args.dir, args.device, sizes, args.repeats)


if __name__ == "__main__":
    main()
