"""What irspec's functions do first in the Python workers of a Spark (``irspec.evaluation.spark``'s, a
plugin's), and a look at those workers for tests. Light: :mod:`irspec.plugin_api` names
:func:`settle_spark_worker`, and the documentation builds without pyspark, which loads on a call."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

__all__ = ["settle_spark_worker", "spark_workers"]

_settled = False


def settle_spark_worker() -> None:
    """Called first by every function irspec (or a plugin) hands Spark to run in its Python workers.

    pyspark's worker process runs a full garbage collection after every task. Without this, each one
    walks every object the process holds: pyspark's, irspec's and numpy's, polars' and pyarrow's modules,
    about 110,000 objects, 30-50 ms a task. That was about a third of the Python workers' CPU in irspec's
    Spark tests (issue 35). The first call in a task moves those objects to the collector's permanent
    generation (:func:`gc.freeze`): they live as long as the process anyway, and later collections walk
    only what the tasks make. Later calls, and any call outside a Spark task (on the driver, or a worker
    function tried locally, or without pyspark), do nothing: the caller's own process is not the
    library's to change.
    """
    global _settled
    if _settled:
        return
    try:
        from pyspark import TaskContext
    except ImportError:  # no pyspark, no Spark task
        return
    if TaskContext.get() is None:
        return
    _settled = True
    gc.freeze()


def spark_workers(spark: Any, tasks: int = 8) -> list[dict[str, Any]]:
    """What each Python worker a Spark job of ``tasks`` tasks reaches says about itself, a dict per task:
    ``pid``, its process id; ``irspec``, whether it has loaded irspec; ``settled``, whether
    :func:`settle_spark_worker` settled it; ``frozen``, :func:`gc.get_freeze_count`.

    ``spark`` is a SparkSession. For a plugin's tests: after its Spark functions ran, a worker that loaded
    irspec and is not settled ran one that does not call ``settle_spark_worker`` first::

        assert all(w["settled"] for w in spark_workers(spark) if w["irspec"])

    The probe is defined inside the call, so Spark's pickle sends it by value: it loads nothing of irspec
    into a worker."""
    import pyarrow as pa

    def probe(batches: Iterator[Any]) -> Iterator[Any]:
        import gc
        import os
        import sys

        module = sys.modules.get("irspec.evaluation.workers")  # a worker that never loaded it: None
        for _ in batches:
            yield pa.RecordBatch.from_pydict(
                {
                    "pid": [os.getpid()],
                    "irspec": ["irspec" in sys.modules],
                    "settled": [bool(module is not None and module._settled)],
                    "frozen": [gc.get_freeze_count()],
                }
            )

    frame = spark.range(0, tasks, numPartitions=tasks)
    rows = frame.mapInArrow(probe, "pid long, irspec boolean, settled boolean, frozen long").collect()
    return [row.asDict() for row in rows]
