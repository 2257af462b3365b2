"""Fixtures of irspec-online's tests: a real local Spark, started once per test session when a test asks
for it (pyspark missing: those tests skip, which CI's IRSPEC_STRICT_SKIPS turns into a failure)."""

from __future__ import annotations

import os
import sys
import warnings

import pytest


@pytest.fixture(scope="session")
def spark():
    """A local Spark with two cores, two shuffle partitions, no UI, UTC session time."""
    pytest.importorskip("pyspark", reason="the Spark tests need pyspark: pip install 'irspec-online[spark]'")
    from pyspark.sql import SparkSession

    # The workers must run this interpreter, which has irspec and the plugin installed.
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark 4.x's note on pandas 3
        session = (
            SparkSession.builder.master("local[2]")
            .appName("irspec-online tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "1g")
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
