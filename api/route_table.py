"""A fact about each route, read once from the app, and the request's route found the router's
way: the first route, in the router's order, that matches both the path and the method.

The request guard asks it before the router runs (does this route need a key, which body cap
applies), so the answer must be the route the router will pick.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from fastapi import FastAPI
from fastapi.routing import RouteContext, iter_route_contexts
from starlette.types import Scope

__all__ = ["RouteTable", "route_path"]

T = TypeVar("T")


@dataclass(frozen=True)
class _Rule(Generic[T]):
    path: re.Pattern[str]
    methods: frozenset[str] | None  # None: every method (a mount)
    value: T


class RouteTable(Generic[T]):
    """`fact(context)` for every route of `app`, looked up by request."""

    def __init__(self, app: FastAPI, fact: Callable[[RouteContext], T]) -> None:
        self._rules = [
            _Rule(
                path=context.path_regex,
                methods=frozenset(context.methods) if context.methods is not None else None,
                value=fact(context),
            )
            for context in iter_route_contexts(app.routes)
        ]

    def lookup(self, scope: Scope, default: T) -> T:
        """The fact of the route the HTTP request of `scope` goes to; `default` if none takes it."""
        path = route_path(scope)
        method = scope["method"]
        for rule in self._rules:
            if (rule.methods is None or method in rule.methods) and rule.path.match(path):
                return rule.value
        return default


def route_path(scope: Scope) -> str:
    """The path the routes see: without the prefix a proxy mounts the app under (root_path)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path
