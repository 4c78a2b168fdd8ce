from tests.fakes.discord_fixtures import fake_discord  # noqa: F401
