# upgrade-guard as a one-shot container: non-root, no shell needed at run time, and nothing
# written to the root filesystem, so it runs with readOnlyRootFilesystem: true.
FROM python:3.11.14-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY hook ./hook
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
 && pip wheel --no-cache-dir --wheel-dir /wheels "$(ls /wheels/upgrade_guard-*.whl)"

FROM python:3.11.14-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1
COPY --from=build /wheels /wheels
RUN pip install --no-index --find-links /wheels /wheels/upgrade_guard-*.whl \
 && rm -rf /wheels
USER 65532:65532
ENTRYPOINT ["upgrade-guard"]
CMD ["--help"]
