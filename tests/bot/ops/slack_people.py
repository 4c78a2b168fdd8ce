"""Five people playing Mafia on the fake Slack, through its Socket Mode connection."""

from __future__ import annotations

from tests.fakes.slack import FakeChannel, FakeSlack, FakeUser

LONG = "day=3600 vote=3600 night=3600 night_vote=3600"


class People:
    """Five people in a channel, playing through the fake Slack's Socket Mode."""

    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.users = [fake.add_user(n, is_admin=i == 0) for i, n in enumerate(NAMES)]
        self.channel: FakeChannel = fake.add_channel("mafia-night", members=self.users)

    async def slash(self, user: FakeUser, text: str) -> str:
        before = len(self.fake.responses)
        result = await self.fake.slash(self.fake.socket, user=user, channel=self.channel, text=text)
        assert result.acked, result
        return (await self.fake.wait_for_responses(before + 1, within=15))[before].text

    async def play(self) -> str:
        """A started game of the five and the agent; every role card delivered."""
        reply = await self.slash(self.users[0], f"new {LONG}")
        assert "is open" in reply, reply
        game_id = reply.split("`")[1]
        for u in self.users:
            before = len(self.fake.responses)
            await self.fake.click(
                self.fake.socket, user=u, action_id="mafia_join", channel=self.channel
            )
            await self.fake.wait_for_responses(before + 1, within=15)
        assert "has started" in await self.slash(self.users[0], "start")
        for u in self.users:
            await self.fake.wait_until(
                lambda u=u: any("You are" in t for t in self.dm_texts(u)),  # type: ignore[misc]
                15,
                "role card",
            )
        return game_id

    def dm_texts(self, user: FakeUser) -> list[str]:
        return [m.text for m in self.fake.messages_in(self.fake.dm(user)) if m.source != "user"]

    async def say(self, user: FakeUser, text: str) -> None:
        await self.fake.message_event(self.fake.socket, user=user, text=text)

    def typed_offline(self, user: FakeUser, text: str) -> None:
        self.fake.builder.user_message(
            event_type="message", user=user, text=text, channel=None, thread_ts=None
        )

    def stage_lines(self) -> list[str]:
        return [m.text for m in self.fake.messages_in(self.channel) if m.username]

    async def wait_line(self, text: str, within: float = 15) -> None:
        await self.fake.wait_until(lambda: text in self.stage_lines(), within, repr(text))


NAMES = ("alice", "bob", "carol", "dave", "erin")
