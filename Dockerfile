# upgrade-guard as a one-shot container: non-root, no shell needed at run time, and nothing
# written to the root filesystem, so it runs with readOnlyRootFilesystem: true.
# tools/image/build.sh builds the same image without Docker (the same requirements file and the
# same pip install commands; tests/packaging/test_image.py holds them together).
FROM python:3.11.14-slim-bookworm AS build
WORKDIR /src
COPY requirements/image.txt requirements/image.txt
RUN pip download --no-cache-dir --only-binary=:all: --no-deps --require-hashes \
      --dest /wheels -r requirements/image.txt
COPY pyproject.toml README.md ./
COPY hook ./hook
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11.14-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY requirements/image.txt /requirements/image.txt
# Set, pip writes bytecode checked by the source's hash (PEP 552), not by its mtime, which an
# image's layer may keep to the second only: stale bytecode is compiled again on every run of
# a read-only root filesystem. An ARG, so it is no part of the image's environment.
ARG SOURCE_DATE_EPOCH=0
# pip, setuptools and wheel leave the image: nothing installs anything at run time.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels --no-deps --require-hashes -r /requirements/image.txt \
 && pip install --no-cache-dir --no-index --no-deps /wheels/upgrade_guard-*.whl \
 && pip uninstall --yes pip setuptools wheel \
 && rm -r /requirements
USER 65532:65532
ENTRYPOINT ["upgrade-guard"]
CMD ["--help"]
