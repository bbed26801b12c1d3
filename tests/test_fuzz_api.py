"""Schema fuzzing of every API operation against a real server (schemathesis): no input makes
lore answer 5xx, and every answer matches the OpenAPI document (status codes, content types,
bodies). A fixed seed (derandomized Hypothesis) and a bounded number of cases per operation keep
it the same run every time. The server embeds with the deterministic hash embedder (a fake:
fuzzing checks shapes and failures, not relevance), with a rate limit no fuzz run reaches."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks
from schemathesis.checks import CheckContext
from schemathesis.core.transport import Response

from api import Lore, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from tests.conftest import make_settings

pytestmark = pytest.mark.slow

CASES = 40  # per operation, of valid and of invalid requests each
# What lore's answers must satisfy. Not checked: that every schema-valid request is accepted
# (lore validates beyond JSON Schema: an absolute http(s) URL, a domain the key may read, a
# document that exists; those answer a 4xx naming the field, which the checks here do check
# against the schema) nor that every invalid one is refused in the generator's sense.
FETCHES_ITS_URL = {"POST /knowledge/convert"}  # answers at once with what the URL gave


@schemathesis.check
def not_lores_server_error(ctx: CheckContext, response: Response, case: schemathesis.Case) -> None:
    """No 5xx, but for an operation that fetches the URL it is given at once: that URL not
    answering (here: no network to resolve the API's own examples) is `502 fetch_failed`, the
    documented answer, not a failure of lore's."""
    if case.operation.label in FETCHES_ITS_URL and response.status_code == 502:
        assert response.json()["error"] == "fetch_failed", response.text
        return
    checks.not_a_server_error(ctx, response, case)


# uvicorn's HTTP parser refuses a request it cannot read (here: a query string of 73 kB of
# 4-byte characters) before lore sees it, with its own plain-text 400.
REFUSED_BY_THE_HTTP_SERVER = b"Invalid HTTP request received."


@schemathesis.check
def content_type_of_lores_answers(
    ctx: CheckContext, response: Response, case: schemathesis.Case
) -> None:
    """Every answer of lore's is JSON as documented; the HTTP server's own refusal of a request
    it could not parse is not lore's answer."""
    if response.status_code == 400 and response.content == REFUSED_BY_THE_HTTP_SERVER:
        return
    checks.content_type_conformance(ctx, response, case)


CHECKS = [
    not_lores_server_error,
    checks.status_code_conformance,
    content_type_of_lores_answers,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.ignored_auth,
]


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    data: Path = tmp_path_factory.mktemp("fuzz")
    config = make_settings(
        data,
        embedding={"backend": "hash"},
        auth={"rate_limit_per_minute": 10**6},
        crawl={"webhook_attempts": 1},
        fetch={"allow_private_addresses": False, "timeout_s": 2.0},
    )
    lore = Lore(config)
    # an admin key: /admin's operations answer, not only their 403
    key, _ = Authenticator(lore.catalog, 10**6).create_key(
        config.tenant, "fuzz", rate_limit=10**6, admin=True
    )
    url, running = serve_in_thread(create_app(config, lore=lore))
    yield url, key
    running.should_exit = True
    lore.close()


def test_no_input_makes_lore_fail_or_break_its_schema(fuzz_server: tuple[str, str]) -> None:
    url, key = fuzz_server
    auth = {"Authorization": f"Bearer {key}"}
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    failures = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 17
    for operation, mode in itertools.product(operations, GenerationMode):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=CASES,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=auth, checks=CHECKS)

        try:
            check()
        except Unsatisfiable:  # nothing about it can be invalid (no parameters, no body)
            assert mode is GenerationMode.NEGATIVE, operation.label
        except BaseExceptionGroup as found:  # schemathesis's FailureGroup
            failures.append(f"{operation.label} ({mode.value} cases): {found}")
    assert not failures, "\n\n".join(failures)


STATEFUL_SCENARIOS = 30  # each a chain of up to STATEFUL_STEPS calls
STATEFUL_STEPS = 6


def test_chains_of_calls_keep_lore_whole(fuzz_server: tuple[str, str]) -> None:
    """Stateful fuzzing: schemathesis chains calls along the links it finds between operations
    (a queued job's id into GET, cancel and its URL list; a skill's into its outcome and
    delete; a schedule's, a document's, a key's, a tenant's), with the same checks on every
    answer of the chain."""
    url, key = fuzz_server
    auth = {"Authorization": f"Bearer {key}"}
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    machine = schema.as_state_machine()
    links = [name for name in dir(machine) if "__" in name and name.split("_")[0].isupper()]
    assert len(links) >= 20, links  # index-link -> job, skills -> outcome, schedules, admin ...

    class Chains(machine):  # type: ignore[valid-type,misc]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, object]:
            return {"headers": auth}

        def validate_response(
            self, response: Response, case: schemathesis.Case, *args: object, **kwargs: object
        ) -> None:
            case.validate_response(response, checks=CHECKS, headers=auth)

    Chains.run(
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )
