"""Spark's classes archived for its JVM once Spark is installed, before the suite runs: what pip does for a
package's bytecode, done for the JVM of the tests' Spark (Java's application class-data sharing, AppCDS).

A JVM that starts Spark loads and verifies some 15,000 classes from Spark's jars, and does it again in
every Spark the suite starts (a session a test module, a command run in a subprocess, each page of the
documentation that runs Spark): a session's start was ~6 s of wall time and a first evaluation ~6 s more
on this project's 2-core machine, CPU spent before Spark runs its first job (issue 35). A JVM started
with ``-XX:ArchiveClassesAtExit`` writes the classes it loaded, parsed and verified, to a file that a later
JVM on the same class path maps at start (``-XX:SharedArchiveFile``): the same bytecode, run the same way,
loaded in a fraction of the time (a session's start 6 s → 3 s, a first evaluation 6 s → 4 s).

This script starts a local Spark as the tests start one, runs an evaluation and an aggregate (the classes
the tests' jobs load; any other loads as before), and writes the archive as the JVM stops. It prints the
archive's path, named by what the archive depends on (the ``java`` that runs Spark, pyspark's version and
jars): an archive of another Java or Spark is never read, and one already made is not made again.
scripts/test runs it beside the lint and the site's build and exports the path as
``IRSPEC_SPARK_CLASSES``; ``conftest.py`` hands it to every JVM the tests start. Without it, Spark starts
as before.

    python tests/warm_spark.py .cache/spark-classes
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

# The options conftest.py gives every test's JVM: an archive is read only by a JVM of the same options
# that matter to it (its garbage collector, its class path), so it is made under the same ones.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1"

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
"""Java's notes on archiving (the classes it leaves out: those of signed jars, those made at run time) and
on an archive it cannot map (another class path): Spark runs either way, and says nothing of it."""


def archive_name() -> str | None:
    """The archive's file name for this machine's Java and pyspark; ``None`` without either."""
    try:
        import pyspark
    except ImportError:
        return None
    home = os.environ.get("JAVA_HOME")
    java = (home and shutil.which("java", path=os.path.join(home, "bin"))) or shutil.which("java")
    if java is None:
        return None
    version = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted(p.name for p in jars.glob("*.jar")) if jars.is_dir() else []
    key = "\n".join([os.path.realpath(java), version, pyspark.__version__, *listing, JVM_OPTIONS])
    return f"spark-{pyspark.__version__}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def _archive(path: Path) -> None:
    """Start Spark with the archive to be written at ``path`` as its JVM stops."""
    os.environ["PYSPARK_SUBMIT_ARGS"] = (
        f"--driver-java-options '{JVM_OPTIONS} {QUIET} -XX:ArchiveClassesAtExit={path}' pyspark-shell"
    )
    import warnings

    from randomdata import random_case

    from irspec.evaluation import spark as irs

    session = irs.session(
        "local[2]",
        {
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
        },
        app_name="irspec-warm-spark",
    )
    session.sparkContext.setLogLevel("ERROR")
    qrels, run = random_case(3)
    qrels_frame = session.createDataFrame(
        [(q, d, label) for q, docs in qrels.items() for d, label in docs.items()],
        "query_id string, doc_id string, relevance long",
    )
    run_frame = session.createDataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        "query_id string, doc_id string, score double",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case's coverage warnings: nothing to say here
        per_query = irs.evaluate(qrels_frame, run_frame, "all_trec")
        irs.aggregate(per_query)
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    session.stop()
    # The JVM writes the archive as it exits, which it does when its input closes (pyspark closes it as
    # this process exits, without waiting): closed here, and waited for.
    gateway.shutdown()
    gateway.proc.stdin.close()
    gateway.proc.wait()


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python tests/warm_spark.py FOLDER", file=sys.stderr)
        return 2
    name = archive_name()
    if name is None:
        print("warm_spark: no pyspark or no java: nothing archived", file=sys.stderr)
        return 0
    folder = Path(sys.argv[1]).resolve()
    archive = folder / name
    if not archive.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        # another Java's or Spark's archive, never read again, and what an archiving cut short left
        for old in [*folder.glob("*.jsa"), *folder.glob("*.partial")]:
            old.unlink()
        partial = folder / f"{name}.{os.getpid()}.partial"
        start = time.monotonic()
        # in a process of its own, whose Spark takes this script's options for its JVM
        done = subprocess.run(
            [sys.executable, __file__, "--archive", str(partial)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0 or not partial.is_file():
            partial.unlink(missing_ok=True)
            print(done.stderr[-3000:], file=sys.stderr)
            print(
                "warm_spark: Spark's classes could not be archived: the tests start Spark without",
                file=sys.stderr,
            )
            return 1
        partial.replace(archive)  # whole or not at all: a JVM never maps half an archive
        print(f"warm_spark: Spark's classes archived in {time.monotonic() - start:.0f} s", file=sys.stderr)
    print(archive)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--archive":
        _archive(Path(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
