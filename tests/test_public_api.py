"""What orcmem promises importers: a version that matches the installed package, and one family of errors."""

import inspect
from importlib.metadata import version

import orcmem
from orcmem.models import errors


def test_the_version_is_the_installed_one() -> None:
    assert orcmem.__version__ == version("orcmem")


def test_every_error_is_an_orcmem_error() -> None:
    raised = [cls for _name, cls in inspect.getmembers(errors, inspect.isclass) if issubclass(cls, Exception)]
    assert len(raised) >= 8
    assert all(issubclass(cls, errors.OrcmemError) for cls in raised)
