"""reference/cli.md: every subcommand and option of `irspec`, from its argument parser, at build time.

The parser is the one `irspec` runs (``build_parser`` of the module behind the ``irspec`` console
script), so a subcommand or flag added later appears here without anyone editing a page.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).parent))
from _text import anchor, cell  # noqa: E402

PAGE = "reference/cli.md"


def the_parser() -> argparse.ArgumentParser:
    """The parser of the ``irspec`` console script's module."""
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="irspec")
    module = importlib.import_module(script.value.partition(":")[0])
    return module.build_parser()


def usage(parser: argparse.ArgumentParser) -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps the usage at the terminal's width: fixed here
    return parser.format_usage().strip().removeprefix("usage: ")


def argument_rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            takes_value = action.nargs != 0
            metavar = formatter._metavar_formatter(action, action.dest.upper())(1)[0] if takes_value else ""
            name = ", ".join(f"`{o}{' ' + metavar if metavar else ''}`" for o in action.option_strings)
        else:
            name = f"`{formatter._metavar_formatter(action, action.dest)(1)[0]}`"
            if action.nargs in ("+", "*"):
                name += " (one or more)" if action.nargs == "+" else " (any number)"
            elif action.nargs == "?":
                name += " (optional)"
        text = formatter._expand_help(action) if action.help else ""
        extra = []
        if action.choices is not None and not isinstance(action.choices, range):
            extra.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
        if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
            extra.append("repeatable")
        if extra:
            text += f" ({'; '.join(extra)})"
        rows.append(f"| {name} | {cell(text)} |")
    return rows


def main() -> None:
    parser = the_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {c.dest: c.help for c in sub._choices_actions}
    out = [
        "# Command line",
        "",
        "Every subcommand and option of `irspec`, generated from its argument parser when this site was built: "
        "what `irspec COMMAND --help` prints, as tables. "
        "Errors are one line, `irspec: error: ...`, with exit code 2; success is exit code 0. "
        "How-to guides show the options at work: [trec_eval's command line](../how-to/command-line.md), "
        "[plans](../how-to/plans.md), [power](../how-to/power.md).",
        "",
        "```text",
        usage(parser),
        "```",
        "",
        (parser.description or "") + "",
        "",
        "| subcommand | what it does |",
        "|---|---|",
    ]
    out += [f"| [`irspec {name}`](#{anchor('irspec-' + name)}) | {cell(helps.get(name, ''))} |" for name in sub.choices]
    out += ["", "| option | |", "|---|---|", *argument_rows(parser), ""]
    for name, command in sub.choices.items():
        out += [f"## `irspec {name}` {{#{anchor('irspec-' + name)}}}", "", f"*{helps.get(name, '')}*", ""]
        if command.description:
            out += [command.description, ""]
        out += ["```text", usage(command), "```", "", "| argument | |", "|---|---|", *argument_rows(command), ""]
    with mkdocs_gen_files.open(PAGE, "w") as f:
        f.write("\n".join(out))


main()
