"""Sphinx configuration of the mvkernels documentation.

The source folder is ``docs/``: the user-guide pages are the Markdown files already there
(read by MyST-parser), the API reference is generated from the NumPy-style docstrings
(autodoc + numpydoc; the list of names comes from each public module, see
``_write_api_pages``), and the gallery is ``examples/``, executed at build time by
sphinx-gallery. Build with ``bash scripts/docs`` (warnings are errors).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import mvkernels  # noqa: E402

project = "mvkernels"
author = "the mvkernels developers"
copyright = "2026, the mvkernels developers"
release = mvkernels.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
    "_generated/*_toc.md",  # included by index.md and api.md
]

# ---------------------------------------------------------------------------- MyST
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The user guide's Markdown files link to repository files outside docs/ (benchmarks,
# tests, sources) with relative paths, which are right on GitHub but are not documents of
# the site; they are rendered as plain links.
suppress_warnings = ["myst.xref_missing"]

# ---------------------------------------------------------------------------- autodoc
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_typehints = "none"  # numpydoc renders the types from the docstrings
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# The build runs offline as well: intersphinx inventories that cannot be fetched are
# skipped (links to those projects are then plain text).
if os.environ.get("MVKERNELS_DOCS_OFFLINE", "1") == "1":
    intersphinx_mapping = {}

# ---------------------------------------------------------------------------- gallery
# Examples to leave out (a regular expression on their paths), e.g.
# MVKERNELS_GALLERY_IGNORE="plot_dask" to build without Dask installed.
_gallery_ignore = [p for p in [os.environ.get("MVKERNELS_GALLERY_IGNORE", "")] if p]
# The cross-validated MVML estimators are newer than some checkouts of this file: their
# example is built as soon as ``mvkernels.MVMLClassifierCV`` exists.
if not hasattr(mvkernels, "MVMLClassifierCV"):
    _gallery_ignore.append(r"plot_mvml_cv\.py")
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    "filename_pattern": r"/plot_",
    "ignore_pattern": "|".join([r"__init__\.py", *_gallery_ignore]),
    "download_all_examples": False,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "plot_gallery": "True",
    "doc_module": ("mvkernels",),
    "backreferences_dir": str(HERE / "_generated" / "backreferences"),
    "reference_url": {"mvkernels": None},
}

# ---------------------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"mvkernels {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
templates_path = ["_templates"]


# ---------------------------------------------------------------------------- API pages
#: Public modules documented in the API reference, with a one-line title each.
API_MODULES: list[tuple[str, str]] = [
    ("mvkernels", "Top-level estimators and helpers"),
    ("mvkernels.mvml", "MVML: multi-view metric learning"),
    ("mvkernels.olok", "OLOK and vv-RLS"),
    ("mvkernels.operator_kernels", "Operator-valued kernels"),
    ("mvkernels.rkm", "Multi-view RKM / kernel PCA"),
    ("mvkernels.stiefel", "Optimisation on the Stiefel manifold"),
    ("mvkernels.baselines", "Baselines"),
    ("mvkernels.kernels", "Scalar kernels per view"),
    ("mvkernels.nystrom", "Block Nystrom features and sufficient statistics"),
    ("mvkernels.datasets", "Data sets"),
    ("mvkernels.reproduce", "Paper reproductions"),
]


def public_names(module_name: str) -> list[str]:
    """The documented names of a module: its ``__all__``, else what it defines publicly."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, obj in vars(module).items()
            if not name.startswith("_")
            and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", "").startswith(module_name)
        ]
    return sorted(names, key=lambda n: (not n[:1].isupper(), n.lower()))


def _write_api_pages() -> None:
    """Write ``docs/_generated/api_*.rst`` (git-ignored): one autosummary table per module.

    Generated at every build from the modules themselves, so a new public name appears in
    the reference without editing the docs. A name exported by a package and defined in a
    submodule is documented where it is exported first (top level before subpackage).
    """
    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    seen: set[int] = set()
    for module_name, title in API_MODULES:
        module = importlib.import_module(module_name)
        rows = []
        for name in public_names(module_name):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or callable(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            rows.append(name)
        slug = module_name.replace(".", "_")
        lines = [
            title,
            "=" * len(title),
            "",
            f".. automodule:: {module_name}",
            "   :no-members:",
            "",
            f".. currentmodule:: {module_name}",
            "",
        ]
        if rows:
            lines += [".. autosummary::", "   :toctree: .", "   :nosignatures:", ""]
            lines += [f"   {name}" for name in rows]
        else:
            lines += ["Everything public here is re-exported by :mod:`mvkernels` above."]
        text = "\n".join(lines) + "\n"
        _write_if_changed(out / f"api_{slug}.rst", text)
    _write_if_changed(
        out / "api_toc.md",
        "\n".join(
            ["```{toctree}", ":maxdepth: 1", ""]
            + [f"/_generated/api_{m.replace('.', '_')}" for m, _ in API_MODULES]
            + ["```"]
        )
        + "\n",
    )


#: User-guide pages in reading order; any other ``docs/*.md`` page is appended after them,
#: so a new page is on the site without editing this list.
GUIDE_PAGES = [
    "kernels",
    "mvml",
    "mvml_svm",
    "olok",
    "rkm",
    "baselines",
    "dask",
    "incomplete_views",
    "datasets",
    "errors",
    "reproduce",
    "method_reference",
]
NOT_GUIDE = {"index", "install", "api"}


def _write_guide_toc() -> None:
    """Write ``docs/_generated/guide_toc.md``: the user guide's toctree (pages that exist)."""
    present = {p.stem for p in HERE.glob("*.md")} - NOT_GUIDE
    pages = [p for p in GUIDE_PAGES if p in present] + sorted(present - set(GUIDE_PAGES))
    _write_if_changed(
        HERE / "_generated" / "guide_toc.md",
        "\n".join(
            ["```{toctree}", ":maxdepth: 1", ":caption: User guide", ""]
            + [f"/{p}" for p in pages]
            + ["```"]
        )
        + "\n",
    )


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _skip_member(app, what, name, obj, skip, options):  # noqa: ARG001
    """Leave out scikit-learn's generated metadata-routing methods (``set_*_request``)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):  # noqa: D103
    app.connect("autodoc-skip-member", _skip_member)


_write_api_pages()
_write_guide_toc()
