# llmisvc-router worker and watcher image.
# Build: docker build -t llmisvc-router:0.1.0 .
# The lock file is honoured (every uv sync is frozen); the runtime stage holds only the virtualenv and runs as
# a non-root user, with nothing written outside /tmp, so readOnlyRootFilesystem works.

FROM python:3.11-slim AS build
ENV UV_PYTHON_DOWNLOADS=never UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy
RUN pip install --no-cache-dir uv==0.13.8
WORKDIR /app
COPY pyproject.toml uv.lock README.md LICENSE NOTICE ./
RUN uv sync --frozen --no-dev --no-install-project
COPY llmisvc_core/ llmisvc_core/
COPY activities/ activities/
COPY llmisvc_cache/ llmisvc_cache/
COPY llmisvc_kube/ llmisvc_kube/
COPY workflows/ workflows/
COPY worker/ worker/
COPY llmisvc_runtime/ llmisvc_runtime/
COPY llmisvc_watcher/ llmisvc_watcher/
COPY llmisvc_router/ llmisvc_router/
RUN uv sync --frozen --no-dev --no-editable

FROM python:3.11-slim
ENV PATH=/app/.venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=build /app/.venv /app/.venv
# The licence and the third-party notice, beside the copies in the installed package's .dist-info/licenses/.
COPY LICENSE NOTICE /app/
USER 65532:65532
ENTRYPOINT ["/app/.venv/bin/llmisvc-router"]
CMD ["worker"]
