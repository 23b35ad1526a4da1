"""The lab (docs/lab.md): a strategy of one's own scaffolded (`new`), graded on one page
(`grade`, `grade --all`), and the allocation traces of real programs it is graded on
(`traces`). The rest of the tool reaches it through add_commands().

Modules, bottom up: traces (the shipped traces), correct (a strategy's tests by kind), grade
(the sweep and the scores), page (the page, its figure, the leaderboard), gradecmd (`grade`),
scaffold (`new`)."""
from . import gradecmd, scaffold, traces


def add_commands(sub):
    """The lab's subcommands, in --help's order."""
    scaffold.add_parser(sub)
    gradecmd.add_parser(sub)
    traces.add_parser(sub)
