# The lore image, for `lore serve` (API) and `lore worker` (the worker tier) alike: embedded
# Qdrant Edge engine by default, a Qdrant server with LORE_QDRANT__URL; catalog in SQLite or
# PostgreSQL (LORE_DATABASE_URL); RabbitMQ for the workers (LORE_QUEUE__URL).
# Not built in this project's CI (its machines have no Docker engine); tests/test_worker_tier.py
# starts the same processes on 127.0.0.1.
FROM python:3.11-slim
WORKDIR /app
# Programs some formats need: LibreOffice (DOC, ODT, RTF, XLS, PPT), tesseract (OCR), ffmpeg,
# and Debian's Chromium for rendered crawls and SPA captures (Playwright drives it; nothing is
# downloaded at run time).
RUN apt-get update && apt-get install -y --no-install-recommends \
        libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui \
        tesseract-ocr tesseract-ocr-eng ffmpeg chromium \
    && rm -rf /var/lib/apt/lists/*
# torch first, the CPU build (PyPI's Linux wheel is the CUDA one: gigabytes of GPU libraries),
# so sentence-transformers does not pull a different build.
ARG TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
RUN pip install --no-cache-dir torch==2.13.0 ${TORCH_PIP_ARGS}
COPY pyproject.toml README.md ./
COPY crawl crawl
COPY ingest ingest
COPY spa_phases spa_phases
COPY retrieval retrieval
COPY api api
RUN pip install --no-cache-dir '.[postgres,redis,queue]'
RUN useradd --system --uid 10001 --home-dir /data lore && mkdir -p /data && chown lore /data
USER lore
ENV LORE_DATA_DIR=/data LORE_HOST=0.0.0.0 HF_HUB_OFFLINE=1
VOLUME /data
EXPOSE 8741
CMD ["lore", "serve"]
