"""The fake Slack's fixtures, for the tests of the fake itself."""

from tests.fakes.slack_fixtures import (  # noqa: F401
    fake_slack,
    slack_app,
    slack_client,
    slack_signing_secret,
)
