"""The reliability report: bench/results/reliability.{json,md}, one section per soak test.

Every long-run test (make soak) calls record(name, figures, summary) when it finishes. The
JSON file maps section names to figures; each section also keeps its Markdown summary
("summary_md"), and the Markdown file is rebuilt from all sections in name order, so tests can
run in any order, one at a time or all together, and a rerun replaces only its own section.

The report path comes from LITEDAV_RELIABILITY_REPORT (make soak sets it); without it record()
only prints the figures, so a test run by hand does not touch the committed report.
"""
import datetime
import json
import os
import subprocess

ENV = "LITEDAV_RELIABILITY_REPORT"


def load(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except FileNotFoundError:
        return {}
    if not isinstance(report, dict):
        raise ValueError(f"{path}: expected a JSON object of sections, got {type(report).__name__}")
    return report


def markdown(report):
    lines = ["# Reliability", "",
             "Written by `make soak` (tests/reliability_report.py); one section per long-run test.", ""]
    # which checkout each figure was measured on, at a glance: a rerun replaces one section only,
    # so the sections can come from different commits
    lines += ["| section | at | recorded |", "|---|---|---|"]
    for name in sorted(report):
        section = report[name]
        lines.append(f"| {section.get('title', name)} | {section.get('commit') or '?'} "
                     f"| {section.get('recorded', '?')} |")
    lines.append("")
    for name in sorted(report):
        section = report[name]
        lines += [f"## {section.get('title', name)}", ""]
        if section.get("test"):
            at = f" at {section['commit']}" if section.get("commit") else ""
            lines += [f"Test: `{section['test']}`, recorded {section.get('recorded', '?')}{at}.", ""]
        lines += [section.get("summary_md", "").rstrip(), ""]
    return "\n".join(lines)


def commit():
    """The checkout's commit, '+' when it has uncommitted changes (the report itself aside): what
    a figure was measured on (None outside a git checkout)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/",
                                ":(exclude,top)bench/results"], cwd=here,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+" if dirty else "")


def record(name, figures, summary_md, title=None, test=None, path=None):
    """Merge one section into the report (when LITEDAV_RELIABILITY_REPORT or path is set)."""
    print(f"[reliability] {name}: {json.dumps(figures, sort_keys=True)}")
    path = path or os.environ.get(ENV)
    if not path:
        return None
    report = load(path)
    section = dict(figures)
    section["title"] = title or name
    section["test"] = test or os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    section["commit"] = commit()
    section["recorded"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section["summary_md"] = summary_md
    report[name] = section
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.splitext(path)[0] + ".md", "w") as f:
        f.write(markdown(report))
    return path
