"""The exceptions irspec raises, and the pieces of their messages.

Every error a user can cause is an :class:`IrspecError`, so callers (and the CLI, which prints them
without a traceback and exits 2) need catch only one class.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "EvaluationError",
    "InputError",
    "InputTypeError",
    "IrspecError",
    "IrspecWarning",
    "ParameterError",
    "PlanError",
    "RegistryError",
    "SpecError",
    "SpecSyntaxError",
    "UnknownMetricError",
    "bad_id",
    "encodable",
    "excerpt",
    "label_out_of_range",
    "not_loaded",
    "or_list",
    "quote",
    "shorten",
    "suggest",
    "surrogate_text",
]


class IrspecError(Exception):
    """Base class of every error irspec raises on bad input or bad usage."""


class SpecError(IrspecError):
    """A metric spec that cannot be parsed or bound."""


class SpecSyntaxError(SpecError):
    """A metric spec that does not follow the grammar.

    ``position`` is the 0-based character offset of the problem in ``text``; for truncated input it is
    ``len(text)``, one past the last character. The message shows the text with a caret under that
    position: a long text only around the position (``...`` where it is cut), and line breaks and tabs
    as spaces, so that the excerpt is one line and the caret stands under the problem.
    """

    def __init__(self, text: str, position: int, message: str) -> None:
        self.text = text
        self.position = position
        self.reason = message
        shown, caret = excerpt(text, position)
        super().__init__(f"{message} at column {position + 1}\n  {shown}\n  {' ' * caret}^")

    @property
    def column(self) -> int:
        """1-based column of the problem (``position + 1``)."""
        return self.position + 1


class UnknownMetricError(SpecError):
    """A metric name that no registered metric or alias answers to."""

    def __init__(self, name: str, suggestions: Sequence[str] = (), plugin: str | None = None) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        self.plugin = plugin
        """The distribution of one of irspec's shipped plugins that registers ``name``, when that plugin
        is not loaded (``irspec-online`` for ``CTR``); ``None`` otherwise."""
        if plugin is not None:
            hint = f": {not_loaded(plugin)}"
        else:
            hint = f"; did you mean {or_list(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown metric {shorten(name)!r}{hint}")


def not_loaded(plugin: str) -> str:
    """Why a name of one of irspec's shipped plugins (``plugins/``) is unknown: ``plugin`` is not loaded,
    and how to load it (a metric's name, a plan's key)."""
    return (
        f"it comes from the plugin {plugin}, which is not loaded (install it from irspec's source, "
        f"pip install -e plugins/{plugin}; or IRSPEC_LOAD_PLUGINS leaves it out)"
    )


class ParameterError(SpecError):
    """A metric parameter that is unknown, of the wrong type or out of range."""

    def __init__(self, metric: str, parameter: str | None, message: str) -> None:
        self.metric = metric
        self.parameter = parameter
        where = f"{metric}: parameter {parameter!r}" if parameter else metric
        super().__init__(f"{where}: {message}")


class RegistryError(IrspecError):
    """A plugin that fails to load or registers a name that is already taken."""


class InputError(IrspecError):
    """Malformed qrels, run or other input data.

    Carries the ``source`` (file name, ``<stdin>`` or ``<dict>``), the 1-based ``line`` where known and
    the query id where known, so the message says where to look. In a table (a Parquet file) ``line``
    is a row and ``unit`` says so: ``run.parquet: row 7: ...`` rather than ``run.txt:7: ...``.
    """

    def __init__(
        self,
        message: str,
        source: str | None = None,
        line: int | None = None,
        query: str | None = None,
        *,
        unit: str = "line",
    ) -> None:
        self.source = source
        self.line = line
        self.query = query
        self.reason = message
        where = ""
        if line is not None and (unit != "line" or source is None):
            where = (f"{source}: " if source is not None else "") + f"{unit} {line}: "
        elif source is not None:
            where = source + (f":{line}" if line is not None else "") + ": "
        q = f"query {quote(query)}: " if query is not None else ""
        super().__init__(f"{where}{q}{message}")


class InputTypeError(InputError, TypeError):
    """Input of a type that cannot be read where it stands: a run given as a number, a query id that is
    not a string where one must be (the pytrec_eval drop-in's keys).

    An :class:`InputError` (located as any) and a :class:`TypeError`, Python's exception for an argument
    of the wrong type, which pytrec_eval raises for the same inputs: code catching either catches it.
    """


class EvaluationError(IrspecError):
    """An evaluation that cannot be carried out as asked (for example a missing query under
    ``missing_queries="error"``, or a metric that needs an option that was not given)."""


class PlanError(IrspecError):
    """An evaluation plan with one or more problems; ``problems`` lists them all.

    The message is the problem itself when there is one that names the plan file, else a count and
    the problems, one a line.
    """

    def __init__(self, source: str, problems: Iterable[str]) -> None:
        self.source = source
        self.problems = list(problems)
        n = len(self.problems)
        if n == 1 and self.problems[0].startswith(source):
            super().__init__(self.problems[0])
            return
        body = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{source}: {n} problem{'s' if n != 1 else ''}\n{body}")


EXCERPT_WIDTH = 76
"""How many characters of a spec an error message shows (the excerpt around the problem)."""


def excerpt(text: str, position: int, width: int = EXCERPT_WIDTH) -> tuple[str, int]:
    """``(line, caret)``: ``text`` on one line, cut to about ``width`` characters around ``position``
    with ``...`` where it is cut, and the column of ``position`` in that line."""
    flat = text.translate({ord(c): " " for c in "\n\r\t\f\v"})
    if len(flat) <= width:
        return flat, position
    start = max(0, min(position - width * 2 // 3, len(flat) - width))
    end = start + width
    head = "..." if start > 0 else ""
    return head + flat[start:end] + ("..." if end < len(flat) else ""), position - start + len(head)


def shorten(text: str, width: int = 40) -> str:
    """``text`` cut to ``width`` characters with ``...`` (a long name or spec echoed in a message)."""
    return text if len(text) <= width else text[: width - 3] + "..."


VALUE_WIDTH = 80
"""How many characters of a value read from the input (a query id, a docno, a field) a message quotes:
the longest real ids whole (MS MARCO v2.1's docnos have 44), a line of binary garbage cut short."""


def quote(value: object, width: int = VALUE_WIDTH) -> str:
    """``value`` as a message quotes it: its ``repr``, a long text cut to ``width`` characters with
    ``...`` first (so a value the input got wrong, however long, makes a short message)."""
    return repr(shorten(value, width)) if isinstance(value, str) else shorten(repr(value), width)


def label_out_of_range(value: object) -> str:
    """The message of a label that is an integer beyond the 64 bits labels are held in (qrels' labels,
    a plugin's judgments)."""
    return f"label {quote(value)} is out of range (labels are 64-bit integers, {-(2**63)} to {2**63 - 1})"


class IrspecWarning(UserWarning):
    """Something a user should know about an evaluation that still gave values: queries missing from a
    run, a run without lines, a relevance level at which nothing is relevant, two runs with one name.

    The same text is in the result's ``warnings`` (and in JSON and HTML reports); issuing it through
    :mod:`warnings` too means a script or notebook sees it without asking, and can turn it into an
    error (``warnings.simplefilter("error", irspec.IrspecWarning)``).
    """


def suggest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``word`` (case-insensitive), for "did you mean" hints."""
    import difflib

    by_lower: dict[str, str] = {}
    for c in candidates:
        by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=n, cutoff=0.6)
    return [by_lower[c] for c in close]


def or_list(items: Sequence[str]) -> str:
    """``items`` quoted and joined for a message: ``'a'``, ``'a' or 'b'``, ``'a', 'b' or 'c'``."""
    quoted = [repr(i) for i in items]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def encodable(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8 (it holds no lone surrogate, as bytes decoded with
    ``errors="surrogateescape"`` leave): ASCII at once by a flag of the string, else by encoding it."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def bad_id(what: str, value: object) -> str:
    """Why ``value`` cannot be one of ``what`` (``docnos``, ``query ids``): not a string or an integer,
    or a string that no UTF-8 text can hold."""
    if isinstance(value, str):
        return f"{what[:-1]} {quote(value)} is not valid text: {surrogate_text(value)}"
    return f"{what} must be strings (or integers), got {quote(value)}"


def surrogate_text(value: str) -> str:
    """What is wrong with a string UTF-8 cannot encode, for a message: its first lone surrogate."""
    code = next((ord(c) for c in value if 0xD800 <= ord(c) <= 0xDFFF), None)
    where = f" (U+{code:04X})" if code is not None else ""
    return f"it holds a lone surrogate{where}, which UTF-8 cannot encode (bytes decoded with errors='surrogateescape'?)"
