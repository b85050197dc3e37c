"""What a test needs that a build script makes: a skip without it, except under CI=true, where
tools/test.sh builds everything first and its absence fails the run. Imported where
tools/testenv is on the path (the conftest.py of tests/cluster and tests/packaging)."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

from testenv import Image, built_guard_image

IN_CI = os.environ.get("CI", "").lower() == "true"


def unavailable(message: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


def guard_image() -> Image:
    """The image tools/image/build.sh built from this checkout as it is now."""
    image = built_guard_image()
    if image is None:
        unavailable("the image is not built for this checkout: run tools/image/build.sh")
    return image
