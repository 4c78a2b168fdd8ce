"""Which structured-output form a backend asks in, and stepping down when a server refuses one.

A request with a `schema` is sent in the first form of the backend's list; a server that
answers HTTP 400 or 422 to it (it does not know the form: the llama-cpp-python server refuses
`json_schema` with 422, older servers refuse tools with 400) gets the same request once in the
next form, down to plain text ("off"). The first form that a server accepts is remembered, so
the refused ones are not tried again for the rest of the process; a refusal that names
the structured-output field drops that form at once, whatever the next form does. When even
plain text is refused, the request itself was at fault: nothing is remembered and the first
error is raised.

Explicit modes are not stepped down: a server that refuses the form the operator chose
fails the call (and the agent decides that one decision the baseline's way).

:func:`step_down` is that loop, for every backend: each passes its own attempt (one request
in one form) and builds its response from what comes back.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from agent.llm.base import STRUCTURED_MODES, LLMError, LLMRequest, StructuredMode
from agent.llm.retry import RetryPolicy, run_with_retries

__all__ = [
    "FormPicker",
    "is_form_refused",
    "mode_for",
    "parse_mode",
    "parse_modes",
    "policy_for",
    "schema_json",
    "step_down",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: the request fields a structured-output form is sent in (a refusal naming one is sure)
FORM_FIELDS = ("response_format", "tool_choice")

#: statuses with which a server says "I don't know this request field/value"
REFUSED_STATUSES = (400, 422)


def parse_mode(value: str) -> StructuredMode:
    mode = value.strip().lower() or "auto"
    for known in STRUCTURED_MODES:
        if mode == known:
            return known
    raise ValueError(
        f"structured output must be one of {', '.join(STRUCTURED_MODES)}, got {value!r}"
    )


def parse_modes(value: str) -> dict[str, StructuredMode]:
    """The structured-output setting: one mode for every model ("auto"), optionally followed
    by per-model overrides ``SPEC=MODE`` ("auto,openai:smollm2=json_object"). The default is
    under the key "". Raises ValueError on anything else."""
    modes: dict[str, StructuredMode] = {"": "auto"}
    for raw in value.split(","):
        item = raw.strip()
        if not item:
            continue
        spec, sep, mode = item.rpartition("=")
        if sep and not spec.strip():
            raise ValueError(f"structured output override {item!r} needs a model before '='")
        modes[spec.strip()] = parse_mode(mode)
    return modes


def mode_for(modes: Mapping[str, StructuredMode], spec: str) -> StructuredMode:
    return modes.get(spec.strip(), modes.get("", "auto"))


def is_form_refused(err: LLMError) -> bool:
    """The server does not know the structured-output form asked for. Most say so with 400 or
    422; the llama-cpp-python server (0.3.x) wraps its request validation error as HTTP 500
    ("1 validation error: ... 'loc': ('body', 'response_format', 'type') ...")."""
    if err.status_code in REFUSED_STATUSES:
        return True
    return (
        err.status_code == 500
        and "validation error" in err.message
        and ("response_format" in err.message or "tool_choice" in err.message)
    )


def policy_for(req: LLMRequest, policy: RetryPolicy) -> RetryPolicy:
    """The backend's policy with the request's own overrides (background calls)."""
    changes: dict[str, Any] = {}
    if req.max_attempts is not None:
        changes["max_attempts"] = req.max_attempts
    if req.timeout_s is not None:
        changes["timeout_s"] = min(req.timeout_s, policy.timeout_s)
    if req.retry_timeouts is not None:
        changes["retry_timeouts"] = req.retry_timeouts
    return dataclasses.replace(policy, **changes) if changes else policy


def schema_json(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A plain-JSON copy of ``schema`` (the SDKs want dicts; callers may hand in mappings)."""
    copied: dict[str, Any] = json.loads(json.dumps(schema))
    return copied


class FormPicker:
    """The forms one backend tries for schema'd requests, in order (shared by its calls).

    ``auto_forms`` is the backend's own order for "auto" (it always ends in "off").
    """

    def __init__(self, mode: StructuredMode, auto_forms: tuple[str, ...], name: str) -> None:
        self.mode = mode
        self.name = name
        if mode == "auto":
            forms = list(auto_forms)
            if forms[-1] != "off":
                forms.append("off")
        else:
            forms = [mode]
        self._forms = forms
        self._settled = mode != "auto"

    @property
    def forms(self) -> tuple[str, ...]:
        """What a schema'd request is tried in, first to last."""
        return tuple(self._forms)

    @property
    def current(self) -> str:
        return self._forms[0]

    def refused(self, form: str, err: LLMError) -> None:
        """The server refused ``form`` and named the structured-output field in its answer:
        drop that form for good now, not only once a later form has worked (a slow server
        might time the later form out, and each call would pay for the refusal again)."""
        if self._settled or form == "off" or form not in self._forms:
            return
        if not any(field in err.message for field in FORM_FIELDS):
            return  # a refusal for some other reason: the request itself may be at fault
        log.warning(
            "%s: the server refused structured output as %s; not asked again", self.name, form
        )
        self._forms.remove(form)

    def accepted(self, form: str) -> None:
        """``form`` worked: drop the refused ones before it for good."""
        if self._settled or form not in self._forms:
            return
        index = self._forms.index(form)
        if index > 0:
            log.warning(
                "%s: the server refused structured output as %s; using %s from now on",
                self.name,
                " and ".join(self._forms[:index]),
                form,
            )
            del self._forms[:index]
        self._settled = True


async def step_down(
    req: LLMRequest,
    picker: FormPicker,
    policy: RetryPolicy,
    label: str,
    attempt: Callable[[LLMRequest, str], Awaitable[T]],
) -> tuple[T, int, str]:
    """Send ``req`` with ``attempt(req, form)`` (retried by ``policy``) in the first form of
    ``picker`` a server accepts, stepping down on a refusal (see the module docstring); a
    request without a schema is sent once, as plain text ("off").

    Returns the answer, the attempts spent on every form tried, and the form it came in.
    When the last form fails too, raises the first refusal if that one failed for being a
    refusal (the request's form was the trouble, not the request), else the last error; its
    ``attempts`` are those spent in all."""
    forms = picker.forms if req.schema is not None else ("off",)
    first: LLMError | None = None
    spent = 0
    for i, form in enumerate(forms):
        try:
            answer, attempts = await run_with_retries(
                functools.partial(attempt, req, form), policy, label=label
            )
        except LLMError as err:
            spent += err.attempts
            if is_form_refused(err) and i + 1 < len(forms):
                picker.refused(form, err)
                first = first or err
                log.info("%s: %s refused (%s); trying %s", label, form, err, forms[i + 1])
                continue
            failed = first if first is not None and is_form_refused(err) else err
            failed.attempts = spent
            raise failed from (err if failed is not err else None)
        if req.schema is not None:
            picker.accepted(form)
        return answer, spent + attempts, form
    raise AssertionError("unreachable: forms is never empty")
