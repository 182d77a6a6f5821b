"""Every docstring of the API reference is valid reStructuredText once numpydoc has
rendered it, as ``bash scripts/docs`` (warnings are errors) needs.

The documentation build renders each public module, class, function, method and property
with numpydoc and hands the result to docutils. A slip there, such as a type
``ndarray of shape (m, n_features_in_)`` (docutils reads ``n_features_in_`` as a link to a
target ``n_features_in`` that does not exist), fails the build. This module does the same
rendering without Sphinx: numpydoc's ``get_doc_object`` with the settings of
``docs/conf.py``, then docutils with Sphinx's roles and directives replaced by generic
ones (their contents are still parsed), and fails on every docutils message of level
WARNING or above. CI also builds the whole site (``scripts/test``'s docs step).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import re
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape_sphinx")
docutils_core = pytest.importorskip("docutils.core")
from docutils import nodes  # noqa: E402
from docutils.parsers.rst import Directive, directives, roles  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The numpydoc settings of docs/conf.py (numpydoc_show_class_members = False, ...).
NUMPYDOC_CONFIG = {
    "show_class_members": False,
    "class_members_toctree": False,
    "xref_param_type": False,
}
ROLE = re.compile(r":([A-Za-z][\w.+:-]*):`")
DIRECTIVE = re.compile(r"^\s*\.\. ([A-Za-z][\w:-]*)::", re.M)


def api_modules() -> list[str]:
    """The modules of the API reference: ``API_MODULES`` of ``docs/conf.py`` (read from the
    file, since importing the configuration writes the generated pages)."""
    tree = ast.parse((ROOT / "docs" / "conf.py").read_text())
    for node in tree.body:
        target = getattr(node, "target", None)
        if isinstance(node, ast.AnnAssign) and getattr(target, "id", "") == "API_MODULES":
            assert node.value is not None
            return [name for name, _ in ast.literal_eval(node.value)]
    raise AssertionError("docs/conf.py has no API_MODULES")


def _public_names(module: Any) -> list[str]:
    """As ``public_names`` in docs/conf.py: ``__all__``, else the module's own public
    classes and functions."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, obj in vars(module).items()
            if not name.startswith("_")
            and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", "").startswith(module.__name__)
        ]
    return list(names)


def documented_objects() -> dict[str, tuple[Any, str]]:
    """Everything the API reference renders with numpydoc, by qualified name: each API
    module's docstring, its public classes and functions, and the public methods and
    properties the classes define in mvkernels (``autodoc`` with ``members``)."""
    found: dict[str, tuple[Any, str]] = {}
    for modname in api_modules():
        module = importlib.import_module(modname)
        found[modname] = (module, "module")
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", (obj, "class"))
                for cls in obj.__mro__:
                    if not cls.__module__.startswith("mvkernels"):
                        continue
                    for attr, member in vars(cls).items():
                        if attr.startswith("_") or not member.__doc__:
                            continue
                        if isinstance(member, property) or inspect.isfunction(member):
                            key = f"{obj.__module__}.{obj.__qualname__}.{attr}"
                            found.setdefault(key, (getattr(obj, attr), "method"))
            elif inspect.isfunction(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", (obj, "function"))
    return found


class _GenericDirective(Directive):
    """Stands in for a Sphinx directive: any arguments and options; the content is parsed."""

    has_content = True
    optional_arguments = 20
    final_argument_whitespace = True
    option_spec = defaultdict(lambda: directives.unchanged)

    def run(self) -> list[nodes.Node]:
        node = nodes.container()
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def _generic_role(name, rawtext, text, lineno, inliner, options=None, content=None):  # noqa: ARG001
    return [nodes.literal(rawtext, text)], []


def rendered(obj: Any, what: str) -> str:
    """The reStructuredText that numpydoc makes of ``obj``'s docstring for the docs."""
    doc = inspect.getdoc(obj) or ""
    with warnings.catch_warnings():
        # "Unknown section ...": the module docstrings' own sections (e.g. "Precomputed
        # kernels and cross-validation"), which numpydoc keeps as they are
        warnings.filterwarnings("ignore", "Unknown section", UserWarning)
        if what == "module" or isinstance(obj, property):
            return str(numpydoc_docscrape.SphinxDocString(doc, config=NUMPYDOC_CONFIG))
        return str(
            numpydoc_docscrape.get_doc_object(obj, what=what, doc=doc, config=NUMPYDOC_CONFIG)
        )


def rst_problems(text: str) -> list[str]:
    """docutils' messages of level WARNING (2) or above on ``text``, Sphinx's roles and
    directives (those docutils does not know) parsed as generic ones."""
    for name in set(ROLE.findall(text)):
        roles.register_local_role(name, _generic_role)
    for name in set(DIRECTIVE.findall(text)):
        known = name in directives._directive_registry or name in directives._directives
        if not known:
            directives.register_directive(name, _GenericDirective)
    stream = io.StringIO()
    docutils_core.publish_doctree(
        text,
        settings_overrides={
            "warning_stream": stream,
            "report_level": 2,
            "halt_level": 5,
            "file_insertion_enabled": False,
            "raw_enabled": False,
        },
    )
    return [line for line in stream.getvalue().splitlines() if "(" in line]


OBJECTS = documented_objects()


def test_objects_are_collected():
    """Modules, estimators, functions and methods are all among the checked docstrings."""
    assert "mvkernels.kernels" in OBJECTS
    names = set(OBJECTS)
    assert "mvkernels.olok._estimators.OLOKRegressor" in names
    assert "mvkernels.olok._estimators.OLOKRegressor.partial_fit" in names
    assert any(k.endswith(".make_view_kernels") for k in names)
    assert {what for _, what in OBJECTS.values()} == {"module", "class", "function", "method"}


def test_validation_catches_a_link_reference_in_a_type():
    """The docstring that broke the build (OLOKRegressor before 0293960) is caught, and
    its fixed form passes."""

    class Broken:
        """An estimator.

        Attributes
        ----------
        support_vectors_ : ndarray of shape (m, n_features_in_)
            Inputs of the live coefficients.
        n_features_in_, n_outputs_ : int
        """

    class Fixed:
        """An estimator.

        Attributes
        ----------
        support_vectors_ : ndarray of shape (m, n_features)
            Inputs of the live coefficients.
        n_features_in_ : int
            Number of input features.
        n_outputs_ : int
            Number of outputs.

        See Also
        --------
        OLOKRegressor : Sphinx roles are rendered, and pass.
        """

    problems = rst_problems(rendered(Broken, "class"))
    assert any('Unknown target name: "n_features_in"' in p for p in problems), problems
    assert rst_problems(rendered(Fixed, "class")) == []


def test_validation_catches_other_markup_errors():
    """Unbalanced inline markup and a broken indentation are caught too."""
    assert rst_problems("A ``literal that never ends.\n")
    assert rst_problems("Text.\n\n    quoted\n  unindented\n")
    assert rst_problems("See :class:`mvkernels.ViewKernel` and ``code``.\n") == []


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_docstring_renders_without_docutils_warnings(name: str):
    obj, what = OBJECTS[name]
    problems = rst_problems(rendered(obj, what))
    assert not problems, f"{name}: " + "; ".join(problems)
