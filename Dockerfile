# lore API image: embedded Qdrant Edge engine by default, a Qdrant server with LORE_QDRANT__URL;
# catalog in SQLite or PostgreSQL (LORE_DATABASE_URL).
# Not built in this project's CI: its machines have no Docker engine.
FROM python:3.11-slim
WORKDIR /app
# Programs some formats need: LibreOffice (DOC, ODT, RTF, XLS, PPT), tesseract (OCR), ffmpeg.
RUN apt-get update && apt-get install -y --no-install-recommends \
        libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui \
        tesseract-ocr tesseract-ocr-eng ffmpeg \
    && rm -rf /var/lib/apt/lists/*
# Install torch first so sentence-transformers does not pull a different build. Point
# TORCH_PIP_ARGS at a CPU-only wheel index to keep the image small.
ARG TORCH_PIP_ARGS=""
RUN pip install --no-cache-dir torch==2.13.0 ${TORCH_PIP_ARGS}
COPY pyproject.toml README.md ./
COPY crawl crawl
COPY ingest ingest
COPY spa_phases spa_phases
COPY retrieval retrieval
COPY api api
RUN pip install --no-cache-dir '.[postgres]'
ENV LORE_DATA_DIR=/data LORE_HOST=0.0.0.0 HF_HUB_OFFLINE=1
VOLUME /data
EXPOSE 8741
CMD ["lore", "serve"]
