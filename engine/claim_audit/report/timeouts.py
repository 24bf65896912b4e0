"""pytest-timeout's `signal` method, safe between a test's phases: an alarm landing there (it
would end the xdist worker with an INTERNALERROR) is held for the test's next setup or call."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import Any

import pytest

_TIMEOUT_HANDLER = pytest.StashKey[Callable[[int, FrameType | None], Any]]()
_IN_PHASE = pytest.StashKey[bool]()
_OVERDUE = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, optionalhook=True)  # pytest-timeout's hook
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Generator[None, Any, Any]:
    """Put `_alarm` in front of the handler pytest-timeout has just installed."""
    armed = yield
    handler = signal.getsignal(signal.SIGALRM)
    if threading.current_thread() is threading.main_thread() and callable(handler):
        item.stash[_TIMEOUT_HANDLER] = handler
        item.stash[_OVERDUE] = False
        signal.signal(signal.SIGALRM, lambda signum, frame: _alarm(item, signum, frame))
    return armed


def _alarm(item: pytest.Item, signum: int, frame: FrameType | None) -> None:
    if item.stash.get(_IN_PHASE, False):
        item.stash[_TIMEOUT_HANDLER](signum, frame)  # raises pytest-timeout's failure
    else:
        item.stash[_OVERDUE] = True


@pytest.hookimpl(wrapper=True, tryfirst=True)
def _phase(item: pytest.Item, *, teardown: bool = False) -> Generator[None, Any, Any]:
    if item.stash.get(_OVERDUE, False) and not teardown:
        item.stash[_OVERDUE] = False
        item.stash[_TIMEOUT_HANDLER](signal.SIGALRM, None)
    item.stash[_IN_PHASE] = True
    try:
        return (yield)
    finally:
        item.stash[_IN_PHASE] = False


pytest_runtest_setup = pytest_runtest_call = _phase  # pluggy passes `item` alone


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _phase(item, teardown=True))
