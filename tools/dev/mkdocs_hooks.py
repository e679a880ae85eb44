"""MkDocs hooks (mkdocs.yml ``hooks:``): pages generated from the sources of truth at build time, so the site
cannot drift from them.

- ``index.md`` is the root README; ``packages/<name>.md`` is that package's README followed by its API
  reference (mkdocstrings renders ``__all__`` from the docstrings);
- ``report-format.md`` is a field table walked from ``robustsuite/report/schema.json``.

README links are rewritten to the site's pages (``packages/certcal/README.md`` -> ``packages/certcal.md``,
``docs/x.md`` -> ``x.md``); any other relative link is kept, so a broken one fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "packages/robustsuite/src/robustsuite/report/schema.json"
BY_SUBMODULE = {"robustsuite_common"}  # its API reference lists every public submodule
LINK = re.compile(r"(?<=\]\()(?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?(?=\))")

# what each report field means (the schema holds the structure; a field missing here is listed with "–")
FIELD_DOCS = {
    "schema_version": "version of this format; a reader migrates older reports (`robustsuite.report.migrate`)",
    "warnings": "every section's warnings, gathered at the top so a reader sees them first",
    "run": "provenance: run id, times, seed(s), device, the config as run, package versions, `uv.lock` hash, "
           "git commit, command line, platform",
    "units": "one entry per unit of work (model × method × data shard): status, timing, its result file",
    "verdicts": "one verdict per audited model (`robustsuite audit`): supported / supported-with-caveats / "
                "not-supported / inconclusive, with the checks behind it",
    "sections": "one section per method (and one overview per model), keyed by name",
    "sections.*.metrics": "named numbers: `value`, `label`, `unit`, and an `interval` (`low`, `high`, `level`, "
                          "`method`) where one is estimated",
    "sections.*.tables": "named tables: `columns` and `rows`; a column `X` with an interval has `X_ci_low` and "
                         "`X_ci_high` beside it",
    "sections.*.summary": "what the section's own numbers show, written from them",
    "sections.*.figures": "figure files under `figures/<method>/`",
    "sections.*.model_at_chance": "the model's clean score is not separated from chance: attack numbers are not "
                                  "findings",
    "sections.*.paper": "the paper the method reproduces",
    "sections.*.samples": "per-sample record files beside the report (`samples/<unit>.parquet` or `.jsonl`)",
}


def _rewrite_links(text: str, page: str, source: str) -> str:
    """Links of a README at repository path ``source`` rewritten for the site page ``page``."""
    base = posixpath.dirname(source)
    page_dir = posixpath.dirname(page)

    def sub(m: re.Match) -> str:
        target, anchor = m["target"], m["anchor"] or ""
        if re.match(r"^[a-z]+:", target) or target.startswith("/"):
            return m.group(0)
        path = posixpath.normpath(posixpath.join(base, target))
        if path == "README.md":
            site = "index.md"
        elif m2 := re.fullmatch(r"packages/([\w-]+)(?:/README\.md)?/?", path):
            site = f"packages/{m2[1]}.md"
        elif path.startswith("docs/"):
            site = path[len("docs/"):]
        else:
            return m.group(0)  # left as written: mkdocs --strict fails if it does not resolve
        return posixpath.relpath(site, page_dir or ".") + anchor

    return LINK.sub(sub, text)


def _lazy_exports(init: Path) -> dict[str, list[str]] | None:
    """A package whose ``__init__`` exports names lazily (``_EXPORTS = {name: module}``, as robustsuite does so
    that importing it stays light): its names grouped by the module that defines them."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            groups: dict[str, list[str]] = {}
            for name, module in ast.literal_eval(node.value).items():
                full = module if module.startswith("robustsuite_common") else f"{init.parent.name}.{module}"
                groups.setdefault(full, []).append(name)
            return groups
    return None


def _package_page(readme: Path) -> str:
    name = readme.parent.name
    init = next((readme.parent / "src").glob("*/__init__.py"))
    src = init.parent.name
    text = _rewrite_links(readme.read_text(encoding="utf-8"), f"packages/{name}.md",
                          f"packages/{name}/README.md")
    groups = _lazy_exports(init)
    if src in BY_SUBMODULE:  # a toolkit whose names live in its submodules
        subs = sorted(f.stem for f in init.parent.glob("*.py") if not f.stem.startswith("_"))
        api = "".join(f"::: {src}.{sub}\n    options:\n      show_root_heading: true\n\n" for sub in subs)
    elif groups is None:
        api = f"::: {src}\n"
    else:
        api = "".join(f"::: {module}\n    options:\n      members: [{', '.join(sorted(names))}]\n"
                      f"      show_root_heading: true\n\n" for module, names in sorted(groups.items()))
    return f"{text}\n\n## API reference\n\nEvery public name of `{src}` (its `__all__`), from the docstrings.\n\n{api}"


def _schema_rows(node: dict, path: str, required: bool, rows: list) -> None:
    kind = node.get("type") or ("enum: " + ", ".join(map(str, node["enum"])) if "enum" in node else
                                f"const {node['const']}" if "const" in node else "any")
    kind = " or ".join(kind) if isinstance(kind, list) else kind
    doc = FIELD_DOCS.get(path, "–")
    rows.append(f"| `{path}` | {kind} | {'yes' if required else 'no'} | {doc} |")
    req = set(node.get("required", ()))
    for key, child in node.get("properties", {}).items():
        _schema_rows(child, f"{path}.{key}" if path else key, key in req, rows)
    if isinstance(node.get("additionalProperties"), dict):
        _schema_rows(node["additionalProperties"], f"{path}.*", True, rows)
    if isinstance(node.get("items"), dict) and node["items"].get("properties"):
        for key, child in node["items"]["properties"].items():
            _schema_rows(child, f"{path}[].{key}", key in set(node["items"].get("required", ())), rows)


def report_format_page(schema: dict) -> str:
    rows: list[str] = []
    req = set(schema.get("required", ()))
    for key, child in schema["properties"].items():
        _schema_rows(child, key, key in req, rows)
    version = schema["properties"]["schema_version"].get("const", "?")
    return (f"# Report format\n\nEvery run writes `report.json` (schema version {version}), the source of truth; "
            "`report.md` and `report.html` are renderings of it, and per-sample records lie beside it. "
            "This table is generated from `robustsuite/report/schema.json` when the site is built "
            "(`robustsuite.report.validate` checks a report against the same file).\n\n"
            "| field | type | required | meaning |\n| --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")


def on_files(files, config):  # noqa: ANN001 (mkdocs hook signature)
    def add(uri: str, content: str) -> None:
        files.append(File.generated(config, uri, content=content))

    add("index.md", _rewrite_links((ROOT / "README.md").read_text(encoding="utf-8"), "index.md", "README.md"))
    for readme in sorted(ROOT.glob("packages/*/README.md")):
        add(f"packages/{readme.parent.name}.md", _package_page(readme))
    add("report-format.md", report_format_page(json.loads(SCHEMA.read_text(encoding="utf-8"))))
    return files
